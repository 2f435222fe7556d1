import { compareIds } from './stream-entries.js';

// Whether a run a reader follows still lives, decided from what Redis and the queue said of it.
// A pure function, so that every case is a row of a table: the reader looks in steps (the run's
// keys in one MGET, then the queue, then the keys again), each only when the one before could not
// decide, and `checkLiveness` carries out the steps and the verdict.

/** How long a reader of a run nobody knows waits for it to be enqueued before it ends `lost`. */
export const UNKNOWN_RUN_GRACE_MS = 1000;

/** What is known of one followed run when its liveness is looked at. */
export interface LivenessLook {
  readonly runId: string;
  /** Started by this dispatcher's `run` (else a `follow` reader, which never enqueued it). */
  readonly own: boolean;
  /** The last entry id this follower was given. */
  readonly after: string;
  /** How long ago this dispatcher enqueued the run; `null` for a reader. */
  readonly waitedMs: number | null;
  /** How long this follower has been reading. */
  readonly readingMs: number;
  /** A run no worker took for this long is removed from the queue (`undefined`: no limit). */
  readonly startTimeoutMs: number | undefined;
  /** How long a reader waits for a run nobody knows ({@link UNKNOWN_RUN_GRACE_MS}). */
  readonly unknownRunGraceMs: number;
  /** The run's keys, from one `MGET`: the worker that started it, its heartbeat, its terminal's entry id. */
  readonly owner: string | null;
  readonly heartbeat: string | null;
  readonly end: string | null;
  /** `false` once the start timed out and the queue had no job left to remove (a worker took it meanwhile). */
  readonly removed?: false;
  /** BullMQ's state of the run's job, once asked (`unknown`: no such job). */
  readonly jobState?: string;
  /** The run's keys read again after the queue said it has no such job: a worker may have taken and ended it meanwhile. */
  readonly again?: { readonly owner: string | null; readonly end: string | null; readonly stream: boolean };
}

/** What to do about a followed run: a verdict, or the next thing to look at (then decide again with it). */
export type LivenessStep =
  /** Alive, or not known yet to be dead: look again later. */
  | { readonly type: 'wait' }
  /** The reader is at or past the run's terminal: nothing is left to read. */
  | { readonly type: 'over' }
  /** The run is dead: write `lost` with `why` through the append gate (any reader may: the gate keeps the first terminal). */
  | { readonly type: 'writeLost'; readonly why: string }
  /** No worker took it in time: remove its job; if it was there, write `lost` with `why`, else decide again with `removed: false`. */
  | { readonly type: 'removeThenWriteLost'; readonly why: string }
  /** Nobody knows the run: end this reader (only this caller's) with `lost`; nothing is written. */
  | { readonly type: 'endReaderLost'; readonly why: string }
  /** Ask the queue for the run's job state, and decide again with `jobState`. */
  | { readonly type: 'readJobState' }
  /** Read the run's keys again, and decide again with `again`. */
  | { readonly type: 'readAgain' };

/**
 * The next step for a run that was quiet for a while.
 *
 * @example
 * judgeLiveness({ ...look, owner: 'worker-1', heartbeat: null, end: null });
 * // { type: 'writeLost', why: 'the worker worker-1 stopped beating (killed, frozen or cut off); …' }
 */
export function judgeLiveness(look: LivenessLook): LivenessStep {
  if (look.end !== null) return compareIds(look.after, look.end) >= 0 ? { type: 'over' } : WAIT;
  if (look.owner !== null) {
    if (look.heartbeat !== null) return WAIT;
    return { type: 'writeLost', why: `the worker ${look.owner} stopped beating (killed, frozen or cut off); the agent may have done part of its work` };
  }
  // Not taken yet: still queued, timed out, or gone from the queue without a start.
  const { startTimeoutMs, waitedMs } = look;
  if (look.removed === undefined && startTimeoutMs !== undefined && waitedMs !== null && waitedMs >= startTimeoutMs) {
    return { type: 'removeThenWriteLost', why: `no worker took the run within startTimeoutMs (${String(startTimeoutMs)} ms)` };
  }
  if (look.jobState === undefined) return { type: 'readJobState' };
  if (look.jobState !== 'unknown') return WAIT;
  if (look.again === undefined) return { type: 'readAgain' };
  if (look.again.owner !== null || look.again.end !== null) return WAIT;
  // Nobody holds it and nobody will: it was failed or removed before its start, or Redis lost it.
  if (look.own || look.again.stream) return { type: 'writeLost', why: 'nobody runs the run: it left the queue without being started, or Redis lost its state' };
  // A reader of a run nobody knows would wait forever. (Not at once: a reader may come a moment
  // before the run it follows is put on the queue by another caller.)
  if (look.readingMs >= look.unknownRunGraceMs) return { type: 'endReaderLost', why: `no run ${look.runId} is known (never enqueued, or its stream expired)` };
  return WAIT;
}

const WAIT: LivenessStep = { type: 'wait' };
