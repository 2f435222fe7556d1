/**
 * Handles inputs one at a time, each with all its effects, in the order they came: an input pushed
 * while one is being handled (an effect made the subscriber send a command at once, or made the
 * protocol report a fact) waits until that one is done. A handler that throws ends the drain: the
 * throw goes to the caller of the outermost `push`, and the inputs still waiting are dropped (the
 * session is over).
 */
export class InputQueue<T> {
  readonly #handle: (input: T) => void;
  readonly #waiting: T[] = [];
  #draining = false;

  constructor(handle: (input: T) => void) {
    this.#handle = handle;
  }

  push(input: T): void {
    this.#waiting.push(input);
    if (this.#draining) return;
    this.#draining = true;
    try {
      for (let next = this.#waiting.shift(); next !== undefined; next = this.#waiting.shift()) this.#handle(next);
    } catch (error: unknown) {
      this.#waiting.length = 0;
      throw error;
    } finally {
      this.#draining = false;
    }
  }
}
