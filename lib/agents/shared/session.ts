import type { CliMessage } from '../../messages.js';

/** What an agent said of itself as its session began: its CLI's version and its model, where it said them. */
export interface SessionFacts {
  readonly agentVersion?: string | undefined;
  readonly model?: string | undefined;
}

/**
 * The session header of a run, once: `session.started`, or `session.resumed` when the run continues
 * a session, with the agent's version and model where it said them. Create one per run; `sessionId`
 * is the id it announced.
 */
export class SessionHeader {
  readonly #resuming: boolean;
  sessionId: string | undefined;

  constructor(resuming: boolean) {
    this.#resuming = resuming;
  }

  /** The header message for `sessionId` (with what the CLI said of itself), or `[]` when one was sent already. */
  announce(sessionId: string, facts: SessionFacts = {}): CliMessage[] {
    if (this.sessionId !== undefined) return [];
    this.sessionId = sessionId;
    return [sessionHeader(this.#resuming, sessionId, facts)];
  }
}

/** `session.started` (or `session.resumed`) for `sessionId`, with the agent's version and model where they are known. */
export function sessionHeader(resumed: boolean, sessionId: string, facts: SessionFacts = {}): CliMessage {
  const { agentVersion, model } = facts;
  return {
    type: resumed ? 'session.resumed' : 'session.started',
    sessionId,
    ...(agentVersion === undefined || agentVersion === '' ? {} : { agentVersion }),
    ...(model === undefined || model === '' ? {} : { model }),
  };
}
