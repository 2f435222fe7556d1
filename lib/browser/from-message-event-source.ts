import { Observable } from 'rxjs';
import type * as z from 'zod';
import { isTerminal, type InvalidOutputLine, type SessionMessage, type TerminalFailed } from '../messages.js';
import { terminalFailed } from '../terminal-failed.js';
import { EVENT_SOURCE_CLOSED, EVENT_SOURCE_CONNECTING, EVENT_SOURCE_OPEN, type EventLike, type EventSourceConstructor, type EventSourceLike } from './event-source-like.js';
import { MAX_INVALID_MESSAGES, readMessage } from './read-message.js';

// The implementation behind `fromAgentEventSource` and `fromSessionEventSource` (their JSDoc holds
// the contract): what differs between them is what a stream carries and what it must say when it breaks.

/** How a stream of `T`s is read: its schema, its words in messages, and what a broken stream still owes. */
export interface MessageStreamKind<T extends SessionMessage> {
  /** The public function, named in `TypeError`s. */
  readonly caller: string;
  readonly schema: z.ZodType<T>;
  /** What one message is called in diagnostics: `CliMessage`, `SessionMessage`. */
  readonly noun: string;
  /** What the stream carries, in diagnostics: `run`, `session`. */
  readonly subject: string;
  /**
   * Per subscription: sees every message passed on, and when the stream breaks returns what must
   * come before its `terminal.failed` (a session's running turn ends first).
   */
  readonly track?: () => StreamTracker<T>;
}

export interface StreamTracker<T extends SessionMessage> {
  seen(message: T): void;
  beforeFailure(failure: TerminalFailed): readonly T[];
}

/** What a subscription is opened with when the source is a URL. */
export interface ConnectOptions {
  readonly EventSource?: EventSourceConstructor;
  readonly withCredentials?: boolean;
}

// `T` includes `TerminalFailed` for every kind there is, so the result is an `Observable<T>` to its callers.
export function fromMessageEventSource<T extends SessionMessage>(
  source: string | URL | EventSourceLike,
  options: ConnectOptions,
  kind: MessageStreamKind<T>,
): Observable<T | TerminalFailed> {
  const connect = connector(source, options, kind.caller);
  return new Observable<T | TerminalFailed>((subscriber) => {
    const eventSource = connect();
    // Named in failure messages without its query, which may hold the prompt.
    const where = (eventSource.url ?? (isEventSourceLike(source) ? 'the EventSource' : String(source))).replace(/[?#].*$/s, '');
    // Per subscription: what this stream has seen so far.
    const tracker = kind.track?.();
    let opened = eventSource.readyState === EVENT_SOURCE_OPEN;
    let position = 0;
    let released = false;
    const invalid: InvalidOutputLine[] = [];
    let invalidOmitted = 0;

    const release = () => {
      if (released) return;
      released = true;
      try {
        eventSource.removeEventListener('open', onOpen);
        eventSource.removeEventListener('message', onMessage);
        eventSource.removeEventListener('error', onError);
        eventSource.close();
      } catch {
        // a stand-in that throws while closing: nothing more can be done, and teardown never throws
      }
    };
    // Closes the source before emitting the last messages, so nothing can follow them.
    const end = (last: readonly (T | TerminalFailed)[]) => {
      release();
      for (const message of last) subscriber.next(message);
      subscriber.complete();
    };
    const fail = (what: string) => {
      const failure = streamFailure(what, kind.noun, invalid, invalidOmitted);
      end([...(tracker?.beforeFailure(failure) ?? []), failure]);
    };
    const onOpen = () => {
      opened = true;
    };
    const onMessage = (event: EventLike) => {
      position += 1;
      const read = readMessage(event.data, position, kind.schema, kind.noun);
      if (read.kind === 'invalid') {
        if (invalid.length < MAX_INVALID_MESSAGES) invalid.push(read.line);
        else invalidOmitted += 1;
      } else if (isTerminal(read.message)) {
        end([read.message]);
      } else {
        tracker?.seen(read.message);
        subscriber.next(read.message);
      }
    };
    const onError = () => {
      fail(describeError(where, kind.subject, opened, eventSource.readyState));
    };

    eventSource.addEventListener('open', onOpen);
    eventSource.addEventListener('message', onMessage);
    eventSource.addEventListener('error', onError);
    if (eventSource.readyState === EVENT_SOURCE_CLOSED) fail(`the event stream ${where} was already closed when the subscription began`);
    return release;
  });
}

// Checks the arguments now (programmer errors throw), and returns how each subscription gets its source.
function connector(source: string | URL | EventSourceLike, options: ConnectOptions, caller: string): () => EventSourceLike {
  if (isEventSourceLike(source)) return () => source;
  if (typeof source !== 'string' && !isUrl(source)) {
    throw new TypeError(`agent-rx: ${caller} needs a URL (a string or a URL) or an EventSource`);
  }
  const url = String(source);
  if (url === '') throw new TypeError(`agent-rx: ${caller} needs a non-empty URL`);
  const Constructor = options.EventSource ?? (globalThis as { EventSource?: EventSourceConstructor }).EventSource;
  if (typeof Constructor !== 'function') {
    throw new TypeError(`agent-rx: ${caller} found no EventSource here; pass one as options.EventSource`);
  }
  const withCredentials = options.withCredentials;
  return () => (withCredentials === undefined ? new Constructor(url) : new Constructor(url, { withCredentials }));
}

function isEventSourceLike(value: unknown): value is EventSourceLike {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Partial<Record<'addEventListener' | 'removeEventListener' | 'close', unknown>>;
  return typeof candidate.addEventListener === 'function' && typeof candidate.removeEventListener === 'function' && typeof candidate.close === 'function';
}

// A URL object, without relying on a global `URL` (not every JavaScript context has one).
function isUrl(value: unknown): value is URL {
  return typeof value === 'object' && value !== null && typeof (value as { href?: unknown }).href === 'string';
}

// What an `error` event means; browsers give no detail, so this says what the state tells.
function describeError(where: string, subject: string, opened: boolean, readyState: number): string {
  if (!opened && readyState !== EVENT_SOURCE_CONNECTING) {
    return `the event stream ${where} could not be opened: the server refused it or did not answer with text/event-stream (the browser's network panel shows why)`;
  }
  if (!opened) return `could not connect to the event stream ${where}`;
  return `the event stream ${where} ended before the ${subject}'s terminal message: the connection was lost or the server ended the response (not reconnecting: a ${subject} cannot be resumed)`;
}

function streamFailure(what: string, noun: string, invalid: readonly InvalidOutputLine[], omitted: number): TerminalFailed {
  const count = invalid.length + omitted;
  const first = invalid[0];
  const example = first === undefined ? '' : ` (message ${first.lineNumber}: ${first.reason}, ${first.detail})`;
  if (count === 0) return terminalFailed('missing-terminal', what);
  return terminalFailed('invalid-output', `${what}; ${count} message(s) were not ${noun}s${example}`, { invalidOutputLines: [...invalid], invalidOutputLinesOmitted: omitted });
}
