import type { Observable } from 'rxjs';
import { isTurnEnd, SessionMessageSchema, type SessionMessage, type TerminalFailed } from '../messages.js';
import type { EventSourceLike } from './event-source-like.js';
import type { FromAgentEventSourceOptions } from './from-agent-event-source.js';
import { fromMessageEventSource, type MessageStreamKind, type StreamTracker } from './from-message-event-source.js';

/** Options of {@link fromSessionEventSource}: the same as {@link FromAgentEventSourceOptions}. */
export type FromSessionEventSourceOptions = FromAgentEventSourceOptions;

/**
 * Turns a stream of server-sent events whose `data` are `SessionMessage`s (one JSON object per
 * event, as the session endpoints of `examples/web` and `examples/nest` send them) back into an
 * Observable of `SessionMessage`s: the browser side of a session served over SSE. It keeps the
 * session's contract: turns that each end once, exactly one terminal message for the session, then
 * completion, and no error for anything the network or the server did. It is
 * {@link fromAgentEventSource} for sessions, and behaves the same way:
 *
 * - **A URL is cold**: every subscription opens its own `EventSource` (on a server that starts a
 *   session per request, its own agent process). **An `EventSource` instance** is used as it is
 *   and closed when the Observable ends or is unsubscribed; it serves one subscription. Listening
 *   to its other named events (a server's `event: session` with the session's id) stays possible.
 * - Each `message` event is JSON-parsed and checked with `SessionMessageSchema`. One that is not a
 *   `SessionMessage` is skipped and kept, bounded (the first 50, each cut to 2 KiB), and reported
 *   only if the stream then fails, as `invalidOutputLines` of its `terminal.failed` (reason
 *   `invalid-output`).
 * - After the session's terminal message it closes the `EventSource` and completes.
 * - **It never reconnects** (an agent process cannot be picked up again). On the first `error`
 *   event before the terminal message it closes the source and ends the session as a session
 *   whose process died ends: **a turn still running** (a `turn.started` without its
 *   `turn.completed` or `turn.failed`) first gets a `turn.failed` with the same `reason` and
 *   `message` as the failure, then comes the session's `terminal.failed` (reason
 *   `missing-terminal`, or `invalid-output`), with a `message` that says whether the stream could
 *   not connect, was refused, or broke off, and the Observable completes. Follow-ups queued on the
 *   server are not answered: the stream no longer says what became of them.
 * - Unsubscribing closes the `EventSource`; a server that unsubscribes from the session when its
 *   client goes away then stops the agent.
 *
 * A missing `EventSource` (no `options.EventSource` and none in `globalThis`) or a source that is
 * neither a URL nor an `EventSource` throws a `TypeError` when it is called. Commands go to the
 * server another way (a `POST` per command, say); this function only reads.
 *
 * ```
 * events:  -o-s-m1-x-c-T        o = open, s = turn.started, m = content, x = invalid data,
 * result:  ---s-m1---c-(T|)     c = turn.completed, T = the session's terminal; x is skipped
 *
 * events:  -o-s-m1---e          e = error (connection lost, the response ended early)
 * result:  ---s-m1---(fF|)      f = turn.failed (turn 1), F = terminal.failed (missing-terminal),
 *                               both with the same message; closed, no reconnect
 * ```
 *
 * @example
 * let sessionId: string | undefined; // where the page sends its commands
 * const source = new EventSource('/session');
 * source.addEventListener('session', (event) => {
 *   sessionId = (JSON.parse((event as MessageEvent).data) as { id: string }).id;
 * });
 * fromSessionEventSource(source).subscribe((message) => {
 *   if (message.type === 'turn.started') startTurn(message.turn, message.prompt);
 *   if (message.type === 'assistant') answer.append(message.text);
 *   if (message.type === 'turn.failed') showTurnFailure(message.turn, message.message);
 *   if (message.type === 'terminal.failed') status.textContent = message.message;
 * });
 */
export function fromSessionEventSource(source: string | URL | EventSourceLike, options: FromSessionEventSourceOptions = {}): Observable<SessionMessage> {
  return fromMessageEventSource(source, options, SESSION_STREAM);
}

const SESSION_STREAM: MessageStreamKind<SessionMessage> = {
  caller: 'fromSessionEventSource',
  schema: SessionMessageSchema,
  noun: 'SessionMessage',
  subject: 'session',
  track: runningTurn,
};

// Per subscription: the turn that started and has not ended, which a broken stream fails first.
function runningTurn(): StreamTracker<SessionMessage> {
  let turn: number | null = null;
  return {
    seen: (message) => {
      if (message.type === 'turn.started') turn = message.turn;
      else if (isTurnEnd(message)) turn = null;
    },
    beforeFailure: (failure: TerminalFailed) => (turn === null ? [] : [{ type: 'turn.failed', turn, reason: failure.reason, message: failure.message }]),
  };
}
