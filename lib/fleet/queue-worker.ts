import type { ConnectionOptions, Job } from 'bullmq';
import type { RedisOptions } from 'ioredis';
import type { ErrorReport } from './on-error.js';
import { Worker } from './peers.js';

/** How a fleet worker takes jobs from BullMQ, and what it is told of them. */
export interface QueueWorkerOptions {
  readonly queue: string;
  readonly connection: RedisOptions;
  readonly concurrency: number;
  readonly lockDurationMs: number;
  readonly stalledIntervalMs: number;
  readonly report: ErrorReport;
  /** Runs a job; BullMQ's AbortSignal is given when BullMQ cancels it. */
  readonly process: (job: Job, signal: AbortSignal | undefined) => Promise<void>;
  /** The lock on these jobs could not be renewed: each may be taken for stalled. */
  readonly lockLost: (jobIds: readonly string[]) => void;
  /** BullMQ failed the job (maybe without running it: a stall, a second start). */
  readonly failed: (jobId: string, error: Error) => void;
  readonly completed: (jobId: string) => void;
}

/**
 * BullMQ's worker for a fleet worker, set so that a job is never delivered twice
 * (`maxStalledCount: 0`, `maxStartedAttempts: 1`), its events told to the fleet worker. BullMQ's
 * `error` events go to the guarded report, never to a listener that could throw.
 */
export function startQueueWorker(options: QueueWorkerOptions): Worker {
  // Three declared parameters: BullMQ gives the processor an AbortSignal only then.
  const processor = (job: Job, _token?: string, signal?: AbortSignal): Promise<void> => options.process(job, signal);
  const worker = new Worker(options.queue, processor, {
    connection: options.connection as ConnectionOptions,
    concurrency: options.concurrency,
    maxStalledCount: 0,
    maxStartedAttempts: 1,
    lockDuration: options.lockDurationMs,
    stalledInterval: options.stalledIntervalMs,
  });
  worker.on('error', options.report);
  // A run whose lock is lost may be taken for stalled: it stops rather than run unguarded.
  worker.on('lockRenewalFailed', (ids: string[]) => {
    options.lockLost(ids);
  });
  // A job BullMQ failed without running it (a stall, a second start): its stream must end.
  worker.on('failed', (job: Job | undefined, error: Error) => {
    if (job?.id !== undefined) options.failed(job.id, error);
  });
  worker.on('completed', (job: Job) => {
    if (job.id !== undefined) options.completed(job.id);
  });
  return worker;
}
