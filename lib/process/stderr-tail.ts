/**
 * Keeps the last `limit` bytes of a stream, counting what was dropped, in O(limit) memory.
 */
export class StderrTail {
  readonly #limit: number;
  #chunks: Buffer[] = [];
  #kept = 0;
  #dropped = 0;

  constructor(limit: number) {
    this.#limit = limit;
  }

  push(chunk: Buffer): void {
    if (this.#limit === 0) {
      this.#dropped += chunk.length;
      return;
    }
    if (chunk.length >= this.#limit) {
      this.#dropped += this.#kept + chunk.length - this.#limit;
      this.#chunks = [Buffer.from(chunk.subarray(chunk.length - this.#limit))];
      this.#kept = this.#limit;
      return;
    }
    this.#chunks.push(chunk);
    this.#kept += chunk.length;
    while (this.#kept > this.#limit) {
      const first = this.#chunks[0];
      if (first === undefined) break;
      const excess = this.#kept - this.#limit;
      if (first.length <= excess) {
        this.#chunks.shift();
        this.#kept -= first.length;
        this.#dropped += first.length;
      } else {
        this.#chunks[0] = first.subarray(excess);
        this.#kept -= excess;
        this.#dropped += excess;
      }
    }
  }

  /** Bytes dropped from the start to keep the tail bounded. */
  get droppedBytes(): number {
    return this.#dropped;
  }

  /** The kept tail, decoded; a character cut in half at the start is skipped. */
  text(): string {
    let tail = Buffer.concat(this.#chunks, this.#kept);
    if (this.#dropped > 0) {
      let skip = 0;
      // UTF-8 continuation bytes look like 0b10xxxxxx; skip at most three of them.
      while (skip < 3 && skip < tail.length && ((tail[skip] ?? 0) & 0xc0) === 0x80) skip += 1;
      tail = tail.subarray(skip);
    }
    return tail.toString('utf8');
  }
}
