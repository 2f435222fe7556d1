import type { Observable } from 'rxjs';
import { CliMessageSchema, type CliMessage } from '../messages.js';
import type { EventSourceConstructor, EventSourceLike } from './event-source-like.js';
import { fromMessageEventSource, type MessageStreamKind } from './from-message-event-source.js';

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
  return fromMessageEventSource(source, options, RUN_STREAM);
}

const RUN_STREAM: MessageStreamKind<CliMessage> = { caller: 'fromAgentEventSource', schema: CliMessageSchema, noun: 'CliMessage', subject: 'run' };
