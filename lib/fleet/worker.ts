import type { ConnectionOptions, Job } from 'bullmq';
import { hostname } from 'node:os';
import type { Observable, Subscription } from 'rxjs';
import { AGENTS } from '../agents/table.js';
import type { RunClaudeCodeOptions } from '../agents/claude/options.js';
import type { RunCodexOptions } from '../agents/codex/options.js';
import type { RunGeminiOptions } from '../agents/gemini/options.js';
import type { RunPiOptions } from '../agents/pi/options.js';
import { isTerminal, type CliMessage, type TerminalFailed } from '../messages.js';
import type { StopReport } from '../process/options.js';
import { sweepMarked } from '../process/sweep.js';
import { workerFolderOnly } from './cwd.js';
import { fleetFailure } from './failure.js';
import { guardOnError, type ErrorReport } from './on-error.js';
import { UnrecoverableError, Worker, type Redis } from './peers.js';
import { checkRunSpec, type RunSpec } from './run-spec.js';
import { append, cancelChannel, fleetRedis, redisOptions, runKeys, RUN_TTL_SECONDS, type FleetOptions, type FleetRedis, type RunKeys } from './redis.js';
import { throttleToolUpdates } from './throttle-tool-updates.js';
import { aborted, within } from './waits.js';

/** The variable every process of a worker's runs carries: the worker's name (its sweep finds them). */
export const WORKER_ENV = 'AGENT_RX_WORKER';

/** What a worker decides of each agent: its executable, environment, configuration. Callers cannot. */
export interface WorkerAgents {
  readonly pi?: Partial<Omit<RunPiOptions, 'prompt'>>;
  readonly claude?: Partial<Omit<RunClaudeCodeOptions, 'prompt'>>;
  readonly codex?: Partial<Omit<RunCodexOptions, 'prompt'>>;
  readonly gemini?: Partial<Omit<RunGeminiOptions, 'prompt'>>;
}

/**
 * Options of {@link serveRuns}: where Redis is (see {@link FleetOptions}), how many runs at once, and
 * what this worker decides of each agent.
 */
export interface ServeRunsOptions extends FleetOptions {
  /** How many runs at once. */
  readonly concurrency: number;
  /** The agents this worker runs, with its settings for each; a run of another agent fails (`setup`). */
  readonly agents: WorkerAgents;
  /**
   * The working directory of a run, from the one its spec asks for (`undefined`: none): return the
   * folder to use, or throw to refuse the run (`terminal.failed`, reason `setup`, with the
   * message). Default: runs work in the worker's folder, and a run that asks for one is refused;
   * `allowWorkingDirectories([...])` allows some.
   */
  readonly resolveCwd?: (requested: string | undefined) => string;
  /** Unique in the fleet; its leftovers are swept at start. Default `<hostname>-<pid>`. */
  readonly workerName?: string;
  /** How often a run's heartbeat is renewed. Default 1000. */
  readonly heartbeatMs?: number;
  /** How long a heartbeat lives: callers end a run `lost` once it is gone. Default 3000. */
  readonly heartbeatTtlMs?: number;
  /** BullMQ's job lock (ms). Default 30000. */
  readonly lockDurationMs?: number;
  /** BullMQ's stalled-job check interval (ms). Default 30000. */
  readonly stalledIntervalMs?: number;
  /**
   * Told what went wrong talking to Redis; the worker goes on (and fences its runs when it must).
   * A throw from it is swallowed, never an uncaught exception; the first one is told once on
   * `process.emitWarning`.
   */
  readonly onError?: (error: Error) => void;
  /** Told of each run taken, refused and ended here: for logs and metrics. A throwing callback is reported, never fatal. */
  readonly onRunEvent?: (event: WorkerRunEvent) => void;
}

/** What a worker did with a run. */
export type WorkerRunEvent =
  /** The start gate let it through: its agent is being started here. */
  | { readonly type: 'started'; readonly runId: string; readonly agent: RunSpec['agent'] }
  /** Not started: not a valid spec, already ended, cancelled before its start, or taken by another worker. */
  | { readonly type: 'refused'; readonly runId: string; readonly why: 'invalid' | 'ended' | 'cancelled' | 'duplicate' }
  /**
   * Its processes are gone. `stopped`: why the worker stopped it (`null`: it ended by itself):
   * `cancel`, `shutdown` (`close`), `lock` (its queue lock was lost), `ended` (another party closed
   * its stream), `unreachable` (its heartbeat could not be renewed), `forgotten` (Redis lost the
   * run's keys).
   */
  | { readonly type: 'ended'; readonly runId: string; readonly stopped: StopWhy | null };

/** A running worker (from {@link serveRuns}). */
export interface RunServer {
  /** The worker's name in the fleet (`workerName`, or its default). */
  readonly workerName: string;
  /** Runs being run now. */
  readonly activeRuns: number;
  /** Settles once the worker is ready to take runs (its leftovers swept, Redis reached), or once it is closed. */
  readonly ready: Promise<void>;
  /**
   * Stops taking runs; lets the running ones finish for `drainMs` (default 0), then stops them:
   * they end with `lost` ("the worker shut down"). Once every run's processes are gone, what is
   * left to tell Redis (the runs' terminals) has two seconds, whatever Redis does, and the
   * connections are closed: it settles in bounded time even when Redis cannot be reached.
   * Called again with a shorter `drainMs`, the drain ends sooner.
   */
  close(options?: { readonly drainMs?: number }): Promise<void>;
}

/**
 * A worker of the fleet: takes runs from the queue (BullMQ, `maxStalledCount: 0`,
 * `maxStartedAttempts: 1`: a run is never delivered twice), starts each at most once (an atomic
 * start gate), runs it with agent-rx on this machine, and appends its messages to the run's
 * stream through the append gate. It beats a heartbeat per run; a cancel (pub/sub, and the durable
 * key read with each beat) stops the run with the stop sequence; a run whose stream another
 * party closed, or whose heartbeat cannot be renewed for `heartbeatTtlMs`, is stopped too
 * (fencing). At start it kills what a killed worker of the same name left behind.
 *
 * What runs each agent (its executable, environment, configuration) is decided here, in `agents`,
 * never by the caller; a run's `cwd` is only a request, which `resolveCwd` may refuse (by default
 * every requested folder is refused: see {@link allowWorkingDirectories}). Every process of its
 * runs carries {@link WORKER_ENV}. `close({ drainMs })` drains: no new runs, the running ones
 * finish or end `lost` ("shut down").
 *
 * Give each worker its own cgroup, so that nothing it started outlives it: a systemd unit (the
 * default `KillMode=control-group`), or a container whose PID 1 is the worker. Redis in
 * production: AOF (`appendonly yes`), `maxmemory-policy noeviction` (BullMQ's requirement), and a
 * password or an ACL: whoever can write the queue runs agents on the workers.
 *
 * @example
 * const worker = serveRuns({
 *   connection: 'redis://10.0.0.5:6379',
 *   concurrency: 8,
 *   agents: { pi: { executable: '/usr/local/bin/pi' }, claude: {} },
 *   resolveCwd: allowWorkingDirectories(['/srv/work']),
 * });
 * process.once('SIGTERM', () => void worker.close({ drainMs: 30_000 }).then(() => process.exit(0)));
 */
export function serveRuns(options: ServeRunsOptions): RunServer {
  return new RunWorker(options);
}

interface ActiveRun {
  stop(reason: StopWhy): void;
}

/**
 * Why a worker stopped a run: `cancel` (a caller cancelled it), `shutdown` ({@link RunServer.close}),
 * `lock` (its queue lock was lost), `ended` (another party closed its stream), `unreachable` (its
 * heartbeat could not be renewed for `heartbeatTtlMs`), `forgotten` (Redis lost the run's keys).
 */
export type StopWhy = 'cancel' | 'shutdown' | 'lock' | 'ended' | 'unreachable' | 'forgotten';

class RunWorker implements RunServer {
  readonly workerName: string;
  readonly ready: Promise<void>;
  readonly #options: ServeRunsOptions;
  readonly #prefix: string;
  readonly #queue: string;
  readonly #redis: FleetRedis;
  readonly #subscriber: Redis;
  readonly #active = new Map<string, ActiveRun>();
  readonly #heartbeatMs: number;
  readonly #heartbeatTtlMs: number;
  readonly #report: ErrorReport;
  #worker: Worker | null = null;
  #closing: Promise<void> | null = null;
  #drainEndsAt: number | null = null;
  #drainTimer: NodeJS.Timeout | null = null;
  /** Aborted by `close`: the start stops waiting for Redis. */
  readonly #closed = new AbortController();
  /** Jobs in `#process` (taken, maybe running), and who waits for there to be none. */
  #processing = 0;
  #idle: (() => void) | null = null;
  /** Jobs whose processing ended here that BullMQ has not yet completed or failed in Redis, and since when. */
  readonly #settling = new Map<string, number>();
  #settled: (() => void) | null = null;

  constructor(options: ServeRunsOptions) {
    if (!Number.isInteger(options.concurrency) || options.concurrency < 1) throw new TypeError(`agent-rx: concurrency must be an integer >= 1; got ${String(options.concurrency)}`);
    this.#report = guardOnError(options.onError, 'serveRuns');
    this.#options = options;
    this.workerName = options.workerName ?? `${hostname()}-${String(process.pid)}`;
    this.#prefix = options.prefix ?? 'agentrx';
    this.#queue = options.queue ?? 'agent-rx';
    this.#heartbeatMs = options.heartbeatMs ?? 1000;
    this.#heartbeatTtlMs = options.heartbeatTtlMs ?? 3000;
    const connection = redisOptions(options.connection);
    this.#redis = fleetRedis(connection, this.#report);
    this.#subscriber = fleetRedis(connection, this.#report, { maxRetriesPerRequest: null, enableReadyCheck: false });
    this.#subscriber.on('message', (_channel: string, runId: string) => {
      this.#active.get(runId)?.stop('cancel');
    });
    this.ready = this.#start(connection);
  }

  get activeRuns(): number {
    return this.#active.size;
  }

  async #start(connection: ReturnType<typeof redisOptions>): Promise<void> {
    // What a worker of this name left behind when it was killed without warning.
    await sweepMarked(WORKER_ENV, this.workerName);
    // Waits for Redis as long as it takes (a worker may start before its Redis), unless closed.
    const subscribed = this.#subscriber.subscribe(cancelChannel(this.#prefix, this.#queue)).catch((error: unknown) => {
      this.#report(error);
    });
    await Promise.race([subscribed, aborted(this.#closed.signal)]);
    if (this.#closed.signal.aborted) return;
    const worker = new Worker(this.#queue, (job: Job, token?: string, signal?: AbortSignal) => this.#process(job, token, signal), {
      connection: connection as ConnectionOptions,
      concurrency: this.#options.concurrency,
      maxStalledCount: 0,
      maxStartedAttempts: 1,
      lockDuration: this.#options.lockDurationMs ?? 30_000,
      stalledInterval: this.#options.stalledIntervalMs ?? 30_000,
    });
    worker.on('error', this.#report);
    // A run whose lock is lost may be taken for stalled: it stops here rather than run unguarded.
    worker.on('lockRenewalFailed', (ids: string[]) => {
      for (const id of ids) this.#active.get(id)?.stop('lock');
    });
    // A job BullMQ failed without running it (a stall, a second start): its stream must end.
    worker.on('failed', (job: Job | undefined, error: Error) => {
      if (job?.id === undefined) return;
      this.#settle(job.id);
      this.#append(runKeys(this.#prefix, job.id), fleetFailure('lost', `the queue failed the run: ${error.message}`), true);
    });
    worker.on('completed', (job: Job) => {
      if (job.id !== undefined) this.#settle(job.id);
    });
    this.#worker = worker;
  }

  // Three declared parameters: BullMQ gives the processor an AbortSignal only then.
  async #process(job: Job, token: string | undefined, signal: AbortSignal | undefined): Promise<void> {
    this.#processing += 1;
    try {
      await this.#runJob(job, token, signal);
    } finally {
      if (job.id !== undefined) this.#settling.set(job.id, performance.now());
      this.#processing -= 1;
      if (this.#processing === 0) this.#idle?.();
    }
  }

  async #runJob(job: Job, _token: string | undefined, signal: AbortSignal | undefined): Promise<void> {
    const runId = job.id;
    if (runId === undefined) throw new UnrecoverableError('a job without an id');
    // Fetched as the worker began to close: not started here (BullMQ fails it, and its stream ends lost).
    if (this.#closed.signal.aborted) throw new UnrecoverableError(`the worker ${this.workerName} was shutting down`);
    const keys = runKeys(this.#prefix, runId);
    let spec: RunSpec;
    try {
      spec = checkRunSpec(job.data);
    } catch (error) {
      this.#append(keys, fleetFailure('setup', asError(error).message), true);
      this.#tell({ type: 'refused', runId, why: 'invalid' });
      throw new UnrecoverableError(asError(error).message);
    }
    const gate = await this.#redis.agentRxStart(keys.end, keys.cancel, keys.owner, keys.heartbeat, this.workerName, this.#heartbeatTtlMs, RUN_TTL_SECONDS);
    if (gate !== 'ok') {
      if (gate === 'cancelled') this.#append(keys, fleetFailure('aborted', 'the run was cancelled before it started'), true);
      this.#tell({ type: 'refused', runId, why: gate === 'ended' || gate === 'cancelled' ? gate : 'duplicate' });
      throw new UnrecoverableError(`the run was not started: ${gate}`);
    }
    this.#tell({ type: 'started', runId, agent: spec.agent });
    await new Promise<void>((resolve) => {
      this.#run(runId, keys, spec, signal, resolve);
    });
  }

  #run(runId: string, keys: RunKeys, spec: RunSpec, signal: AbortSignal | undefined, done: () => void): void {
    let subscription: Subscription | null = null;
    let over = false;
    let stopped: StopWhy | null = null;
    let processesGone = false;
    let lastBeat = performance.now();
    const finish = (): void => {
      if (!over || !processesGone) return;
      clearInterval(beat);
      this.#active.delete(runId);
      this.#tell({ type: 'ended', runId, stopped });
      done();
    };
    const write = (message: CliMessage): void => {
      const terminal = isTerminal(message);
      void this.#appendChecked(keys, message, terminal).then((accepted) => {
        // The stream was closed by someone else (a cancel, a watchdog): stop the agent.
        if (!accepted && !over) stop('ended');
      });
    };
    const stop = (why: StopWhy): void => {
      if (stopped !== null || over) return;
      stopped = why;
      over = true;
      subscription?.unsubscribe();
      const terminal = stopTerminal(why, this.workerName);
      if (terminal !== null) this.#append(keys, terminal, true);
      if (subscription === null) processesGone = true;
      finish();
    };
    const beat = setInterval(() => {
      // Fencing: callers take the run for lost once its heartbeat is gone; it must not run on
      // unseen, whether Redis refuses the beats or does not answer them.
      if (performance.now() - lastBeat >= this.#heartbeatTtlMs) {
        stop('unreachable');
        return;
      }
      this.#redis.agentRxBeat(keys.end, keys.cancel, keys.heartbeat, keys.owner, this.workerName, this.#heartbeatTtlMs).then(
        (answer) => {
          lastBeat = performance.now();
          if (answer === 'ended') stop('ended');
          else if (answer === 'cancelled') stop('cancel');
          else if (answer === 'forgotten') stop('forgotten');
        },
        (error: unknown) => {
          this.#report(error);
        },
      );
    }, this.#heartbeatMs);
    this.#active.set(runId, { stop });
    signal?.addEventListener('abort', () => {
      stop(typeof signal.reason === 'string' && isStopWhy(signal.reason) ? signal.reason : 'cancel');
    });
    let source;
    try {
      const cwd = (this.#options.resolveCwd ?? workerFolderOnly)(spec.options.cwd);
      source = this.#source(spec, cwd, () => {
        processesGone = true;
        finish();
      });
    } catch (error) {
      over = true;
      processesGone = true;
      this.#append(keys, fleetFailure('setup', `the worker refused the run: ${asError(error).message}`), true);
      finish();
      return;
    }
    subscription = source.pipe(throttleToolUpdates()).subscribe({
      next: (message) => {
        if (over) return;
        if (isTerminal(message)) over = true;
        write(message);
      },
      complete: () => {
        over = true;
        finish();
      },
      error: (error: unknown) => {
        over = true;
        this.#append(keys, fleetFailure('lost', `the run failed on the worker: ${asError(error).message}`), true);
        finish();
      },
    });
  }

  /** The agent's run on this machine: the worker's settings for it, the spec's choices, and the worker's marker. */
  #source(spec: RunSpec, cwd: string, onStopped: (report: StopReport) => void): Observable<CliMessage> {
    const own: { readonly env?: Readonly<Record<string, string | undefined>> } | undefined = this.#options.agents[spec.agent];
    if (own === undefined) throw new Error(`this worker does not run ${spec.agent}`);
    const env = { ...own.env, [WORKER_ENV]: this.workerName };
    const options = { ...own, ...spec.options, cwd, env, onStopped } as unknown as RunPiOptions;
    // The table's sources take their agent's options; the spec was checked for that agent, and
    // the worker's settings are that agent's (`WorkerAgents`).
    const run = AGENTS[spec.agent].run as (options: RunPiOptions) => Observable<CliMessage>;
    return run(options);
  }

  #tell(event: WorkerRunEvent): void {
    try {
      this.#options.onRunEvent?.(event);
    } catch (error) {
      this.#report(error);
    }
  }

  /** Appends through the gate; any failure is reported, never thrown. */
  #append(keys: RunKeys, message: CliMessage, terminal: boolean): void {
    void this.#appendChecked(keys, message, terminal);
  }

  /** `true` when appended, `false` when the stream is closed or Redis failed. */
  async #appendChecked(keys: RunKeys, message: CliMessage, terminal: boolean): Promise<boolean> {
    try {
      return (await append(this.#redis, keys, message, terminal)) !== null;
    } catch (error) {
      this.#report(error);
      return true;
    }
  }

  close(options: { readonly drainMs?: number } = {}): Promise<void> {
    // A later call with a shorter drain shortens it (a second SIGTERM: stop now).
    const drainMs = options.drainMs ?? 0;
    const at = performance.now() + drainMs;
    if (this.#drainEndsAt === null || at < this.#drainEndsAt) {
      this.#drainEndsAt = at;
      if (this.#drainTimer !== null) clearTimeout(this.#drainTimer);
      this.#drainTimer = setTimeout(() => {
        for (const run of this.#active.values()) run.stop('shutdown');
      }, drainMs);
    }
    this.#closing ??= this.#close();
    return this.#closing;
  }

  // Nothing here waits for Redis unbounded: neither the start (it may never have reached Redis)
  // nor BullMQ's or ioredis's own graceful close (they wait for a connection that may not come back).
  async #close(): Promise<void> {
    this.#closed.abort();
    // Takes no new runs (a job BullMQ fetched already is refused in #runJob); its locks are still renewed.
    this.#worker?.pause(true).catch((error: unknown) => {
      this.#report(error);
    });
    // Every run taken has ended, by itself or stopped when the drain ran out, its processes gone.
    await this.#runsOver();
    if (this.#drainTimer !== null) clearTimeout(this.#drainTimer);
    this.#subscriber.disconnect();
    const worker = this.#worker;
    if (worker !== null) {
      // What is left to tell Redis gets there if it can: the runs' terminals, BullMQ's end of their jobs.
      await within(GOODBYE_MS, Promise.allSettled([this.#jobsSettled(), this.#redis.quit()]));
      // Then BullMQ's timers and connections end, whether Redis answered or not.
      await within(
        GOODBYE_MS,
        worker.close(true).catch((error: unknown) => {
          this.#report(error);
        }),
      );
    }
    this.#redis.disconnect();
  }

  #runsOver(): Promise<void> {
    if (this.#processing === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.#idle = resolve;
    });
  }

  #jobsSettled(): Promise<void> {
    // A job whose lock ran out is not this worker's to end any more (Redis may have been away).
    const lockMs = this.#options.lockDurationMs ?? 30_000;
    for (const [jobId, since] of this.#settling) if (performance.now() - since > lockMs) this.#settling.delete(jobId);
    if (this.#settling.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.#settled = resolve;
    });
  }

  #settle(jobId: string): void {
    this.#settling.delete(jobId);
    if (this.#settling.size === 0) this.#settled?.();
  }
}

/** How long a closing worker may take to tell Redis what is left once its runs are over. */
const GOODBYE_MS = 2000;

const STOP_WHYS: readonly string[] = ['cancel', 'shutdown', 'lock', 'ended', 'unreachable', 'forgotten'];
function isStopWhy(value: string): value is StopWhy {
  return STOP_WHYS.includes(value);
}

/** The terminal a stopped run's stream gets from its worker (none when someone else closed it). */
function stopTerminal(why: StopWhy, worker: string): TerminalFailed | null {
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

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
