import type { ConnectionOptions } from 'bullmq';
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { Observable } from 'rxjs';
import { isTerminal, PermissionDecisionSchema, type CliMessage, type PermissionDecision, type TerminalFailed } from '../messages.js';
import type { PermissionCallback } from '../operators/permission-policy.js';
import { CallerAsks } from './caller-asks.js';
import { describeConnection } from './connection.js';
import { fleetFailure } from './failure.js';
import { checkLiveness } from './liveness-check.js';
import { asError } from '../process/error-message.js';
import { guardOnError, type ErrorReport } from './on-error.js';
import { Queue } from './peers.js';
import { RedisWatch } from './redis-watch.js';
import { RunReader, type Follower } from './run-reader.js';
import type { RunEntry } from './stream-entries.js';

export type { RunEntry };
import type { RunSpec } from './run-spec.js';
import { traceContextOf } from '../process/trace-context.js';
import { currentRunScope } from '../process/run-scope.js';
import { prepareSpec, type DispatchSpec } from './dispatch-spec.js';
import { checkRunOutputWith } from '../operators/turn-output.js';
import { writeAnswer } from './permission-answers.js';
import { append, cancelChannel, fleetRedis, permissionChannel, redisOptions, runKeys, RUN_TTL_SECONDS, type FleetOptions, type FleetRedis, type RunKeys } from './redis.js';
import { checkRunId, readAfter } from './stream-entries.js';
import { attachSession, followSession, type SessionCaller, type SessionEntry } from './session-attach.js';
import type { SessionSpec } from './session-spec.js';
import type { SessionCommand, SessionMessage } from '../messages.js';
import type { OperatorFunction } from 'rxjs';

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

/** Options of {@link RunDispatcher.run}. */
export interface DispatchOptions {
  /** The run's id (default: a new one); an id is used once. */
  readonly runId?: string;
  /**
   * Decides the run's permission requests, for a spec with `permission: 'ask'`: each
   * `permission.requested` read from the run's stream is given to it, and its decision (a value, a
   * promise, or an Observable's first value) goes back to the worker. Its signal aborts when the
   * request is settled otherwise (the worker's deadline, another reader's answer) or the run ends.
   * What it throws, or what is not a decision, errors the stream and cancels the run, as an
   * unsubscribe does. Without it, such a run's requests wait for {@link RunDispatcher.answer}
   * (a reader's, e.g. a web page's) or the deadline.
   */
  readonly permission?: PermissionCallback;
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
   * that is not one throws a `TypeError` now, and so does a `permission` callback for a spec
   * without `permission: 'ask'`.
   *
   * The spec is made plain JSON now, on this machine ({@link toRunSpec}): the prompt's images (by
   * path or as bytes) and files are read and checked here (a `TypeError` names a part that cannot
   * be read, is too big or is not an image), images travel as base64 data, files as text parts
   * holding a `<file path="…">` block; a zod `outputSchema` travels as its JSON Schema. Every
   * subscription sends the same bytes. A part the agent cannot take is refused by the worker,
   * in-band: `terminal.failed` (`setup`) with the agent's `TypeError` naming the part.
   *
   * Tools: `options.mcpServers` names servers of the worker's (`serveRuns({ mcpServers })`); a
   * worker that does not offer one refuses the run in-band (`setup`). Host tools (`tool(...)`)
   * are functions of this process and cannot cross Redis: a `TypeError` now.
   *
   * `outputSchema`: the worker validates the answer against the JSON Schema (its
   * `terminal.completed.output`, else `terminal.failed` with `output-schema`); a zod schema is
   * checked again here, on the worker's value, so that `output` is typed through it and holds
   * what the zod schema says (its refinements, defaults and transforms, which a JSON Schema does
   * not carry), exactly as a local run's.
   */
  run<Output = unknown>(spec: DispatchSpec<Output>, options?: DispatchOptions): Observable<CliMessage<Output>>;
  /**
   * A run's entries after `after` (an entry id, as `follow` and SSE `id:` give; default: from its
   * start), until its terminal; nothing when `after` is its terminal's id. Never enqueues;
   * unsubscribing only stops reading. A run nobody knows ends with `lost` (after a second: a
   * reader may start a moment before another caller enqueues the run). Entries are as the worker
   * wrote them: a typed run's `terminal.completed.output` was checked against the spec's JSON
   * Schema; to check it with the zod schema and type it, map the entries to their messages and pipe
   * `checkRunOutput(schema)`.
   */
  follow(runId: string, options?: { readonly after?: string }): Observable<RunEntry>;
  /** Cancels a run: removed from the queue if waiting, stopped on its worker if running; its stream ends `aborted`. */
  cancel(runId: string): Promise<void>;
  /**
   * Answers a permission request of a run with `permission: 'ask'` (its `requestId` from the
   * `permission.requested` in the run's stream): any reader may, e.g. a web page that `follow`s
   * the run. The first answer counts; one for a request that is unknown, already settled (the
   * worker's deadline, another answer), or of a run that ended is ignored. Rejects with a
   * `TypeError` for a decision that is not one (`allow`, `allow-always`, `deny`, `deny-always`).
   */
  answer(runId: string, requestId: string, decision: PermissionDecision): Promise<void>;
  /**
   * A conversation on the fleet, addressable by `sessionId`, whose agent runs on some worker: an
   * operator from commands to the session's messages, like a local session's. The first command
   * activates it on a worker (from the session's last snapshot when it has one); after the spec's
   * `idleMs` (default 60 s) without a turn, the worker saves the conversation, ends the agent and
   * frees its slot (`session.passivated`), and the next command activates it again on any worker
   * (`session.resumed`). At most one activation is live at a time (a lease with a fencing token: a
   * worker that lost it writes nothing more and stops its agent); commands are taken in order,
   * each once; a turn running when its worker died ends `turn.failed` (`lost`) and the next prompt
   * goes on from the last completed turn (a turn's `turn.completed` is written once its snapshot
   * is saved). Turns are numbered on across activations. When Redis loses the session's state
   * (restarted without its data), its running turn ends `lost` and its other commands are dropped
   * (`session-ended`), an `agent.warning` says so, and the next prompt starts the conversation
   * again. A command Redis did not take (it was away) is sent again until it does (once: an
   * attempt whose answer was lost is not appended twice); after `lostAfterMs` without Redis the
   * attachment ends `lost`.
   *
   * Several callers may attach to one session id: each reads the session's messages from the
   * moment it subscribes. Completing the commands ends the attachment once each is answered (a
   * `terminal.completed` of its own); unsubscribing only stops reading: the session lives on
   * (a running turn finishes, then it falls asleep). An invalid spec or id throws a `TypeError` now.
   * Needs workers that run the spec's agent and can resume its conversations (pi, Claude Code,
   * Codex, Qwen Code).
   */
  session(sessionId: string, spec: SessionSpec): OperatorFunction<SessionCommand, SessionMessage>;
  /**
   * A fleet session's messages after `after` (an entry id; default: from its start), as they come,
   * until unsubscribed: another page, or one that reconnects (an SSE `Last-Event-ID`). Never sends
   * a command.
   */
  followSession(sessionId: string, options?: { readonly after?: string }): Observable<SessionEntry>;
  /**
   * Cancels the runs this dispatcher's `run` started and still streams (they end with `stopped`),
   * ends its other readers (`lost`: this reader stopped, the run goes on), and closes its connections.
   */
  close(): Promise<void>;
}

/**
 * The caller's side of the fleet: runs go to the workers through BullMQ, their messages come back
 * on one Redis stream per run, read by one blocking connection for all the runs this dispatcher
 * reads. Each run ends with exactly one terminal whatever happens: the worker's, a cancel's, or
 * `lost` when its worker stopped beating (any reader writes it, through the append gate) or Redis
 * could not be reached for `lostAfterMs`.
 *
 * `bullmq` (6.7+) and `ioredis` (5) are optional peer dependencies, needed by `agent-rx/fleet`
 * only. A spec is checked here before anything is enqueued (an invalid one throws a `TypeError`),
 * and again on the worker. Its prompt's images and files are read here and travel in the spec (a
 * worker never reads a caller's paths); its zod `outputSchema` travels as JSON Schema and is
 * checked on both sides (see {@link RunDispatcher.run}). Use the fleet when runs must outlive or outnumber one machine; the
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
 * | permission requests cross machines | a spec's `permission` runs on the worker: a preset is decided there; with `ask`, each `permission.requested` in the stream waits for the caller's callback or any reader's `answer` (kept in Redis, and published), denied at the worker's `permissionTimeoutMs`; a request still waiting when the run ends otherwise (a cancel, a lost worker) is denied in the stream before its terminal |
 *
 * Sessions: see {@link RunDispatcher.session}. Not supported yet: Redis Cluster (each run's
 * keys share a hash tag, but it is not tested).
 *
 * @example
 * const fleet = createRunDispatcher({ connection: 'redis://10.0.0.5:6379' });
 * const subscription = fleet
 *   .run({ agent: 'pi', options: { prompt: 'Fix the failing test', cwd: '/srv/work/app' } }, { runId })
 *   .pipe(retryAgentRun()) // a lost run is run again, never one that used tools
 *   .subscribe(render); // unsubscribe = cancel: the stop sequence runs on the worker
 * fleet.follow(runId, { after: lastEventId }); // another reader, or one resuming: { id, message } entries
 *
 * @example
 * // The agent asks before each tool: the request crosses to this caller, the decision goes back.
 * const fleet = createRunDispatcher({ connection: 'redis://10.0.0.5:6379' });
 * fleet
 *   .run({ agent: 'claude', options: { prompt: 'Tidy the repo' }, permission: 'ask', permissionTimeoutMs: 120_000 }, {
 *     permission: (request) => (request.kind === 'read' || request.kind === 'search' ? 'allow' : 'deny'),
 *   })
 *   .subscribe(render);
 * // Or a page that follows the run answers what it shows: fleet.answer(runId, request.requestId, 'allow').
 *
 * @example
 * // An image and a file read here, a typed answer: the spec travels as plain JSON, the worker
 * // validates the answer against the schema's JSON Schema, and the zod schema types it here.
 * import * as z from 'zod';
 * import { collectRunResult } from 'agent-rx';
 * import { createRunDispatcher } from 'agent-rx/fleet';
 *
 * const Review = z.object({ verdict: z.enum(['pass', 'fail']), reasons: z.array(z.string()) });
 * const fleet = createRunDispatcher({ connection: 'redis://10.0.0.5:6379' });
 * const prompt = ['Review this screen against the spec', { type: 'image', path: 'shot.png' }, { type: 'file', path: 'SPEC.md' }] as const;
 * const result = await collectRunResult(fleet.run({ agent: 'claude', options: { prompt, outputSchema: Review } }));
 * if (result.ok) console.log(result.output.verdict); // 'pass' | 'fail'
 */
export function createRunDispatcher(options: RunDispatcherOptions): RunDispatcher {
  return new Dispatcher(options);
}

class Dispatcher implements RunDispatcher {
  readonly #prefix: string;
  readonly #queueName: string;
  readonly #queue: Queue;
  readonly #redis: FleetRedis;
  readonly #reader: RunReader;
  readonly #connections: readonly FleetRedis[];
  readonly #cancelling = new Set<Promise<void>>();
  readonly #lostAfterMs: number;
  readonly #report: ErrorReport;
  /** Whether Redis ever answered, and why it does not now. */
  readonly #watch: RedisWatch;
  readonly #startedAt = performance.now();
  readonly #sessions: SessionCaller;
  /** The readers of fleet sessions, closed with the dispatcher. */
  readonly #sessionReaders = new Set<FleetRedis>();
  /** Aborted by `close`: a run waiting for Redis's first answer stops waiting. */
  readonly #closeController = new AbortController();
  #closed = false;
  #closing: Promise<void> | null = null;

  constructor(options: RunDispatcherOptions) {
    // Every session attachment and follower listens for the close: as many as the caller has.
    setMaxListeners(0, this.#closeController.signal);
    this.#report = guardOnError(options.onError, 'createRunDispatcher');
    this.#prefix = options.prefix ?? 'agentrx';
    this.#queueName = options.queue ?? 'agent-rx';
    this.#lostAfterMs = options.lostAfterMs ?? 10_000;
    const startTimeoutMs = options.startTimeoutMs;
    const connection = redisOptions(options.connection);
    this.#queue = new Queue(this.#queueName, { connection: { ...connection, maxRetriesPerRequest: 1 } as ConnectionOptions });
    this.#queue.on('error', this.#report);
    this.#redis = fleetRedis(connection, this.#report);
    this.#watch = new RedisWatch(describeConnection(connection), this.#redis);
    const reader = fleetRedis(connection, this.#report);
    this.#connections = [this.#redis, reader];
    this.#reader = new RunReader({
      reader,
      redis: this.#redis,
      watch: this.#watch,
      blockMs: options.blockMs ?? 250,
      lostAfterMs: this.#lostAfterMs,
      report: this.#report,
      check: (follower, now) => checkLiveness(follower, now, { redis: this.#redis, queue: this.#queue, startTimeoutMs }),
    });
    this.#reader.start();
    this.#sessions = {
      prefix: this.#prefix,
      redis: this.#redis,
      queue: this.#queue,
      report: this.#report,
      blockMs: options.blockMs ?? 250,
      lostAfterMs: this.#lostAfterMs,
      activationWaitMs: 30_000,
      closed: this.#closeController.signal,
      reader: () => {
        const reader = fleetRedis(connection, this.#report);
        this.#sessionReaders.add(reader);
        reader.once('end', () => this.#sessionReaders.delete(reader));
        return reader;
      },
    };
  }

  session(sessionId: string, spec: SessionSpec): OperatorFunction<SessionCommand, SessionMessage> {
    return attachSession(this.#sessions, sessionId, spec);
  }

  followSession(sessionId: string, options: { readonly after?: string } = {}): Observable<SessionEntry> {
    return followSession(this.#sessions, sessionId, options.after);
  }

  run<Output = unknown>(spec: DispatchSpec<Output>, options: DispatchOptions = {}): Observable<CliMessage<Output>> {
    const { spec: checked, zodOutput } = prepareSpec(spec);
    const run$ = this.#run(checked, options);
    // The worker checked the answer against the JSON Schema; the zod schema says more (refinements, transforms) and types it.
    return (zodOutput === undefined ? run$ : run$.pipe(checkRunOutputWith(zodOutput))) as Observable<CliMessage<Output>>;
  }

  #run(checked: RunSpec, options: DispatchOptions): Observable<CliMessage> {
    if (options.runId !== undefined) checkRunId(options.runId);
    const callback = options.permission;
    if (callback !== undefined) {
      if (typeof callback !== 'function') throw new TypeError(`agent-rx: permission must be a function of the request; got ${typeof callback}`);
      if (checked.permission !== 'ask') throw new TypeError(`agent-rx: a permission callback needs a spec with permission: 'ask' (the worker asks the caller only then); the spec has ${checked.permission === undefined ? 'none' : `'${checked.permission}'`}`);
    }
    return new Observable<CliMessage>((subscriber) => {
      const runId = options.runId ?? randomUUID();
      const keys = runKeys(this.#prefix, runId);
      let ended = false;
      const asks =
        callback === undefined
          ? null
          : new CallerAsks(callback, {
              answer: (requestId, decision) => {
                // Not written (Redis away, the run over): the worker's deadline decides.
                this.answer(runId, requestId, decision).catch(this.#report);
              },
              fail: (error) => {
                subscriber.error(error);
              },
            });
      const end = (message: CliMessage): void => {
        ended = true;
        asks?.close();
        this.#reader.leave(follower);
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
          if (isTerminal(message)) {
            end(message);
            return;
          }
          subscriber.next(message);
          asks?.see(message);
        },
        lost: end,
        over: () => undefined,
      };
      void this.#enqueue(runId, keys, withTraceContext(checked)).then((problem) => {
        if (ended || subscriber.closed) return;
        if (problem !== null) end(problem);
        else this.#join(follower);
      });
      return () => {
        asks?.close();
        this.#reader.leave(follower);
        if (!ended) {
          ended = true;
          const cancelling = this.cancel(runId).catch(this.#report);
          // `close` waits for it: the cancel must reach Redis before the connections go.
          this.#cancelling.add(cancelling);
          void cancelling.finally(() => this.#cancelling.delete(cancelling));
        }
      };
    });
  }

  follow(runId: string, options: { readonly after?: string } = {}): Observable<RunEntry> {
    checkRunId(runId);
    const after = readAfter(options.after ?? '0-0');
    return new Observable<RunEntry>((subscriber) => {
      const follower: Follower = {
        runId,
        keys: runKeys(this.#prefix, runId),
        own: false,
        after,
        enqueuedAt: null,
        // Looked at in the first round: a reader past the terminal is over at once.
        checkedAt: 0,
        joinedAt: performance.now(),
        entry: (entry) => {
          subscriber.next(entry);
          if (isTerminal(entry.message)) subscriber.complete();
        },
        lost: (terminal) => {
          this.#reader.leave(follower);
          subscriber.next({ id: '', message: terminal });
          subscriber.complete();
        },
        over: () => {
          this.#reader.leave(follower);
          subscriber.complete();
        },
      };
      this.#join(follower);
      return () => {
        this.#reader.leave(follower);
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

  async answer(runId: string, requestId: string, decision: PermissionDecision): Promise<void> {
    checkRunId(runId);
    if (typeof requestId !== 'string' || requestId === '') throw new TypeError(`agent-rx: a request id must be a non-empty string; got ${JSON.stringify(requestId)}`);
    const checked = PermissionDecisionSchema.safeParse(decision);
    if (!checked.success) throw new TypeError(`agent-rx: a decision must be allow, allow-always, deny or deny-always; got ${JSON.stringify(decision)}`);
    await writeAnswer(this.#redis, runKeys(this.#prefix, runId), permissionChannel(this.#prefix, this.#queueName), { runId, requestId, decision: checked.data });
  }

  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    this.#closed = true;
    this.#closeController.abort();
    const followers = this.#reader.stop();
    // The runs this dispatcher started stop with it, as a host's runs stop with the host; readers of
    // other runs just stop reading.
    await Promise.allSettled([...followers.filter((follower) => follower.own).map((follower) => this.cancel(follower.runId)), ...this.#cancelling]);
    for (const follower of followers) {
      follower.lost(follower.own ? fleetFailure('stopped', 'the dispatcher was closed: the run was cancelled') : fleetFailure('lost', 'the dispatcher was closed before the run ended: this reader stopped'));
    }
    await this.#reader.done;
    for (const reader of this.#sessionReaders) reader.disconnect();
    await Promise.allSettled([this.#queue.close(), ...this.#connections.map((connection) => connection.quit())]);
    for (const connection of this.#connections) connection.disconnect();
  }

  // Puts a new run on the queue; the terminal to end it with when that cannot be done.
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
      this.#reader.answered();
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
    this.#reader.join(follower);
  }
}

/**
 * The spec with the trace context of the subscription (a `traceRun` around the run: what it would
 * give a local agent as `TRACEPARENT`), unless the spec has one of its own.
 */
function withTraceContext(spec: RunSpec): RunSpec {
  if (spec.traceContext !== undefined) return spec;
  const traceContext = traceContextOf(currentRunScope()?.env, 'env');
  return traceContext === undefined ? spec : { ...spec, traceContext };
}
