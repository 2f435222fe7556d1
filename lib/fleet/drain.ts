import type { ErrorReport } from './on-error.js';
import type { Redis, Worker } from './peers.js';
import { within } from './waits.js';

// A worker's close: its runs drain (the running ones may finish for drainMs, then are stopped),
// then what is left to tell Redis gets a bounded time, then every connection is closed.

/** How long a closing worker may take to tell Redis what is left once its runs are over. */
export const GOODBYE_MS = 2000;

/** The end of a drain: a deadline that only ever comes sooner (a second close with a shorter `drainMs`: stop now). */
export class DrainDeadline {
  #endsAt: number | null = null;
  #timer: NodeJS.Timeout | null = null;

  /** Calls `end` `drainMs` from now, unless a deadline set before comes sooner (then that one stays). */
  shorten(drainMs: number, end: () => void): void {
    const at = performance.now() + drainMs;
    if (this.#endsAt !== null && at >= this.#endsAt) return;
    this.#endsAt = at;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = setTimeout(end, drainMs);
  }

  clear(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
  }
}

/** The jobs of a worker: those it is processing, and those it processed that BullMQ has not yet completed or failed in Redis. */
export class JobLedger {
  #processing = 0;
  #idle: (() => void) | null = null;
  /** Jobs whose processing ended here that BullMQ has not settled yet, and since when. */
  readonly #settling = new Map<string, number>();
  #settled: (() => void) | null = null;

  taken(): void {
    this.#processing += 1;
  }

  /** Its processing ended here; BullMQ is yet to settle it in Redis. */
  processed(jobId: string | undefined): void {
    if (jobId !== undefined) this.#settling.set(jobId, performance.now());
    this.#processing -= 1;
    if (this.#processing === 0) this.#idle?.();
  }

  /** BullMQ completed or failed it in Redis. */
  settled(jobId: string): void {
    this.#settling.delete(jobId);
    if (this.#settling.size === 0) this.#settled?.();
  }

  /** Resolves once no job is being processed here (for one waiter: the close). */
  idle(): Promise<void> {
    if (this.#processing === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.#idle = resolve;
    });
  }

  /** Resolves once BullMQ settled every job processed here; a job whose lock ran out (`lockMs`) is not this worker's to end any more. */
  allSettled(lockMs: number): Promise<void> {
    for (const [jobId, since] of this.#settling) if (performance.now() - since > lockMs) this.#settling.delete(jobId);
    if (this.#settling.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.#settled = resolve;
    });
  }
}

/** What a closing worker ends, in order. */
export interface ClosingWorker {
  readonly jobs: JobLedger;
  readonly drain: DrainDeadline;
  /** BullMQ's worker, once made (a start that never reached Redis made none). */
  readonly queueWorker: () => Worker | null;
  /** The cancel channel's connection, and agent-rx's own. */
  readonly subscriber: Redis;
  readonly redis: Redis;
  readonly lockDurationMs: number;
  readonly report: ErrorReport;
}

// Nothing here waits for Redis unbounded: neither the start (it may never have reached Redis) nor
// BullMQ's or ioredis's own graceful close (they wait for a connection that may not come back).
export async function closeWorker(closing: ClosingWorker): Promise<void> {
  const { jobs, report } = closing;
  // Takes no new runs (a job BullMQ fetched already is refused by its run); its locks are still renewed.
  closing.queueWorker()?.pause(true).catch(report);
  // Every run taken has ended, by itself or stopped when the drain ran out, its processes gone.
  await jobs.idle();
  closing.drain.clear();
  closing.subscriber.disconnect();
  const worker = closing.queueWorker();
  if (worker !== null) {
    // What is left to tell Redis gets there if it can: the runs' terminals, BullMQ's end of their jobs.
    await within(GOODBYE_MS, Promise.allSettled([jobs.allSettled(closing.lockDurationMs), closing.redis.quit()]));
    // Then BullMQ's timers and connections end, whether Redis answered or not.
    await within(GOODBYE_MS, worker.close(true).catch(report));
  }
  closing.redis.disconnect();
}
