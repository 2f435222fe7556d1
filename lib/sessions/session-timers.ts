import type { SchedulerLike, Subscription } from 'rxjs';
import type { StopCause } from '../process/items.js';

/** What a session's time limits are, and what they do when they run out. */
export interface SessionTimerOptions {
  /** Silence allowed while a turn runs (`idleTimeoutMs`); `undefined`: no limit. */
  readonly idleMs: number | undefined;
  /** How long an abort may take to end the turn, and the agent to exit after its input ended (`gracePeriodMs`). */
  readonly graceMs: number;
  /** The running turn was silent for `idleMs`. */
  idleExpired(ms: number): void;
  /** An abort or the end of the input was not honoured within `graceMs`: stop the session. */
  stop(cause: Extract<StopCause, { readonly kind: 'timeout' }>): void;
}

/**
 * The idle, abort and end limits of one session, on its scheduler. The idle limit counts the
 * silence since the last `activity()` while it is watched (a turn runs); the abort and end limits
 * run out `graceMs` after they were started. Each is started and cleared as the session machine
 * says (`watchIdle`, `watchAbort`, `watchEnd`); `clear()` ends them all.
 */
export class SessionTimers {
  readonly #scheduler: SchedulerLike;
  readonly #options: SessionTimerOptions;
  #idle: Subscription | null = null;
  #abort: Subscription | null = null;
  #end: Subscription | null = null;
  #lastActivity: number;

  constructor(scheduler: SchedulerLike, options: SessionTimerOptions) {
    this.#scheduler = scheduler;
    this.#options = options;
    this.#lastActivity = scheduler.now();
  }

  /** The agent printed something: the silence counts from now. */
  activity(): void {
    this.#lastActivity = this.#scheduler.now();
  }

  /** Starts counting the silence from now (`on`), or stops counting it. */
  watchIdle(on: boolean): void {
    this.#idle?.unsubscribe();
    this.#idle = null;
    const ms = this.#options.idleMs;
    if (!on || ms === undefined) return;
    this.#lastActivity = this.#scheduler.now();
    const check = (): void => {
      const silent = this.#scheduler.now() - this.#lastActivity;
      if (silent >= ms) {
        this.#idle = null;
        this.#options.idleExpired(ms);
      } else {
        this.#idle = this.#scheduler.schedule(check, ms - silent);
      }
    };
    this.#idle = this.#scheduler.schedule(check, ms);
  }

  /** Gives a requested abort `graceMs` to end the turn (`on`), or stops waiting for it. */
  watchAbort(on: boolean): void {
    this.#abort?.unsubscribe();
    this.#abort = on ? this.#stopAfterGrace('abort') : null;
  }

  /** Gives the agent `graceMs` to exit after its input ended. */
  watchEnd(): void {
    this.#end?.unsubscribe();
    this.#end = this.#stopAfterGrace('end');
  }

  /** Ends every limit (idempotent). */
  clear(): void {
    for (const timer of [this.#idle, this.#abort, this.#end]) timer?.unsubscribe();
    this.#idle = this.#abort = this.#end = null;
  }

  #stopAfterGrace(limit: 'abort' | 'end'): Subscription {
    const ms = this.#options.graceMs;
    return this.#scheduler.schedule(() => {
      this.#options.stop({ kind: 'timeout', limit, ms });
    }, ms);
  }
}
