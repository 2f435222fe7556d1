import type { Redis } from './peers.js';

// The Redis side of a fleet session: its keys, and the scripts that keep its guarantees (one live
// activation at a time, fenced writes, every command taken once, a lost activation's open turn and
// taken commands answered).

/** The keys of one fleet session (`{session:<id>}` is a hash tag: every script's keys share a Cluster slot). */
export interface SessionKeys {
  /** The session's messages, in order (a Redis Stream, entries `m`): what every attachment and `followSession` reads. */
  readonly log: string;
  /** The commands sent to it (a Redis Stream, entries `c`, each with its key `k`), in order. */
  readonly commands: string;
  /** The id of the last command entry an activation took (each is taken once). */
  readonly applied: string;
  /** The commands taken and not answered yet: command id → its kind. */
  readonly taken: string;
  /** The live activation's lease: `<worker>/<fencing token>`, with a TTL its worker renews. */
  readonly lease: string;
  /** The fencing token counter: each activation's token is one more than the last. */
  readonly fence: string;
  /** Set while an activation waits in the queue (so that one is enqueued at a time). */
  readonly activating: string;
  /** The number of the turn that runs now (no key: none runs). */
  readonly open: string;
  /** The highest turn number in the log. */
  readonly lastTurn: string;
  /** The conversation's snapshot (JSON). */
  readonly snapshot: string;
  /**
   * A random value the first command sent sets, and every command keeps: a caller that finds
   * another value, or none, knows Redis lost the session's state (restarted without its data).
   */
  readonly epoch: string;
}

/**
 * The Redis keys of the fleet session `sessionId` under the key prefix `prefix`.
 *
 * @example
 * sessionKeys('agentrx', 'chat-42').log; // 'agentrx:{session:chat-42}:log'
 */
export function sessionKeys(prefix: string, sessionId: string): SessionKeys {
  const base = `${prefix}:{session:${sessionId}}`;
  return {
    log: `${base}:log`,
    commands: `${base}:commands`,
    applied: `${base}:applied`,
    taken: `${base}:taken`,
    lease: `${base}:lease`,
    fence: `${base}:fence`,
    activating: `${base}:activating`,
    open: `${base}:open`,
    lastTurn: `${base}:last-turn`,
    snapshot: `${base}:snapshot`,
    epoch: `${base}:epoch`,
  };
}

/** How long a session's keys live after its last activity: a week. */
export const SESSION_TTL_SECONDS = 7 * 24 * 3600;
/** A session's log and command streams keep about this many entries. */
export const SESSION_MAX_ENTRIES = 100_000;

// Every script refreshes the TTL of what it writes: a session lives a week after its last activity.

/**
 * A caller sends a command (KEYS: commands, epoch; ARGV: command JSON, its key, `1` when an
 * earlier attempt may have appended it already, max entries, key TTL s, a new epoch): appended
 * with its key (`k`) unless `1` and one of the last entries has that key (an attempt whose answer
 * was lost is not appended twice); the epoch set when there is none. Answers the epoch.
 */
const SEND = `
local found = false
if ARGV[3] == '1' then
  for _, entry in ipairs(redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 64)) do
    local fields = entry[2]
    for i = 1, #fields, 2 do
      if fields[i] == 'k' and fields[i + 1] == ARGV[2] then found = true end
    end
  end
end
if not found then redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[4], '*', 'c', ARGV[1], 'k', ARGV[2]) end
redis.call('EXPIRE', KEYS[1], ARGV[5])
redis.call('SET', KEYS[2], ARGV[6], 'EX', ARGV[5], 'NX')
redis.call('EXPIRE', KEYS[2], ARGV[5])
return redis.call('GET', KEYS[2])
`;

/**
 * Whether an activation must be put on the queue (KEYS: lease, activating, commands, applied;
 * ARGV: how long the queued marker lives, ms): `1` when no activation is live or queued and a
 * command waits (one entry after `applied`); the marker is then set, so that one caller enqueues.
 */
const ENSURE = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
local last = redis.call('XREVRANGE', KEYS[3], '+', '-', 'COUNT', 1)
if #last == 0 then return 0 end
if redis.call('GET', KEYS[4]) == last[1][1] then return 0 end
redis.call('SET', KEYS[2], '1', 'PX', ARGV[1])
return 1
`;

/**
 * An activation takes the lease (KEYS: lease, fence, activating; ARGV: worker, lease TTL ms): its
 * fencing token, or nil when another activation holds it (at most one live activation, ever).
 */
const ACQUIRE = `
if redis.call('EXISTS', KEYS[1]) == 1 then return false end
local token = redis.call('INCR', KEYS[2])
redis.call('EXPIRE', KEYS[2], ARGV[3])
redis.call('SET', KEYS[1], ARGV[1] .. '/' .. token, 'PX', ARGV[2])
redis.call('DEL', KEYS[3])
return token
`;

/** Renews the lease (KEYS: lease; ARGV: holder, TTL ms): `ok`, or `lost` when it is not the holder's any more. */
const RENEW = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 'lost' end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 'ok'
`;

/**
 * The holder takes a command (KEYS: lease, applied, taken; ARGV: holder, entry id, command id,
 * kind, key TTL s): `fenced` when the lease is not its own, else `ok`: the command is the holder's
 * to answer (no other activation takes it).
 */
const TAKE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 'fenced' end
redis.call('SET', KEYS[2], ARGV[2], 'EX', ARGV[5])
redis.call('HSET', KEYS[3], ARGV[3], ARGV[4])
redis.call('EXPIRE', KEYS[3], ARGV[5])
return 'ok'
`;

/**
 * The holder appends a message to the log (KEYS: lease, log, open, taken, last turn; ARGV:
 * holder, message JSON, max entries, key TTL s): nil when the lease is not its own (fenced: a
 * worker that lost its lease writes nothing), else the entry id. It keeps which turn runs and
 * which taken commands are answered.
 */
const APPEND = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return false end
local m = cjson.decode(ARGV[2])
local command = m.commandId
if type(command) ~= 'string' then command = nil end
if m.type == 'turn.started' then
  redis.call('SET', KEYS[3], m.turn, 'EX', ARGV[4])
  redis.call('SET', KEYS[5], m.turn, 'EX', ARGV[4])
  if command then redis.call('HDEL', KEYS[4], command) end
elseif m.type == 'turn.completed' or m.type == 'turn.failed' then
  redis.call('DEL', KEYS[3])
elseif m.type == 'input.dropped' and command then
  redis.call('HDEL', KEYS[4], command)
elseif m.type == 'input.accepted' and command and m.as ~= 'follow-up' and m.as ~= 'turn' then
  redis.call('HDEL', KEYS[4], command)
end
local id = redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[3], '*', 'm', ARGV[2])
redis.call('EXPIRE', KEYS[2], ARGV[4])
return id
`;

/**
 * Any party, when the lease is gone (KEYS: lease, log, open, taken; ARGV: why, max entries, key TTL
 * s): the activation that held it is lost (its worker died, froze, or lost Redis), so its running
 * turn ends `turn.failed` (`lost`) and the commands it took and did not answer are dropped
 * (`session-ended`). Nothing when a lease is live. The number of messages appended.
 */
const LOST = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local count = 0
local turn = redis.call('GET', KEYS[3])
if turn then
  local failed = cjson.encode({ type = 'turn.failed', turn = tonumber(turn), reason = 'lost', message = ARGV[1] })
  redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[2], '*', 'm', failed)
  redis.call('DEL', KEYS[3])
  count = count + 1
end
local taken = redis.call('HGETALL', KEYS[4])
for i = 1, #taken, 2 do
  local dropped = cjson.encode({ type = 'input.dropped', kind = taken[i + 1], reason = 'session-ended', message = ARGV[1], commandId = taken[i] })
  redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[2], '*', 'm', dropped)
  count = count + 1
end
redis.call('DEL', KEYS[4])
if count > 0 then redis.call('EXPIRE', KEYS[2], ARGV[3]) end
return count
`;

/**
 * The holder gives the lease back once its agent is gone (KEYS: lease, commands, applied; ARGV:
 * holder, `force` | ''): `lost` when it is not its own, `pending` (kept) when a command came that
 * it has not taken (unless forced: a draining worker leaves them to another), else `released`.
 */
const RELEASE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 'lost' end
if ARGV[2] ~= 'force' then
  local last = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1)
  if #last > 0 and redis.call('GET', KEYS[3]) ~= last[1][1] then return 'pending' end
end
redis.call('DEL', KEYS[1])
return 'released'
`;

/** The holder saves the conversation's snapshot (KEYS: lease, snapshot; ARGV: holder, JSON, TTL s): `0` when fenced. */
const SAVE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[2], ARGV[2], 'EX', ARGV[3])
return 1
`;

/** A Redis client with the fleet session's scripts. */
export interface SessionRedis extends Redis {
  agentRxSessionSend(commands: string, epoch: string, command: string, key: string, again: '1' | '', maxEntries: number, ttl: number, newEpoch: string): Promise<string>;
  agentRxSessionEnsure(lease: string, activating: string, commands: string, applied: string, markerMs: number): Promise<number>;
  agentRxSessionAcquire(lease: string, fence: string, activating: string, worker: string, leaseMs: number, ttl: number): Promise<number | null>;
  agentRxSessionRenew(lease: string, holder: string, leaseMs: number): Promise<string>;
  agentRxSessionTake(lease: string, applied: string, taken: string, holder: string, entryId: string, commandId: string, kind: string, ttl: number): Promise<string>;
  agentRxSessionAppend(lease: string, log: string, open: string, taken: string, lastTurn: string, holder: string, message: string, maxEntries: number, ttl: number): Promise<string | null>;
  agentRxSessionLost(lease: string, log: string, open: string, taken: string, why: string, maxEntries: number, ttl: number): Promise<number>;
  agentRxSessionRelease(lease: string, commands: string, applied: string, holder: string, force: 'force' | ''): Promise<string>;
  agentRxSessionSave(lease: string, snapshot: string, holder: string, json: string, ttl: number): Promise<number>;
}

/** Defines the session scripts on a client. */
export function defineSessionScripts(client: Redis): void {
  client.defineCommand('agentRxSessionSend', { numberOfKeys: 2, lua: SEND });
  client.defineCommand('agentRxSessionEnsure', { numberOfKeys: 4, lua: ENSURE });
  client.defineCommand('agentRxSessionAcquire', { numberOfKeys: 3, lua: ACQUIRE });
  client.defineCommand('agentRxSessionRenew', { numberOfKeys: 1, lua: RENEW });
  client.defineCommand('agentRxSessionTake', { numberOfKeys: 3, lua: TAKE });
  client.defineCommand('agentRxSessionAppend', { numberOfKeys: 5, lua: APPEND });
  client.defineCommand('agentRxSessionLost', { numberOfKeys: 4, lua: LOST });
  client.defineCommand('agentRxSessionRelease', { numberOfKeys: 3, lua: RELEASE });
  client.defineCommand('agentRxSessionSave', { numberOfKeys: 2, lua: SAVE });
}
