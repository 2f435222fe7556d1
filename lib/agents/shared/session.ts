import type { CliMessage } from '../../messages.js';

/**
 * The session header of a run, once: `session.started`, or `session.resumed` when the run continues
 * a session, with the agent's version where it said it. Create one per run; `sessionId` is the id
 * it announced.
 */
export class SessionHeader {
  readonly #resuming: boolean;
  sessionId: string | undefined;

  constructor(resuming: boolean) {
    this.#resuming = resuming;
  }

  /** The header message for `sessionId` (and the CLI's `agentVersion`, when it reported one), or `[]` when one was sent already. */
  announce(sessionId: string, agentVersion?: string): CliMessage[] {
    if (this.sessionId !== undefined) return [];
    this.sessionId = sessionId;
    return [sessionHeader(this.#resuming, sessionId, agentVersion)];
  }
}

/** `session.started` (or `session.resumed`) for `sessionId`, with `agentVersion` when it is known. */
export function sessionHeader(resumed: boolean, sessionId: string, agentVersion: string | undefined): CliMessage {
  return { type: resumed ? 'session.resumed' : 'session.started', sessionId, ...(agentVersion === undefined || agentVersion === '' ? {} : { agentVersion }) };
}
