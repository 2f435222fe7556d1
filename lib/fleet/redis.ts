import type { RedisOptions } from 'ioredis';
import { redisOptions, type FleetConnection } from './connection.js';
import type { ErrorReport } from './on-error.js';
import { Redis } from './peers.js';

export { redisOptions, type FleetConnection };

/** What the caller side and the worker side of a fleet share: the Redis, the queue, the key prefix. */
export interface FleetOptions {
  /** Where Redis is: a URL or ioredis options (see {@link FleetConnection}). */
  readonly connection: FleetConnection;
  /** The BullMQ queue the runs go through. Default `agent-rx`. */
  readonly queue?: string;
  /** The prefix of agent-rx's own keys. Default `agentrx`. */
  readonly prefix?: string;
}

/** The keys of one run (`{runId}` is a hash tag: every script's keys are in one Cluster slot). */
export interface RunKeys {
  /** The run's Redis Stream: its messages, in order. */
  readonly stream: string;
  /** Set once the run's terminal message was appended (the append gate closes the stream). */
  readonly end: string;
  /** The worker that started the run (the start gate). */
  readonly owner: string;
  /** The run's heartbeat, renewed by its worker; it expires when the worker stops beating. */
  readonly heartbeat: string;
  /** Set when a caller cancelled the run (read with each heartbeat, besides the pub/sub message). */
  readonly cancel: string;
}

/**
 * The Redis keys of run `runId` under the key prefix `prefix`.
 *
 * @example
 * runKeys('agentrx', 'run-42').stream; // 'agentrx:{run-42}:stream'
 */
export function runKeys(prefix: string, runId: string): RunKeys {
  const base = `${prefix}:{${runId}}`;
  return { stream: `${base}:stream`, end: `${base}:end`, owner: `${base}:owner`, heartbeat: `${base}:hb`, cancel: `${base}:cancel` };
}

/** The channel every worker of a queue listens on for cancels. */
export function cancelChannel(prefix: string, queue: string): string {
  return `${prefix}:${queue}:cancel`;
}

/** How long a run's keys live: a day while it runs, an hour after its terminal. */
export const RUN_TTL_SECONDS = 24 * 3600;
export const ENDED_TTL_SECONDS = 3600;
/** A run's stream keeps about this many entries. */
export const STREAM_MAX_ENTRIES = 100_000;

/**
 * Every append to a run's stream (KEYS: stream, end; ARGV: message JSON, terminal 1 | 0, TTL after
 * the end in s, max entries, TTL while it runs in s): refused (nil) once the stream is closed; a
 * terminal closes it. Workers,
 * callers and watchdogs race through it harmlessly: the stream holds at most one terminal, last.
 */
const APPEND = `
if redis.call('EXISTS', KEYS[2]) == 1 then return false end
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[4], '*', 'm', ARGV[1])
if ARGV[2] == '1' then
  redis.call('SET', KEYS[2], id, 'EX', ARGV[3])
  redis.call('EXPIRE', KEYS[1], ARGV[3])
else
  if redis.call('TTL', KEYS[1]) < 0 then redis.call('EXPIRE', KEYS[1], ARGV[5]) end
end
return id
`;

/**
 * A worker takes a run (KEYS: end, cancel, owner, heartbeat; ARGV: worker, heartbeat TTL ms, key
 * TTL s): `ended` or `cancelled` when it must not start, `duplicate` when another worker took it
 * (a run starts at most once, ever), else `ok` with the first heartbeat set.
 */
const START = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 'ended' end
if redis.call('EXISTS', KEYS[2]) == 1 then return 'cancelled' end
if not redis.call('SET', KEYS[3], ARGV[1], 'NX', 'EX', ARGV[3]) then return 'duplicate' end
redis.call('SET', KEYS[4], ARGV[1], 'PX', ARGV[2])
return 'ok'
`;

/**
 * A worker's heartbeat for a run (KEYS: end, cancel, heartbeat, owner; ARGV: worker, TTL ms):
 * `ended` (someone closed the stream: stop the agent), `cancelled` (a cancel that pub/sub may have
 * lost), `forgotten` (the run is not this worker's any more: Redis lost its keys, restarted
 * without its data), else `ok`, the heartbeat renewed.
 */
const BEAT = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 'ended' end
if redis.call('EXISTS', KEYS[2]) == 1 then return 'cancelled' end
if redis.call('GET', KEYS[4]) ~= ARGV[1] then return 'forgotten' end
redis.call('SET', KEYS[3], ARGV[1], 'PX', ARGV[2])
return 'ok'
`;

/** A Redis client with the fleet's scripts. */
export interface FleetRedis extends Redis {
  agentRxAppend(stream: string, end: string, message: string, terminal: '1' | '0', endedTtl: number, maxEntries: number, runTtl: number): Promise<string | null>;
  agentRxStart(end: string, cancel: string, owner: string, heartbeat: string, worker: string, heartbeatTtlMs: number, runTtl: number): Promise<string>;
  agentRxBeat(end: string, cancel: string, heartbeat: string, owner: string, worker: string, heartbeatTtlMs: number): Promise<string>;
}

/**
 * A client for agent-rx's own keys. A command sent while Redis is unreachable fails after one
 * reconnection attempt (at most a second) instead of waiting for Redis, so that a caller or a
 * worker notices and decides; the client goes on reconnecting by itself. Its `error` events go to
 * `report` (a guarded `onError`: a listener that throws would throw out of ioredis's socket
 * handlers), never unhandled.
 */
export function fleetRedis(connection: FleetConnection, report: ErrorReport, options: RedisOptions = {}): FleetRedis {
  const client = new Redis({
    ...redisOptions(connection),
    maxRetriesPerRequest: 1,
    retryStrategy: (times) => Math.min(times * 100, 1000),
    lazyConnect: false,
    ...options,
  });
  client.on('error', report);
  client.defineCommand('agentRxAppend', { numberOfKeys: 2, lua: APPEND });
  client.defineCommand('agentRxStart', { numberOfKeys: 4, lua: START });
  client.defineCommand('agentRxBeat', { numberOfKeys: 4, lua: BEAT });
  return client as FleetRedis;
}

/** Appends through the gate; `null` when the stream is closed. */
export function append(redis: FleetRedis, keys: RunKeys, message: unknown, terminal: boolean): Promise<string | null> {
  return redis.agentRxAppend(keys.stream, keys.end, JSON.stringify(message), terminal ? '1' : '0', ENDED_TTL_SECONDS, STREAM_MAX_ENTRIES, RUN_TTL_SECONDS);
}

/**
 * Appends through the gate, for a worker: `false` when the stream is closed (someone else ended the
 * run), `true` when appended or when Redis failed (reported: the heartbeat decides then).
 */
export async function appendOrReport(redis: FleetRedis, report: ErrorReport, keys: RunKeys, message: unknown, terminal: boolean): Promise<boolean> {
  try {
    return (await append(redis, keys, message, terminal)) !== null;
  } catch (error) {
    report(error);
    return true;
  }
}
