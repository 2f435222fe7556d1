import { Observable } from 'rxjs';
import { isTerminal, type CliMessage, type InvalidOutputLine, type TerminalFailed } from '../messages.js';
import { EVENT_SOURCE_CLOSED, EVENT_SOURCE_CONNECTING, EVENT_SOURCE_OPEN, type EventLike, type EventSourceConstructor, type EventSourceLike } from './event-source-like.js';
import { MAX_INVALID_MESSAGES, readMessage } from './read-message.js';

/** Options of {@link fromAgentEventSource}. */
export interface FromAgentEventSourceOptions {
  /** The constructor used to open a URL. Default: `globalThis.EventSource`. */
  readonly EventSource?: EventSourceConstructor;
  /** Passed to the constructor: send credentials (cookies) to a cross-origin stream. */
  readonly withCredentials?: boolean;
}

/**
 * Turns a stream of server-sent events whose `data` are `CliMessage`s (one JSON object per
 * event, as `serveSse` in `examples/web` sends them) back into an Observable of `CliMessage`s: the
 * browser side of a run served over SSE. It keeps the server side's contract: exactly one terminal
 * message, then completion, and no error for anything the network or the server did.
 *
 * - **A URL is cold**: every subscription opens its own `EventSource` (on a server that starts a
 *   run per request, its own run). **An `EventSource` instance** is used as it is: it is already
 *   connecting, and the Observable takes it over and closes it when it ends or is unsubscribed,
 *   so it serves one subscription (events that arrive before that subscription are lost).
 * - Each event is JSON-parsed and checked with `CliMessageSchema`. One that is not a `CliMessage`
 *   (another version's message type, a proxy's noise) is skipped and kept, bounded: the first 50,
 *   each cut to 2 KiB. They are reported only if the stream then fails, as `invalidOutputLines`
 *   of its `terminal.failed` (reason `invalid-output`), numbered by their position in the stream.
 * - After the terminal message it closes the `EventSource` and completes.
 * - **It never reconnects.** An `EventSource` reconnects on its own after a network error or when
 *   the server ends the response, and would start the run again. On the first `error` event before
 *   the terminal message it closes the source, emits a `terminal.failed` with reason
 *   `missing-terminal` (or `invalid-output`, see above) and a `message` saying what happened,
 *   and completes.
 * - Unsubscribing closes the `EventSource`; a server that unsubscribes from the run when its client
 *   goes away then stops the agent.
 *
 * A missing `EventSource` (no `options.EventSource` and none in `globalThis`) or a source that is
 * neither a URL nor an `EventSource` throws a `TypeError` when it is called.
 *
 * ```
 * events:  -o-m1-m2-x-T        o = open, m = CliMessage events, x = invalid data, T = terminal event
 * result:  ---m1-m2---(T|)     x is skipped; the EventSource is closed at T
 *
 * events:  -o-m1---e           e = error (connection lost, the response ended early)
 * result:  ---m1---(F|)        F = terminal.failed (missing-terminal); closed, no reconnect
 * ```
 *
 * @example
 * fromAgentEventSource(`/run?prompt=${encodeURIComponent(prompt)}`).subscribe((message) => {
 *   if (message.type === 'assistant') answer.append(message.text);
 *   if (message.type === 'terminal.failed') status.textContent = message.message;
 * });
 *
 * @example
 * // A URL source is cold: each attempt of retryAgentRun opens a new EventSource, and the server
 * // starts a new run.
 * fromAgentEventSource(`/run?prompt=${encodeURIComponent(prompt)}`).pipe(retryAgentRun()).subscribe(render);
 */
export function fromAgentEventSource(source: string | URL | EventSourceLike, options: FromAgentEventSourceOptions = {}): Observable<CliMessage> {
  const connect = connector(source, options);
  return new Observable<CliMessage>((subscriber) => {
    const eventSource = connect();
    // Named in failure messages without its query, which may hold the prompt.
    const where = (eventSource.url ?? (isEventSourceLike(source) ? 'the EventSource' : String(source))).replace(/[?#].*$/s, '');
    // Per subscription: what this stream has seen so far.
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
    // Closes the source before emitting the last message, so nothing can follow it.
    const end = (last: CliMessage) => {
      release();
      subscriber.next(last);
      subscriber.complete();
    };
    const onOpen = () => {
      opened = true;
    };
    const onMessage = (event: EventLike) => {
      position += 1;
      const read = readMessage(event.data, position);
      if (read.kind === 'invalid') {
        if (invalid.length < MAX_INVALID_MESSAGES) invalid.push(read.line);
        else invalidOmitted += 1;
      } else if (isTerminal(read.message)) {
        end(read.message);
      } else {
        subscriber.next(read.message);
      }
    };
    const onError = () => {
      end(streamFailure(describeError(where, opened, eventSource.readyState), invalid, invalidOmitted));
    };

    eventSource.addEventListener('open', onOpen);
    eventSource.addEventListener('message', onMessage);
    eventSource.addEventListener('error', onError);
    if (eventSource.readyState === EVENT_SOURCE_CLOSED) {
      end(streamFailure(`the event stream ${where} was already closed when the subscription began`, invalid, invalidOmitted));
    }
    return release;
  });
}

// Checks the arguments now (programmer errors throw), and returns how each subscription gets its source.
function connector(source: string | URL | EventSourceLike, options: FromAgentEventSourceOptions): () => EventSourceLike {
  if (isEventSourceLike(source)) return () => source;
  if (typeof source !== 'string' && !isUrl(source)) {
    throw new TypeError('agent-rx: fromAgentEventSource needs a URL (a string or a URL) or an EventSource');
  }
  const url = String(source);
  if (url === '') throw new TypeError('agent-rx: fromAgentEventSource needs a non-empty URL');
  const Constructor = options.EventSource ?? (globalThis as { EventSource?: EventSourceConstructor }).EventSource;
  if (typeof Constructor !== 'function') {
    throw new TypeError('agent-rx: fromAgentEventSource found no EventSource here; pass one as options.EventSource');
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
function describeError(where: string, opened: boolean, readyState: number): string {
  if (!opened && readyState !== EVENT_SOURCE_CONNECTING) {
    return `the event stream ${where} could not be opened: the server refused it or did not answer with text/event-stream (the browser's network panel shows why)`;
  }
  if (!opened) return `could not connect to the event stream ${where}`;
  return `the event stream ${where} ended before the run's terminal message: the connection was lost or the server ended the response (not reconnecting: a run cannot be resumed)`;
}

function streamFailure(what: string, invalid: readonly InvalidOutputLine[], omitted: number): TerminalFailed {
  const count = invalid.length + omitted;
  const first = invalid[0];
  const example = first === undefined ? '' : ` (message ${first.lineNumber}: ${first.reason}, ${first.detail})`;
  return {
    type: 'terminal.failed',
    reason: count > 0 ? 'invalid-output' : 'missing-terminal',
    message: count > 0 ? `${what}; ${count} message(s) were not CliMessages${example}` : what,
    exitCode: null,
    signal: null,
    stderr: '',
    stderrTruncatedBytes: 0,
    invalidOutputLines: [...invalid],
    invalidOutputLinesOmitted: omitted,
  };
}
