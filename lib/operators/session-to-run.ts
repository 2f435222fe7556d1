import { Observable, type OperatorFunction } from 'rxjs';
import type { CliMessage, SessionMessage, TerminalMessage, TurnCompleted, TurnFailed } from '../messages.js';
import { terminalFailed } from '../terminal-failed.js';

/**
 * Reads a one-prompt session as a run: the session's turn and input messages are left out, and
 * its terminal becomes the run's, decided by the turn. A completed turn of a session that ended
 * cleanly is `terminal.completed` with the turn's stop reason and usage; a failed turn is
 * `terminal.failed` with the turn's reason and message (and the process's exit fields when the
 * session failed too); a session that failed before any turn ended keeps its own terminal. With
 * several turns, the last one decides. What comes after the terminal is ignored.
 *
 * ```
 * source:  -S-a-a-C-(T|)       S = turn.started, a = assistant, C = turn.completed, T = session terminal
 * result:  ---a-a---(R|)       R = terminal.completed with C's stop reason and usage
 * ```
 *
 * @example
 * const command: SessionCommand = { type: 'prompt', text: 'Explain this repo' };
 * of(command).pipe(codexSession({ sandbox: 'read-only' }), sessionToRun()).subscribe(render);
 */
export function sessionToRun(): OperatorFunction<SessionMessage, CliMessage> {
  return (source) =>
    new Observable<CliMessage>((subscriber) => {
      let lastTurn: TurnCompleted | TurnFailed | undefined;
      let ended = false;
      return source.subscribe({
        next: (message) => {
          if (ended) return;
          switch (message.type) {
            case 'turn.completed':
            case 'turn.failed':
              lastTurn = message;
              return;
            case 'turn.started':
            case 'input.accepted':
            case 'input.dropped':
            case 'session.passivated':
              return;
            case 'terminal.completed':
            case 'terminal.failed':
              ended = true;
              subscriber.next(runTerminal(message, lastTurn));
              subscriber.complete();
              return;
            default:
              subscriber.next(message);
          }
        },
        error: (error: unknown) => {
          subscriber.error(error);
        },
        complete: () => {
          subscriber.complete();
        },
      });
    });
}

function runTerminal(session: TerminalMessage, turn: TurnCompleted | TurnFailed | undefined): TerminalMessage {
  const sessionId = session.sessionId === undefined ? {} : { sessionId: session.sessionId };
  if (turn === undefined) return session;
  if (turn.type === 'turn.completed') {
    // A turn that completed in a session that then failed: the session's failure stands.
    if (session.type === 'terminal.failed') return session;
    return {
      type: 'terminal.completed',
      stopReason: turn.stopReason,
      ...(turn.agentStopReason === undefined ? {} : { agentStopReason: turn.agentStopReason }),
      ...(turn.usage === undefined ? {} : { usage: turn.usage }),
      ...sessionId,
      ...(turn.output === undefined ? {} : { output: turn.output }),
    };
  }
  const { type: _type, turn: _turn, reason, message, ...said } = turn;
  // The session's evidence where it failed too; else a process that ended cleanly (exit code 0).
  if (session.type === 'terminal.failed') return { ...session, reason, message, ...said };
  return terminalFailed(reason, message, { exitCode: 0, ...sessionId, ...said });
}
