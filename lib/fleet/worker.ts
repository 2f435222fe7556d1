import type { Job } from 'bullmq';
import { hostname } from 'node:os';
import { agentByName } from '../agent-table.js';
import { sweepMarked } from '../process/sweep.js';
import type { McpServers } from '../tools/mcp-servers.js';
import { workerFolderOnly } from './cwd.js';
import { checkMcpCatalog, offeredMcpServers } from './mcp-catalog.js';
import { closeWorker, DrainDeadline, JobLedger } from './drain.js';
import { fleetFailure } from './failure.js';
import { guardOnError, type ErrorReport } from './on-error.js';
import type { Redis, Worker } from './peers.js';
import { startQueueWorker } from './queue-worker.js';
import { parseAnswerMessage } from './permission-answers.js';
import { appendOrReport, cancelChannel, fleetRedis, permissionChannel, redisOptions, runKeys, type FleetOptions, type FleetRedis } from './redis.js';
import { aborted } from './waits.js';
import { agentSource, WORKER_ENV, type WorkerAgents } from './worker-agents.js';
import type { RunTracing } from './run-tracing.js';
import { runJob, type ActiveRun, type RunHost, type WorkerRunEvent } from './worker-run.js';
import { ACTIVATION_JOB, type SessionSpec } from './session-spec.js';
import { activateSession, type ActiveSession, type SessionHost, type WorkerSessionEvent } from './worker-session.js';

export type { WorkerRunEvent, WorkerSessionEvent };

/**
 * Options of {@link serveRuns}: where Redis is (see {@link FleetOptions}), how many runs at once, and
 * what this worker decides of each agent.
 */
export interface ServeRunsOptions extends FleetOptions {
  /** How many runs at once. */
  readonly concurrency: number;
  /**
   * The agents this worker runs, with its settings for each; a run of another agent fails (`setup`).
   * A `permission` here is the default of the agent's runs; a spec's `permission` replaces it.
   */
  readonly agents: WorkerAgents;
  /**
   * The working directory of a run, from the one its spec asks for (`undefined`: none): return the
   * folder to use, or throw to refuse the run (`terminal.failed`, reason `setup`, with the
   * message). Default: runs work in the worker's folder, and a run that asks for one is refused;
   * `allowWorkingDirectories([...])` allows some.
   */
  readonly resolveCwd?: (requested: string | undefined) => string;
  /**
   * The MCP servers this worker's runs may use, by name: a spec names those it wants
   * (`options.mcpServers: ['docs']`) and its run is given them (with the agent's own settings'
   * `mcpServers`, if any). A spec that names one not here is refused (`terminal.failed`, reason
   * `setup`), as a refused folder is. Default: none. What a server is (its command, URL, headers,
   * `trust`) is the worker's: callers only name it.
   */
  readonly mcpServers?: McpServers;
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
  /** Told of each session activated, skipped and deactivated here (see `RunDispatcher.session`). A throwing callback is reported, never fatal. */
  readonly onSessionEvent?: (event: WorkerSessionEvent) => void;
  /**
   * Traces each run here: `traceWorkerRuns()` of `agent-rx/otel`, whose span continues the trace of
   * the caller's `traceRun` (the spec's `traceContext`). Without it the agent is given the caller's
   * trace context itself.
   */
  readonly traceRuns?: RunTracing;
}


/** A running worker (from {@link serveRuns}). */
export interface RunServer {
  /** The worker's name in the fleet (`workerName`, or its default). */
  readonly workerName: string;
  /** Runs being run now. */
  readonly activeRuns: number;
  /** Session activations live here now (each holds one of the `concurrency` slots while it is awake). */
  readonly activeSessions: number;
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
 * every requested folder is refused: see {@link allowWorkingDirectories}); so are the MCP servers a
 * spec names: only those of the worker's `mcpServers`. A spec's `permission`
 * (over the worker's own `permission` for the agent, if any) is the run's: a preset is decided
 * here; `ask` holds each request until a caller's answer comes (a pub/sub message, or the run's
 * answers key read with each heartbeat) or the spec's `permissionTimeoutMs` (default 5 minutes)
 * denies it; a cancel, the drain or the run's end ends the wait. Every process of its
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
 *   mcpServers: { docs: { command: 'docs-mcp', args: ['--root', '/srv/docs'], trust: true } }, // a spec may name 'docs'
 * });
 * process.once('SIGTERM', () => void worker.close({ drainMs: 30_000 }).then(() => process.exit(0)));
 */
export function serveRuns(options: ServeRunsOptions): RunServer {
  return new RunWorker(options);
}

class RunWorker implements RunServer {
  readonly workerName: string;
  readonly ready: Promise<void>;
  readonly #options: ServeRunsOptions;
  readonly #prefix: string;
  readonly #queue: string;
  readonly #redis: FleetRedis;
  readonly #subscriber: Redis;
  readonly #active = new Map<string, ActiveRun>();
  readonly #sessions = new Map<string, ActiveSession>();
  readonly #report: ErrorReport;
  readonly #host: RunHost;
  readonly #sessionHost: SessionHost;
  /** Jobs taken (maybe running) and jobs BullMQ has yet to settle: what the close waits for. */
  readonly #jobs = new JobLedger();
  readonly #drain = new DrainDeadline();
  /** Aborted by `close`: the start stops waiting for Redis, and a job fetched then is not started. */
  readonly #closed = new AbortController();
  #worker: Worker | null = null;
  #closing: Promise<void> | null = null;

  constructor(options: ServeRunsOptions) {
    if (!Number.isInteger(options.concurrency) || options.concurrency < 1) throw new TypeError(`agent-rx: concurrency must be an integer >= 1; got ${String(options.concurrency)}`);
    const mcpCatalog = checkMcpCatalog(options.mcpServers);
    this.#report = guardOnError(options.onError, 'serveRuns');
    this.#options = options;
    this.workerName = options.workerName ?? `${hostname()}-${String(process.pid)}`;
    this.#prefix = options.prefix ?? 'agentrx';
    this.#queue = options.queue ?? 'agent-rx';
    const connection = redisOptions(options.connection);
    this.#redis = fleetRedis(connection, this.#report);
    this.#subscriber = fleetRedis(connection, this.#report, { maxRetriesPerRequest: null, enableReadyCheck: false });
    const cancels = cancelChannel(this.#prefix, this.#queue);
    this.#subscriber.on('message', (channel: string, text: string) => {
      if (channel === cancels) {
        this.#active.get(text)?.stop('cancel');
        return;
      }
      const answer = parseAnswerMessage(text);
      if (answer !== null) this.#active.get(answer.runId)?.answer(answer.requestId, answer.decision);
    });
    this.#host = {
      workerName: this.workerName,
      prefix: this.#prefix,
      redis: this.#redis,
      heartbeatMs: options.heartbeatMs ?? 1000,
      heartbeatTtlMs: options.heartbeatTtlMs ?? 3000,
      closing: this.#closed.signal,
      active: this.#active,
      report: this.#report,
      tell: (event) => {
        this.#tell(event);
      },
      source: (runId, spec, onStopped, ask) => {
        const cwd = (options.resolveCwd ?? workerFolderOnly)(spec.options.cwd);
        const traceRuns = options.traceRuns;
        const given = { cwd, mcpServers: offeredMcpServers(mcpCatalog, spec.options.mcpServers), carryTraceContext: traceRuns === undefined };
        const run = agentSource(options.agents, this.workerName, spec, given, onStopped, ask);
        return traceRuns === undefined ? run : traceRuns(run, { runId, agent: spec.agent, worker: this.workerName, traceContext: spec.traceContext });
      },
    };
    this.#sessionHost = {
      workerName: this.workerName,
      prefix: this.#prefix,
      redis: this.#redis,
      beatMs: this.#host.heartbeatMs,
      leaseMs: this.#host.heartbeatTtlMs,
      closing: this.#closed.signal,
      sessions: this.#sessions,
      report: this.#report,
      tell: (event) => {
        this.#tellSession(event);
      },
      options: (spec, marker) => sessionOptions(options, this.workerName, spec, marker),
    };
    this.ready = this.#start(connection);
  }

  get activeRuns(): number {
    return this.#active.size;
  }

  get activeSessions(): number {
    return this.#sessions.size;
  }

  async #start(connection: ReturnType<typeof redisOptions>): Promise<void> {
    // What a worker of this name left behind when it was killed without warning.
    await sweepMarked(WORKER_ENV, this.workerName);
    // Waits for Redis as long as it takes (a worker may start before its Redis), unless closed.
    const subscribed = this.#subscriber.subscribe(cancelChannel(this.#prefix, this.#queue), permissionChannel(this.#prefix, this.#queue)).catch(this.#report);
    await Promise.race([subscribed, aborted(this.#closed.signal)]);
    if (this.#closed.signal.aborted) return;
    this.#worker = startQueueWorker({
      queue: this.#queue,
      connection,
      concurrency: this.#options.concurrency,
      lockDurationMs: this.#lockDurationMs(),
      stalledIntervalMs: this.#options.stalledIntervalMs ?? 30_000,
      report: this.#report,
      process: (job, signal) => this.#process(job, signal),
      lockLost: (jobIds) => {
        for (const id of jobIds) this.#active.get(id)?.stop('lock');
      },
      failed: (jobId, error) => {
        this.#jobs.settled(jobId);
        void appendOrReport(this.#redis, this.#report, runKeys(this.#prefix, jobId), fleetFailure('lost', `the queue failed the run: ${error.message}`), true);
      },
      completed: (jobId) => {
        this.#jobs.settled(jobId);
      },
    });
  }

  async #process(job: Job, signal: AbortSignal | undefined): Promise<void> {
    this.#jobs.taken();
    try {
      if (job.name === ACTIVATION_JOB) await activateSession(this.#sessionHost, job);
      else await runJob(this.#host, job, signal);
    } finally {
      this.#jobs.processed(job.id);
    }
  }

  // A throwing onRunEvent is reported, never fatal.
  #tell(event: WorkerRunEvent): void {
    try {
      this.#options.onRunEvent?.(event);
    } catch (error) {
      this.#report(error);
    }
  }

  #tellSession(event: WorkerSessionEvent): void {
    try {
      this.#options.onSessionEvent?.(event);
    } catch (error) {
      this.#report(error);
    }
  }

  #lockDurationMs(): number {
    return this.#options.lockDurationMs ?? 30_000;
  }

  close(options: { readonly drainMs?: number } = {}): Promise<void> {
    // A later call with a shorter drain shortens it (a second SIGTERM: stop now).
    // Sessions drain by falling asleep as soon as no turn runs: the next command wakes them on another worker.
    for (const session of this.#sessions.values()) session.drain();
    this.#drain.shorten(options.drainMs ?? 0, () => {
      for (const run of this.#active.values()) run.stop('shutdown');
      for (const session of this.#sessions.values()) session.stop();
    });
    this.#closing ??= this.#close();
    return this.#closing;
  }

  #close(): Promise<void> {
    this.#closed.abort();
    return closeWorker({
      jobs: this.#jobs,
      drain: this.#drain,
      queueWorker: () => this.#worker,
      subscriber: this.#subscriber,
      redis: this.#redis,
      lockDurationMs: this.#lockDurationMs(),
      report: this.#report,
    });
  }
}

/**
 * The options of a fleet session's agent on this worker: the worker's settings for the agent that
 * a session takes, the spec's choices, the folder the worker resolves, the spec's permission, and
 * the worker's and the activation's markers.
 */
function sessionOptions(options: ServeRunsOptions, workerName: string, spec: SessionSpec, marker: Readonly<Record<string, string>>): Readonly<Record<string, unknown>> {
  const own: Readonly<Record<string, unknown>> | undefined = options.agents[spec.agent];
  if (own === undefined) throw new Error(`this worker does not run ${spec.agent}`);
  const sessionKeys = sessionOptionKeys(spec.agent);
  const taken = Object.fromEntries(Object.entries(own).filter(([key]) => sessionKeys.has(key) && key !== 'mcpServers'));
  const chosen: Readonly<Record<string, unknown>> = spec.options ?? {};
  const cwd = (options.resolveCwd ?? workerFolderOnly)(chosen['cwd'] as string | undefined);
  const env = { ...(own['env'] as Readonly<Record<string, string | undefined>> | undefined), [WORKER_ENV]: workerName, ...marker };
  return { ...taken, ...chosen, ...(spec.permission === undefined ? {} : { permission: spec.permission }), cwd, env };
}

function sessionOptionKeys(agent: SessionSpec['agent']): ReadonlySet<string> {
  const schema = agentByName(agent).options.session as unknown as { readonly shape?: Readonly<Record<string, unknown>> };
  return new Set(Object.keys(schema.shape ?? {}));
}
