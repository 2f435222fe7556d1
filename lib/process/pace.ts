/** Reads of /proc files between two turns of the event loop, and at most this long: about a millisecond. */
const PACE_READS = 64;
const PACE_MS = 1;

/** Paces a long run of synchronous reads: `due()` says when to let the event loop run (`nextTurn()`). */
export class Pace {
  #reads = 0;
  #since = performance.now();

  due(): boolean {
    this.#reads += 1;
    if (this.#reads < PACE_READS && performance.now() - this.#since < PACE_MS) return false;
    this.#reads = 0;
    this.#since = performance.now();
    return true;
  }
}

/** Resolves in a later turn of the event loop, after the I/O that waits in this one. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
