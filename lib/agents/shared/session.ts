import type { CliMessage } from '../../messages.js';

/**
 * The session header of a run, once: `session.started`, or `session.resumed` when the run continues
 * a session. Create one per run; `sessionId` is the id it announced.
 */
export class SessionHeader {
  readonly #resuming: boolean;
  sessionId: string | undefined;

  constructor(resuming: boolean) {
    this.#resuming = resuming;
  }

  /** The header message for `sessionId`, or `[]` when one was sent already. */
  announce(sessionId: string): CliMessage[] {
    if (this.sessionId !== undefined) return [];
    this.sessionId = sessionId;
    return [{ type: this.#resuming ? 'session.resumed' : 'session.started', sessionId }];
  }
}
