import type { MessageMapping } from '../../operators/dialect.js';
import type { TurnOutcome } from '../../sessions/session-machine.js';

/**
 * How a session's turn ended, read by the agent's one-shot dialect from that turn's events alone:
 * what it concludes (completed, or failed with its error and HTTP status). A turn it finds
 * inconclusive failed as an agent error, with the dialect's explanation.
 */
export function outcomeOf<S>(dialect: MessageMapping<S>, state: S, name: string): TurnOutcome {
  const conclusion = dialect.conclude(state);
  if (conclusion.kind === 'completed') {
    return {
      kind: 'completed',
      stopReason: conclusion.stopReason,
      ...(conclusion.agentStopReason === undefined ? {} : { agentStopReason: conclusion.agentStopReason }),
      ...(conclusion.usage === undefined ? {} : { usage: conclusion.usage }),
    };
  }
  const agentError = dialect.lastError(state);
  const details = dialect.failureDetails?.(state, null) ?? {};
  return {
    kind: 'failed',
    // A session's turn is not given its schema natively: `output-schema` is the shell's to say.
    reason: conclusion.kind === 'failed' && conclusion.reason !== 'output-schema' ? conclusion.reason : 'agent-error',
    message: conclusion.kind === 'failed' ? conclusion.message : `${name}: ${conclusion.message}`,
    ...(agentError === undefined ? {} : { agentError }),
    ...(details.httpStatus === undefined ? {} : { httpStatus: details.httpStatus }),
    ...(details.retryAfterMs === undefined ? {} : { retryAfterMs: details.retryAfterMs }),
    ...(conclusion.kind === 'failed' && conclusion.outputIssues !== undefined ? { outputIssues: conclusion.outputIssues } : {}),
    ...(conclusion.kind === 'failed' && conclusion.answer !== undefined ? { answer: conclusion.answer } : {}),
  };
}
