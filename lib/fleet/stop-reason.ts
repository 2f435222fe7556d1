import type { TerminalFailed } from '../messages.js';
import { fleetFailure } from './failure.js';

// Why a worker stops a run, and what the run's stream is told then: pure decisions, table-tested.

/**
 * Why a worker stopped a run: `cancel` (a caller cancelled it), `shutdown` ({@link RunServer.close}),
 * `lock` (its queue lock was lost), `ended` (another party closed its stream), `unreachable` (its
 * heartbeat could not be renewed for `heartbeatTtlMs`), `forgotten` (Redis lost the run's keys).
 */
export type WorkerStopReason = 'cancel' | 'shutdown' | 'lock' | 'ended' | 'unreachable' | 'forgotten';

const WORKER_STOP_REASONS: readonly string[] = ['cancel', 'shutdown', 'lock', 'ended', 'unreachable', 'forgotten'];

/** Whether a value (an abort signal's reason) names a {@link WorkerStopReason}. */
export function isWorkerStopReason(value: unknown): value is WorkerStopReason {
  return typeof value === 'string' && WORKER_STOP_REASONS.includes(value);
}

/**
 * Whether a heartbeat stops its run, and why (`null`: it runs on). `answer` is what the beat found:
 * the beat script's answer (`ok`, `ended`, `cancelled`, `forgotten`), or `unreachable` when no
 * answer came for `heartbeatTtlMs`. Fencing: callers take a run for lost once its heartbeat is
 * gone, so it must not run on unseen, whether Redis refuses the beats or does not answer them.
 *
 * @example
 * heartbeatStop('cancelled'); // 'cancel': a cancel that pub/sub may have lost
 */
export function heartbeatStop(answer: string): WorkerStopReason | null {
  switch (answer) {
    case 'ended':
      return 'ended';
    case 'cancelled':
      return 'cancel';
    case 'forgotten':
      return 'forgotten';
    case 'unreachable':
      return 'unreachable';
    default:
      return null;
  }
}

/** Whether the last answered beat is so old that the run's heartbeat is gone in Redis: `unreachable`. */
export function beatLapsed(sinceAnsweredMs: number, heartbeatTtlMs: number): boolean {
  return sinceAnsweredMs >= heartbeatTtlMs;
}

/** The terminal a stopped run's stream gets from its worker (none when someone else closed it). */
export function stopTerminal(why: WorkerStopReason, worker: string): TerminalFailed | null {
  switch (why) {
    case 'cancel':
      return fleetFailure('aborted', 'the run was cancelled');
    case 'shutdown':
      return fleetFailure('lost', `the worker ${worker} shut down before the run ended`);
    case 'lock':
      return fleetFailure('lost', `the worker ${worker} lost its hold on the run (its queue lock)`);
    case 'unreachable':
      return fleetFailure('lost', `the worker ${worker} could not reach Redis to renew its heartbeat`);
    case 'forgotten':
      return fleetFailure('lost', `Redis lost the run's state while the worker ${worker} ran it (restarted without its data?)`);
    case 'ended':
      return null;
  }
}
