import type { RedisOptions } from 'ioredis';
import { redisOptions, type FleetConnection } from './connection.js';
import type { ErrorReport } from './on-error.js';
import { Redis } from './peers.js';
import { defineSessionScripts, type SessionRedis } from './session-keys.js';

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
  /**
   * The callers' answers to the run's permission requests (a hash: request id → decision, the first
   * answer kept), read by its worker on each pub/sub message and with each heartbeat while a request waits.
   */
  readonly answers: string;
  /** Its permission requests whose resolution is not in the stream yet (a set of request ids): see the append gate. */
  readonly asking: string;
}

/**
 * The Redis keys of run `runId` under the key prefix `prefix`.
 *
 * @example
 * runKeys('agentrx', 'run-42').stream; // 'agentrx:{run-42}:stream'
 */
export function runKeys(prefix: string, runId: string): RunKeys {
  const base = `${prefix}:{${runId}}`;
  return { stream: `${base}:stream`, end: `${base}:end`, owner: `${base}:owner`, heartbeat: `${base}:hb`, cancel: `${base}:cancel`, answers: `${base}:answers`, asking: `${base}:asking` };
}

/** The channel every worker of a queue listens on for cancels. */
export function cancelChannel(prefix: string, queue: string): string {
  return `${prefix}:${queue}:cancel`;
}

/** The channel every worker of a queue listens on for the answers to permission requests. */
export function permissionChannel(prefix: string, queue: string): string {
  return `${prefix}:${queue}:permission`;
}

/** How long a run's keys live: a day while it runs, an hour after its terminal. */
export const RUN_TTL_SECONDS = 24 * 3600;
export const ENDED_TTL_SECONDS = 3600;
/** A run's stream keeps about this many entries. */
export const STREAM_MAX_ENTRIES = 100_000;

/**
 * Every append to a run's stream (KEYS: stream, end, answers, asking; ARGV: message JSON, terminal
 * 1 | 0, TTL after the end in s, max entries, TTL while it runs in s, `requested` | `resolved` | ''
 * for a permission message, its request id): refused (nil) once the stream is closed; a terminal
 * closes it (and its answers live as long as its stream then). Workers, callers and watchdogs race
 * through it harmlessly: the stream holds at most one terminal, last. A permission request stays in
 * `asking` until its resolution is appended; a terminal that finds some there (a cancel, a lost
 * worker: the worker's own resolutions cannot come any more) appends their denial first (`by:
 * 'run-end'`), so that every request in a stream is resolved before its end.
 */
const APPEND = `
if redis.call('EXISTS', KEYS[2]) == 1 then return false end
if ARGV[2] == '1' then
  for _, request in ipairs(redis.call('SMEMBERS', KEYS[4])) do
    local denied = cjson.encode({ type = 'permission.resolved', requestId = request, decision = 'deny', by = 'run-end' })
    redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[4], '*', 'm', denied)
  end
  redis.call('DEL', KEYS[4])
elseif ARGV[6] == 'requested' then
  redis.call('SADD', KEYS[4], ARGV[7])
  redis.call('EXPIRE', KEYS[4], ARGV[5])
elseif ARGV[6] == 'resolved' then
  redis.call('SREM', KEYS[4], ARGV[7])
end
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[4], '*', 'm', ARGV[1])
if ARGV[2] == '1' then
  redis.call('SET', KEYS[2], id, 'EX', ARGV[3])
  redis.call('EXPIRE', KEYS[1], ARGV[3])
  redis.call('EXPIRE', KEYS[3], ARGV[3])
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

/**
 * A caller's answer to a permission request (KEYS: end, answers; ARGV: request id, decision, key
 * TTL s, channel, message): `0` when the run has ended or the request was answered already (the
 * first answer is kept), else `1`: kept, and published for the workers (the run's worker takes it
 * from the message, or from the key with its next heartbeat when pub/sub lost the message).
 */
const ANSWER = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
if redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('EXPIRE', KEYS[2], ARGV[3])
redis.call('PUBLISH', ARGV[4], ARGV[5])
return 1
`;

/** A Redis client with the fleet's scripts. */
export interface FleetRedis extends SessionRedis {
  agentRxAppend(
    stream: string,
    end: string,
    answers: string,
    asking: string,
    message: string,
    terminal: '1' | '0',
    endedTtl: number,
    maxEntries: number,
    runTtl: number,
    permission: 'requested' | 'resolved' | '',
    requestId: string,
  ): Promise<string | null>;
  agentRxAnswer(end: string, answers: string, requestId: string, decision: string, runTtl: number, channel: string, message: string): Promise<number>;
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
  client.defineCommand('agentRxAppend', { numberOfKeys: 4, lua: APPEND });
  client.defineCommand('agentRxAnswer', { numberOfKeys: 2, lua: ANSWER });
  client.defineCommand('agentRxStart', { numberOfKeys: 4, lua: START });
  client.defineCommand('agentRxBeat', { numberOfKeys: 4, lua: BEAT });
  defineSessionScripts(client);
  return client as FleetRedis;
}

/** Appends through the gate; `null` when the stream is closed. */
export function append(redis: FleetRedis, keys: RunKeys, message: unknown, terminal: boolean): Promise<string | null> {
  const { permission, requestId } = permissionOf(message);
  return redis.agentRxAppend(keys.stream, keys.end, keys.answers, keys.asking, JSON.stringify(message), terminal ? '1' : '0', ENDED_TTL_SECONDS, STREAM_MAX_ENTRIES, RUN_TTL_SECONDS, permission, requestId);
}

// What the gate keeps of a permission message: which request is asked or resolved.
function permissionOf(message: unknown): { permission: 'requested' | 'resolved' | ''; requestId: string } {
  if (typeof message === 'object' && message !== null) {
    const { type, requestId } = message as { readonly type?: unknown; readonly requestId?: unknown };
    if (typeof requestId === 'string' && (type === 'permission.requested' || type === 'permission.resolved')) return { permission: type === 'permission.requested' ? 'requested' : 'resolved', requestId };
  }
  return { permission: '', requestId: '' };
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
