import type { CliMessage, FailureReason, Usage } from '../messages.js';
import type { AgentEvent } from './items.js';

/** How a dialect reads the end of a run from the events it saw. */
export type Conclusion =
  | { readonly kind: 'completed'; readonly stopReason: string; readonly usage?: Usage }
  | {
      readonly kind: 'failed';
      readonly reason: Extract<FailureReason, 'agent-error' | 'aborted'>;
      readonly message: string;
      /**
       * The agent reported that its run ended (pi: `agent_end`; Claude Code: a `result` line).
       * Such a failure explains a non-zero exit code, which then adds nothing.
       */
      readonly ended: boolean;
    }
  | { readonly kind: 'inconclusive'; readonly message: string };

/**
 * What `mapToCliMessage` needs to know about one agent CLI. State is created per subscription
 * by `createState`, so a dialect object can be shared.
 */
export interface Dialect<S, E extends AgentEvent = AgentEvent> {
  /** The agent's name in diagnostics, e.g. `pi`. */
  readonly name: string;
  /** Added to the message when the executable cannot be started, e.g. how to install it. */
  readonly installHint?: string;
  createState(): S;
  /** The messages an event stands for (never a terminal message); may update the state. */
  map(state: S, event: E): readonly CliMessage[];
  /** How the run ended, judged from the events alone, when the process exited normally. */
  conclude(state: S): Conclusion;
  /** The agent's last reported error, for diagnostics. */
  lastError(state: S): string | undefined;
  sessionId(state: S): string | undefined;
}
