/**
 * The part of the browser's `EventSource` that `fromAgentEventSource` and `fromSessionEventSource`
 * use. A real `EventSource` fits it, and so does a polyfill or a small fake in a test. Declared
 * here so that the library compiles without the DOM typings.
 */
export interface EventSourceLike {
  /** `0` connecting (also while waiting to reconnect), `1` open, `2` closed for good. */
  readonly readyState: number;
  /** The stream's address, used in failure messages when present. */
  readonly url?: string;
  /** Listens to `open`, `message` and `error` events. */
  addEventListener(type: string, listener: (event: EventLike) => void): void;
  /** Stops listening (called when the Observable's subscription ends). */
  removeEventListener(type: string, listener: (event: EventLike) => void): void;
  /** Closes the stream for good: called at the terminal message and at unsubscribe. */
  close(): void;
}

/** A `message` event carries its `data` as a string; `open` and `error` events carry none. */
export interface EventLike {
  readonly data?: unknown;
}

/** `new EventSource(url, init)`, the browser's constructor or a stand-in. */
export type EventSourceConstructor = new (url: string, init?: { withCredentials?: boolean }) => EventSourceLike;

export const EVENT_SOURCE_CONNECTING = 0;
export const EVENT_SOURCE_OPEN = 1;
export const EVENT_SOURCE_CLOSED = 2;
