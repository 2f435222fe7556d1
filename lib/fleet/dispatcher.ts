import type { ConnectionOptions } from 'bullmq';
import { randomUUID } from 'node:crypto';
import { Observable } from 'rxjs';
import { CliMessageSchema, isTerminal, type CliMessage, type TerminalFailed } from '../messages.js';
import { describeConnection } from './connection.js';
import { fleetFailure } from './failure.js';
import { guardOnError, type ErrorReport } from './on-error.js';
import { Queue, type Redis } from './peers.js';
import { RedisWatch } from './redis-watch.js';
import { checkRunSpec, type RunSpec } from './run-spec.js';
import { append, cancelChannel, fleetRedis, redisOptions, runKeys, RUN_TTL_SECONDS, type FleetOptions, type FleetRedis, type RunKeys } from './redis.js';

/**
 * Options of {@link createRunDispatcher}: where Redis is (see {@link FleetOptions}) and how long a
 * silence means a run is lost.
 */
export interface RunDispatcherOptions extends FleetOptions {
  /**
   * No successful answer from Redis for this long: every run being read ends with `lost` (it
   * cannot be written, so it is given to this caller's subscribers only). A Redis that has not
   * answered once since the dispatcher was created has as long to come up (it may be starting);
   * then its runs end with `setup` and the connection's error (an address or a Redis to fix,
   * which `retryAgentRun` does not retry). Default 10000.
   */
  readonly lostAfterMs?: number;
  /** A run no worker has taken after this long is removed from the queue and ends with `lost`. Default: no limit. */
  readonly startTimeoutMs?: number;
  /** How long one read waits for new entries. Default 250. */
  readonly blockMs?: number;
  /**
   * Told what went wrong talking to Redis (the dispatcher goes on, and decides `lost` itself). A
   * throw from it is swallowed, never an uncaught exception; the first one is told once on
   * `process.emitWarning`.
   */
  readonly onError?: (error: Error) => void;
}

/** An entry of a run's stream: its id (for a later `follow`, an SSE `id:`) and its message. */
export interface RunEntry {
  /**
   * The entry's id in the run's Redis Stream: give it to {@link RunDispatcher.follow} as `after` to
   * read on from there (an SSE `id:`).
   */
  readonly id: string;
  /** The run's message. */
  readonly message: CliMessage;
}

/**
 * The caller side of the fleet (from {@link createRunDispatcher}): runs described as data
 * ({@link RunSpec}), enqueued on BullMQ and streamed back from Redis as the same cold
 * `Observable<CliMessage>` a local run gives, with exactly one terminal message.
 */
export interface RunDispatcher {
  /**
   * Cold: each subscription enqueues a new run (under `runId` when given, else a new id) and
   * streams its messages until its terminal. Unsubscribing cancels it, queued or running. A spec
   * that is not one throws a `TypeError` now.
   */
  run(spec: RunSpec, options?: { readonly runId?: string }): Observable<CliMessage>;
  /**
   * A run's entries after `after` (an entry id, as `follow` and SSE `id:` give; default: from its
   * start), until its terminal; nothing when `after` is its terminal's id. Never enqueues;
   * unsubscribing only stops reading. A run nobody knows ends with `lost` (after a second: a
   * reader may start a moment before another caller enqueues the run).
   */
  follow(runId: string, options?: { readonly after?: string }): Observable<RunEntry>;
  /** Cancels a run: removed from the queue if waiting, stopped on its worker if running; its stream ends `aborted`. */
  cancel(runId: string): Promise<void>;
  /**
   * Cancels the runs this dispatcher's `run` started and still streams (they end with `stopped`),
   * ends its other readers (`lost`: this reader stopped, the run goes on), and closes its connections.
   */
  close(): Promise<void>;
}

interface Follower {
  readonly runId: string;
  readonly keys: RunKeys;
  /** Started by this dispatcher's `run` (closing the dispatcher cancels it). */
  readonly own: boolean;
  /** The last entry id delivered. */
  after: string;
  /** When this dispatcher enqueued the run (it may time its start out); `null` for a reader. */
  readonly enqueuedAt: number | null;
  /** When its liveness was last looked at. */
  checkedAt: number;
  /** When it began reading. */
  readonly joinedAt: number;
  entry(entry: RunEntry): void;
  /** The run ended without a terminal in its stream that this caller could read. */
  lost(terminal: TerminalFailed): void;
  /** The reader started at or after the run's terminal: there is nothing left to read. */
  over(): void;
}

export { fleetFailure };

/**
 * The caller's side of the fleet: runs go to the workers through BullMQ, their messages come back
 * on one Redis stream per run, read by one blocking connection for all the runs this dispatcher
 * reads. Each run ends with exactly one terminal whatever happens: the worker's, a cancel's, or
 * `lost` when its worker stopped beating (any reader writes it, through the append gate) or Redis
 * could not be reached for `lostAfterMs`.
 *
 * `bullmq` (6.7+) and `ioredis` (5) are optional peer dependencies, needed by `agent-rx/fleet`
 * only. A spec is checked here before anything is enqueued (an invalid one throws a `TypeError`),
 * and again on the worker. Use the fleet when runs must outlive or outnumber one machine; the
 * single process is the default and stays the simplest.
 *
 * | guarantee | how |
 * |---|---|
 * | exactly one terminal per run, last | every append goes through one Lua gate; the first terminal closes the stream, so a worker's terminal, a cancel, a watchdog and BullMQ's failure handler race harmlessly |
 * | a run never starts twice | an atomic start gate, and BullMQ set to fail a stalled job instead of delivering it again (`maxStalledCount: 0`, `maxStartedAttempts: 1`, `attempts: 1`) |
 * | unsubscribe cancels, queued or running | a durable cancel key plus pub/sub: the worker runs the stop sequence; a waiting job is removed |
 * | a dead, frozen or cut-off worker ends the run `lost` within seconds | a heartbeat per run (1 s, 3 s TTL); any reader that finds it gone writes `lost` through the gate |
 * | Redis going away crashes nothing, hangs nothing | callers end `lost` after `lostAfterMs` (10 s) without a reply; workers live on and serve again when it is back |
 * | a Redis that never answered is a setting to fix, not a lost run | a run waits `lostAfterMs` for its first answer (it may be starting), then ends `setup` with the connection's error, not retried |
 * | resume | stream entry ids: `follow(runId, { after })` replays exactly the rest (an SSE `Last-Event-ID`) |
 *
 * Not supported yet: sessions through the fleet (one-shot runs only) and Redis Cluster (each run's
 * keys share a hash tag, but it is not tested).
 *
 * @example
 * const fleet = createRunDispatcher({ connection: 'redis://10.0.0.5:6379' });
 * const subscription = fleet
 *   .run({ agent: 'pi', options: { prompt: 'Fix the failing test', cwd: '/srv/work/app' } }, { runId })
 *   .pipe(retryAgentRun()) // a lost run is run again, never one that used tools
 *   .subscribe(render); // unsubscribe = cancel: the stop sequence runs on the worker
 * fleet.follow(runId, { after: lastEventId }); // another reader, or one resuming: { id, message } entries
 */
export function createRunDispatcher(options: RunDispatcherOptions): RunDispatcher {
  return new Dispatcher(options);
}

class Dispatcher implements RunDispatcher {
  readonly #prefix: string;
  readonly #queueName: string;
  readonly #queue: Queue;
  readonly #redis: FleetRedis;
  readonly #reader: Redis;
  readonly #followers = new Set<Follower>();
  readonly #cancelling = new Set<Promise<void>>();
  readonly #lostAfterMs: number;
  readonly #startTimeoutMs: number | undefined;
  readonly #blockMs: number;
  readonly #report: ErrorReport;
  /** Whether Redis ever answered, and why it does not now. */
  readonly #watch: RedisWatch;
  readonly #startedAt = performance.now();
  /** Aborted by `close`: a run waiting for Redis's first answer stops waiting. */
  readonly #closeController = new AbortController();
  #readerId: number | null = null;
  #lastOk = performance.now();
  #closed = false;
  #closing: Promise<void> | null = null;
  #wake: (() => void) | null = null;
  readonly #loop: Promise<void>;

  constructor(options: RunDispatcherOptions) {
    this.#report = guardOnError(options.onError, 'createRunDispatcher');
    this.#prefix = options.prefix ?? 'agentrx';
    this.#queueName = options.queue ?? 'agent-rx';
    this.#lostAfterMs = options.lostAfterMs ?? 10_000;
    this.#startTimeoutMs = options.startTimeoutMs;
    this.#blockMs = options.blockMs ?? 250;
    const connection = redisOptions(options.connection);
    this.#queue = new Queue(this.#queueName, { connection: { ...connection, maxRetriesPerRequest: 1 } as ConnectionOptions });
    this.#queue.on('error', this.#report);
    this.#redis = fleetRedis(connection, this.#report);
    this.#watch = new RedisWatch(describeConnection(connection), this.#redis);
    this.#reader = fleetRedis(connection, this.#report);
    this.#reader.on('ready', () => {
      this.#reader.client('ID').then(
        (id) => {
          this.#readerId = id;
        },
        (error: unknown) => {
          this.#report(error);
        },
      );
    });
    this.#loop = this.#read();
  }

  run(spec: RunSpec, options: { readonly runId?: string } = {}): Observable<CliMessage> {
    const checked = checkRunSpec(spec);
    if (options.runId !== undefined) checkRunId(options.runId);
    return new Observable<CliMessage>((subscriber) => {
      const runId = options.runId ?? randomUUID();
      const keys = runKeys(this.#prefix, runId);
      let ended = false;
      const end = (message: CliMessage): void => {
        ended = true;
        this.#followers.delete(follower);
        subscriber.next(message);
        subscriber.complete();
      };
      const follower: Follower = {
        runId,
        keys,
        own: true,
        after: '0-0',
        enqueuedAt: performance.now(),
        checkedAt: performance.now(),
        joinedAt: performance.now(),
        entry: ({ message }) => {
          if (isTerminal(message)) end(message);
          else subscriber.next(message);
        },
        lost: end,
        over: () => undefined,
      };
      void this.#enqueue(runId, keys, checked).then((problem) => {
        if (ended || subscriber.closed) return;
        if (problem !== null) end(problem);
        else this.#join(follower);
      });
      return () => {
        this.#followers.delete(follower);
        if (!ended) {
          ended = true;
          const cancelling = this.cancel(runId).catch((error: unknown) => {
            this.#report(error);
          });
          // `close` waits for it: the cancel must reach Redis before the connections go.
          this.#cancelling.add(cancelling);
          void cancelling.finally(() => this.#cancelling.delete(cancelling));
        }
      };
    });
  }

  follow(runId: string, options: { readonly after?: string } = {}): Observable<RunEntry> {
    checkRunId(runId);
    const after = options.after ?? '0-0';
    if (!ENTRY_ID.test(after)) throw new TypeError(`agent-rx: after must be a stream entry id (<ms>-<seq>); got ${JSON.stringify(after)}`);
    return new Observable<RunEntry>((subscriber) => {
      const follower: Follower = {
        runId,
        keys: runKeys(this.#prefix, runId),
        own: false,
        after: after.includes('-') ? after : `${after}-0`,
        enqueuedAt: null,
        // Looked at in the first round: a reader past the terminal is over at once.
        checkedAt: 0,
        joinedAt: performance.now(),
        entry: (entry) => {
          subscriber.next(entry);
          if (isTerminal(entry.message)) subscriber.complete();
        },
        lost: (terminal) => {
          this.#followers.delete(follower);
          subscriber.next({ id: '', message: terminal });
          subscriber.complete();
        },
        over: () => {
          this.#followers.delete(follower);
          subscriber.complete();
        },
      };
      this.#join(follower);
      return () => {
        this.#followers.delete(follower);
      };
    });
  }

  async cancel(runId: string): Promise<void> {
    checkRunId(runId);
    const keys = runKeys(this.#prefix, runId);
    // Durable first (a worker's beat and the start gate read it), then the fast path (pub/sub).
    await this.#redis.multi().set(keys.cancel, '1', 'EX', RUN_TTL_SECONDS).publish(cancelChannel(this.#prefix, this.#queueName), runId).exec();
    const removed = await this.#queue.remove(runId);
    await append(this.#redis, keys, fleetFailure('aborted', removed === 1 ? 'the run was cancelled before it started' : 'the run was cancelled'), true);
  }

  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    this.#closed = true;
    this.#closeController.abort();
    this.#wake?.();
    const followers = [...this.#followers];
    this.#followers.clear();
    this.#unblock();
    // The runs this dispatcher started stop with it, as a host's runs stop with the host; readers of
    // other runs just stop reading.
    await Promise.allSettled([...followers.filter((follower) => follower.own).map((follower) => this.cancel(follower.runId)), ...this.#cancelling]);
    for (const follower of followers) {
      follower.lost(follower.own ? fleetFailure('stopped', 'the dispatcher was closed: the run was cancelled') : fleetFailure('lost', 'the dispatcher was closed before the run ended: this reader stopped'));
    }
    await this.#loop;
    await Promise.allSettled([this.#queue.close(), this.#redis.quit(), this.#reader.quit()]);
    this.#reader.disconnect();
    this.#redis.disconnect();
  }

  #isClosed(): boolean {
    return this.#closed;
  }

  /** Puts a new run on the queue; the terminal to end it with when that cannot be done. */
  async #enqueue(runId: string, keys: RunKeys, spec: RunSpec): Promise<TerminalFailed | null> {
    // A Redis that has not answered yet may be starting: it has lostAfterMs from this dispatcher's
    // start to answer, after which the run ends `setup` (its address or its state is to be fixed).
    if (!this.#watch.everReady && !(await this.#watch.ready(this.#startedAt + this.#lostAfterMs, this.#closeController.signal))) {
      return this.#closed ? fleetFailure('stopped', 'the dispatcher was closed before the run was put on the queue') : this.#watch.unreachable();
    }
    try {
      // A run id is used once: reading its stream again would replay another run.
      const used = await this.#redis.exists(keys.stream, keys.end, keys.owner);
      if (used > 0) return fleetFailure('setup', `the run id ${runId} was used already`);
      await this.#queue.add('run', spec, { jobId: runId, attempts: 1, removeOnComplete: true, removeOnFail: true });
      this.#lastOk = performance.now();
      return null;
    } catch (error) {
      if (!this.#watch.everReady) return this.#watch.unreachable(asError(error));
      return fleetFailure('lost', `the run could not be put on the queue at ${this.#watch.where}: ${this.#watch.reason(asError(error))}`);
    }
  }

  #join(follower: Follower): void {
    if (this.#closed) {
      follower.lost(fleetFailure('lost', 'the dispatcher is closed'));
      return;
    }
    this.#followers.add(follower);
    this.#wake?.();
    this.#unblock();
  }

  /** Ends the reader's wait now, so that a new follower is read at once. */
  #unblock(): void {
    if (this.#readerId !== null) this.#redis.client('UNBLOCK', this.#readerId).catch(() => undefined);
  }

  /** The reading loop: one `XREAD` for every run followed, and the liveness checks when nothing comes. */
  async #read(): Promise<void> {
    while (!this.#closed) {
      if (this.#followers.size === 0) {
        await new Promise<void>((resolve) => {
          this.#wake = resolve;
        });
        this.#wake = null;
        continue;
      }
      // One cursor per stream: the lowest of its followers'.
      const cursors = new Map<string, string>();
      for (const follower of this.#followers) {
        const known = cursors.get(follower.keys.stream);
        if (known === undefined || compareIds(follower.after, known) < 0) cursors.set(follower.keys.stream, follower.after);
      }
      try {
        const reply = (await this.#reader.xread('COUNT', 1000, 'BLOCK', this.#blockMs, 'STREAMS', ...cursors.keys(), ...cursors.values()));
        this.#lastOk = performance.now();
        if (reply !== null) this.#deliver(reply);
        await this.#check();
      } catch (error) {
        if (this.#isClosed()) return;
        this.#report(error);
        if (performance.now() - this.#lastOk >= this.#lostAfterMs) {
          const terminal = this.#watch.everReady ? this.#unreachableFor(asError(error)) : this.#watch.unreachable(asError(error));
          for (const follower of [...this.#followers]) {
            this.#followers.delete(follower);
            follower.lost(terminal);
          }
        }
        await delay(100);
      }
    }
  }

  /** The terminal of the runs being read when Redis stopped answering for lostAfterMs. */
  #unreachableFor(error: Error): TerminalFailed {
    return fleetFailure('lost', `the fleet's Redis at ${this.#watch.where} could not be reached for ${String(this.#lostAfterMs)} ms (lostAfterMs): the run's end is unknown (${this.#watch.reason(error)})`);
  }

  #deliver(reply: [string, [string, string[]][]][]): void {
    for (const [stream, entries] of reply) {
      for (const follower of [...this.#followers]) {
        if (follower.keys.stream !== stream) continue;
        for (const [id, fields] of entries) {
          if (!this.#followers.has(follower) || compareIds(id, follower.after) <= 0) continue;
          follower.after = id;
          follower.checkedAt = performance.now();
          const message = parseEntry(fields);
          if (message === null) continue;
          if (isTerminal(message)) this.#followers.delete(follower);
          follower.entry({ id, message });
        }
      }
    }
  }

  /** For the runs quiet for a while: is their worker still beating? A run whose worker stopped is written `lost`. */
  async #check(): Promise<void> {
    const now = performance.now();
    const due = [...this.#followers].filter((follower) => now - follower.checkedAt >= this.#blockMs * 2);
    await Promise.all(due.map((follower) => this.#checkOne(follower, now)));
  }

  async #checkOne(follower: Follower, now: number): Promise<void> {
    follower.checkedAt = now;
    const { keys } = follower;
    const [owner, beat, end] = await this.#redis.mget(keys.owner, keys.heartbeat, keys.end);
    if (end !== null && end !== undefined) {
      if (compareIds(follower.after, end) >= 0) follower.over();
      return;
    }
    if (owner !== null && owner !== undefined) {
      if (beat === null || beat === undefined) {
        // Any reader may write it: the gate keeps the first terminal only.
        await append(this.#redis, keys, fleetFailure('lost', `the worker ${owner} stopped beating (killed, frozen or cut off); the agent may have done part of its work`), true);
      }
      return;
    }
    // Not taken yet: still queued, timed out, or gone from the queue without a start.
    const waited = follower.enqueuedAt === null ? null : now - follower.enqueuedAt;
    if (this.#startTimeoutMs !== undefined && waited !== null && waited >= this.#startTimeoutMs) {
      if ((await this.#queue.remove(follower.runId)) === 1) {
        await append(this.#redis, keys, fleetFailure('lost', `no worker took the run within startTimeoutMs (${String(this.#startTimeoutMs)} ms)`), true);
        return;
      }
    }
    if ((await this.#queue.getJobState(follower.runId)) !== 'unknown') return;
    // Read again: a worker may have taken it and finished it meanwhile.
    const [ownerNow, endNow, stream] = await Promise.all([this.#redis.get(keys.owner), this.#redis.get(keys.end), this.#redis.exists(keys.stream)]);
    if (ownerNow !== null || endNow !== null) return;
    if (follower.own || stream === 1) {
      // Nobody holds it and nobody will: it was failed or removed before its start, or Redis lost it.
      await append(this.#redis, keys, fleetFailure('lost', 'nobody runs the run: it left the queue without being started, or Redis lost its state'), true);
    } else if (now - follower.joinedAt >= UNKNOWN_RUN_GRACE_MS) {
      // A reader of a run nobody knows would wait forever. (Not at once: a reader may come a
      // moment before the run it follows is put on the queue by another caller.)
      follower.lost(fleetFailure('lost', `no run ${follower.runId} is known (never enqueued, or its stream expired)`));
    }
  }
}

/** A stream entry's message (`m`), when it is one; anything else is skipped. */
function parseEntry(fields: readonly string[]): CliMessage | null {
  const at = fields.indexOf('m');
  const text = at === -1 ? undefined : fields[at + 1];
  if (text === undefined) return null;
  try {
    const parsed = CliMessageSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** How long a reader of a run nobody knows waits for it to be enqueued before it ends `lost`. */
const UNKNOWN_RUN_GRACE_MS = 1000;

const ENTRY_ID = /^\d{1,20}(?:-\d{1,20})?$/;

function checkRunId(runId: string): void {
  if (typeof runId !== 'string' || !/^[\w.:-]{1,200}$/.test(runId)) {
    throw new TypeError(`agent-rx: a run id is 1 to 200 letters, digits, and _ . : -; got ${JSON.stringify(runId)}`);
  }
}

/** Orders stream entry ids (`<ms>-<seq>`). */
export function compareIds(a: string, b: string): number {
  const [am = '0', as = '0'] = a.split('-');
  const [bm = '0', bs = '0'] = b.split('-');
  const ms = BigInt(am) - BigInt(bm);
  if (ms !== 0n) return ms < 0n ? -1 : 1;
  const seq = BigInt(as) - BigInt(bs);
  return seq === 0n ? 0 : seq < 0n ? -1 : 1;
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
