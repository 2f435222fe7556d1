import { expect } from '@jest/globals';
import type { Observable } from 'rxjs';
import type { EventLike, EventSourceConstructor, EventSourceLike } from '../../lib/browser.js';

/** A stand-in for the browser's EventSource: the test opens it, sends events and errors by hand. */
export class FakeEventSource implements EventSourceLike {
  readyState = 0;
  closeCalls = 0;
  readonly #listeners = new Map<string, Set<(event: EventLike) => void>>();

  constructor(
    readonly url: string,
    readonly init?: { withCredentials?: boolean },
  ) {}

  addEventListener(type: string, listener: (event: EventLike) => void): void {
    const listeners = this.#listeners.get(type) ?? new Set();
    listeners.add(listener);
    this.#listeners.set(type, listeners);
  }

  removeEventListener(type: string, listener: (event: EventLike) => void): void {
    this.#listeners.get(type)?.delete(listener);
  }

  close(): void {
    this.closeCalls += 1;
    this.readyState = 2;
  }

  /** How many listeners are still attached, over all event types. */
  listenerCount(): number {
    let count = 0;
    for (const listeners of this.#listeners.values()) count += listeners.size;
    return count;
  }

  open(): void {
    this.readyState = 1;
    this.#dispatch('open', {});
  }

  /** A `message` event with this data; an object is sent as JSON. */
  send(data: unknown): void {
    this.#dispatch('message', { data: typeof data === 'string' ? data : JSON.stringify(data) });
  }

  /** A named event (`event: <type>` on the wire) with this data; an object is sent as JSON. */
  sendEvent(type: string, data: unknown): void {
    this.#dispatch(type, { data: typeof data === 'string' ? data : JSON.stringify(data) });
  }

  /** An `error` event; `reconnecting` as a browser does after a lost connection, else closed for good. */
  fail(reconnecting: boolean): void {
    this.readyState = reconnecting ? 0 : 2;
    this.#dispatch('error', {});
  }

  #dispatch(type: string, event: EventLike): void {
    // A closed EventSource dispatches nothing, as in a browser.
    if (this.readyState === 2 && type !== 'error') return;
    for (const listener of [...(this.#listeners.get(type) ?? [])]) listener(event);
  }
}

/** A constructor that records every EventSource it makes, fresh for each test. */
export function fakeEventSources(): { readonly EventSource: EventSourceConstructor; readonly made: FakeEventSource[] } {
  const made: FakeEventSource[] = [];
  class Recorded extends FakeEventSource {
    constructor(url: string, init?: { withCredentials?: boolean }) {
      super(url, init);
      made.push(this);
    }
  }
  return { EventSource: Recorded, made };
}

/** What a subscriber saw of an Observable so far. */
export interface Seen<T> {
  readonly messages: T[];
  completed: boolean;
  error: unknown;
}

/** Subscribes to `source` and records what it emits, until `unsubscribe()`. */
export function watch<T>(source: Observable<T>): Seen<T> & { unsubscribe(): void } {
  const seen: Seen<T> = { messages: [], completed: false, error: undefined };
  const subscription = source.subscribe({
    next: (message) => seen.messages.push(message),
    complete: () => (seen.completed = true),
    error: (error: unknown) => (seen.error = error),
  });
  return Object.assign(seen, {
    unsubscribe: () => {
      subscription.unsubscribe();
    },
  });
}

/** The one EventSource a URL source made. */
export function onlySource(made: readonly FakeEventSource[]): FakeEventSource {
  expect(made).toHaveLength(1);
  return made[0] as FakeEventSource;
}
