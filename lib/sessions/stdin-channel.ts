import { Observable, type Subscriber } from 'rxjs';

/**
 * The lines a session writes to its agent, as the Observable the process layer feeds to stdin.
 * Lines written before the process subscribes (its spawn may wait for a later event-loop turn)
 * are held until it does, then the channel is live: nothing is kept once written.
 */
export class StdinChannel {
  #pending: string[] = [];
  #subscriber: Subscriber<string> | null = null;
  #ended = false;

  readonly stream = new Observable<string>((subscriber) => {
    this.#subscriber = subscriber;
    const pending = this.#pending;
    this.#pending = [];
    for (const line of pending) subscriber.next(line);
    if (this.#ended) subscriber.complete();
    return () => {
      this.#subscriber = null;
    };
  });

  /** Whether the input was ended: nothing more is written. */
  get ended(): boolean {
    return this.#ended;
  }

  write(line: string): void {
    if (this.#ended) return;
    if (this.#subscriber === null) this.#pending.push(line);
    else this.#subscriber.next(line);
  }

  /** Closes the agent's stdin (once what was written is out). */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#subscriber?.complete();
  }
}
