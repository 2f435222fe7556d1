import type * as BullMQ from 'bullmq';
import type * as IORedis from 'ioredis';

// bullmq and ioredis, the optional peers agent-rx/fleet runs on. They are loaded here, by import(),
// rather than imported by name: a missing package then fails this module's evaluation, where it can
// be said in words, instead of failing the link of the whole entry point with Node's bare
// ERR_MODULE_NOT_FOUND before any of its code runs. The command line says the same message.

const MISSING_PEERS = 'agent-rx/fleet needs the optional packages bullmq and ioredis: npm install bullmq ioredis';

const [bullmq, ioredis] = await Promise.allSettled([import('bullmq'), import('ioredis')]);
if (bullmq.status === 'rejected' || ioredis.status === 'rejected') throw peersError([bullmq, ioredis]);

export const Queue: typeof BullMQ.Queue = bullmq.value.Queue;
export type Queue = BullMQ.Queue;
export const Worker: typeof BullMQ.Worker = bullmq.value.Worker;
export type Worker = BullMQ.Worker;
export const UnrecoverableError: typeof BullMQ.UnrecoverableError = bullmq.value.UnrecoverableError;
export const Redis: typeof IORedis.Redis = ioredis.value.Redis;
export type Redis = IORedis.Redis;

/** The error for failed loads: what to install when a package is missing; any other failure as it is. */
function peersError(loads: readonly PromiseSettledResult<unknown>[]): Error {
  const failures = loads.flatMap((load) => (load.status === 'rejected' ? [load.reason as unknown] : []));
  const missing = ['bullmq', 'ioredis'].filter((name) => failures.some((failure) => isMissing(failure, name)));
  const [first] = failures;
  // A package that is there but fails to load (a broken install) is not a missing one.
  if (missing.length === 0) return first instanceof Error ? first : new Error(String(first));
  return new Error(`${MISSING_PEERS} (${missing.join(' and ')} cannot be found from agent-rx)`, { cause: first });
}

function isMissing(error: unknown, name: string): boolean {
  if (!(error instanceof Error) || (error as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') return false;
  return error.message.includes(`'${name}'`);
}
