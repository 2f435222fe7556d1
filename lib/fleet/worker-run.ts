import type { Job } from 'bullmq';
import type { Observable, Subscription } from 'rxjs';
import { isTerminal, type CliMessage } from '../messages.js';
import type { StopReport } from '../process/options.js';
import { fleetFailure } from './failure.js';
import { asError } from '../process/error-message.js';
import type { ErrorReport } from './on-error.js';
import { AnswerDesk } from './permission-answers.js';
import type { PermissionCallback } from '../operators/permission-policy.js';
import { UnrecoverableError } from './peers.js';
import { appendOrReport, runKeys, RUN_TTL_SECONDS, type FleetRedis, type RunKeys } from './redis.js';
import { checkRunSpec, type RunSpec } from './run-spec.js';
import { beatLapsed, heartbeatStop, isWorkerStopReason, stopTerminal, type WorkerStopReason } from './stop-reason.js';
import { throttleToolUpdates } from './throttle-tool-updates.js';

/** What a run on a worker needs of its worker. */
export interface RunHost {
  readonly workerName: string;
  readonly prefix: string;
  readonly redis: FleetRedis;
  /** How often a run's heartbeat is renewed, and how long one lives. */
  readonly heartbeatMs: number;
  readonly heartbeatTtlMs: number;
  /** Aborted once the worker closes: a job fetched then is not started. */
  readonly closing: AbortSignal;
  /** The runs running here, by id: a cancel, a lost lock and the drain stop them. */
  readonly active: Map<string, ActiveRun>;
  readonly report: ErrorReport;
  tell(event: WorkerRunEvent): void;
  /**
   * The agent's run, not subscribed yet; throws when the worker refuses it (its agent, its folder).
   * `ask` is its permission callback when its spec says `permission: 'ask'`.
   */
  source(runId: string, spec: RunSpec, onStopped: (report: StopReport) => void, ask: PermissionCallback): Observable<CliMessage>;
}

/** A run being run here. */
export interface ActiveRun {
  stop(why: WorkerStopReason): void;
  /** A caller's answer to one of its permission requests (ignored unless that request waits for one). */
  answer(requestId: string, decision: unknown): void;
}

/**
 * Runs a job taken from the queue: checks its spec, lets it through the start gate (a run starts
 * at most once, ever), and runs it here; settles once it is over and its processes are gone. A
 * job that is not started throws BullMQ's `UnrecoverableError` (BullMQ fails it, never retries it).
 */
export async function runJob(host: RunHost, job: Job, signal: AbortSignal | undefined): Promise<void> {
  const runId = job.id;
  if (runId === undefined) throw new UnrecoverableError('a job without an id');
  // Fetched as the worker began to close: not started here (BullMQ fails it, and its stream ends lost).
  if (host.closing.aborted) throw new UnrecoverableError(`the worker ${host.workerName} was shutting down`);
  const keys = runKeys(host.prefix, runId);
  let spec: RunSpec;
  try {
    spec = checkRunSpec(job.data);
  } catch (error) {
    void appendOrReport(host.redis, host.report, keys, fleetFailure('setup', asError(error).message), true);
    host.tell({ type: 'refused', runId, why: 'invalid' });
    throw new UnrecoverableError(asError(error).message);
  }
  const gate = await host.redis.agentRxStart(keys.end, keys.cancel, keys.owner, keys.heartbeat, host.workerName, host.heartbeatTtlMs, RUN_TTL_SECONDS);
  if (gate !== 'ok') {
    if (gate === 'cancelled') void appendOrReport(host.redis, host.report, keys, fleetFailure('aborted', 'the run was cancelled before it started'), true);
    host.tell({ type: 'refused', runId, why: gate === 'ended' || gate === 'cancelled' ? gate : 'duplicate' });
    throw new UnrecoverableError(`the run was not started: ${gate}`);
  }
  host.tell({ type: 'started', runId, agent: spec.agent });
  await new Promise<void>((resolve) => {
    new WorkerRun(host, runId, keys, resolve).start(spec, signal);
  });
}

/**
 * One run on this worker, from its start gate to its end: its messages appended to its stream
 * (`tool.update`s throttled), its permission requests waiting for a caller's answer when its spec
 * says `ask` (see {@link AnswerDesk}), a heartbeat with fencing, and the stops (a cancel, the drain, a lost
 * lock, a stream closed by someone else, a heartbeat Redis refused or did not answer), each ending
 * the stream with its terminal. It is over once its stream is done and its processes are gone.
 */
class WorkerRun implements ActiveRun {
  readonly #host: RunHost;
  readonly #runId: string;
  readonly #keys: RunKeys;
  readonly #done: () => void;
  #subscription: Subscription | null = null;
  #beat: NodeJS.Timeout | undefined;
  /** Nothing more is written from the agent: its terminal came, it ended, or it was stopped. */
  #over = false;
  #stopped: WorkerStopReason | null = null;
  #processesGone = false;
  #lastBeat = performance.now();
  /** Its permission requests waiting for a caller's answer (`permission: 'ask'`). */
  readonly #answers: AnswerDesk;

  constructor(host: RunHost, runId: string, keys: RunKeys, done: () => void) {
    this.#host = host;
    this.#runId = runId;
    this.#keys = keys;
    this.#done = done;
    this.#answers = new AnswerDesk(host.redis, keys, host.report);
  }

  start(spec: RunSpec, signal: AbortSignal | undefined): void {
    const host = this.#host;
    this.#beat = setInterval(() => {
      this.#heartbeat();
    }, host.heartbeatMs);
    host.active.set(this.#runId, this);
    signal?.addEventListener('abort', () => {
      this.stop(isWorkerStopReason(signal.reason) ? signal.reason : 'cancel');
    });
    let source: Observable<CliMessage>;
    try {
      source = host.source(
        this.#runId,
        spec,
        () => {
          this.#processesGone = true;
          this.#finish();
        },
        this.#answers.ask,
      );
    } catch (error) {
      this.#over = true;
      this.#processesGone = true;
      this.#append(fleetFailure('setup', `the worker refused the run: ${asError(error).message}`), true);
      this.#finish();
      return;
    }
    this.#subscription = source.pipe(throttleToolUpdates()).subscribe({
      next: (message) => {
        if (this.#over) return;
        if (isTerminal(message)) this.#over = true;
        this.#write(message);
      },
      complete: () => {
        this.#over = true;
        this.#finish();
      },
      error: (error: unknown) => {
        this.#over = true;
        this.#append(fleetFailure('lost', `the run failed on the worker: ${asError(error).message}`), true);
        this.#finish();
      },
    });
  }

  stop(why: WorkerStopReason): void {
    if (this.#stopped !== null || this.#over) return;
    this.#stopped = why;
    this.#over = true;
    this.#subscription?.unsubscribe();
    const terminal = stopTerminal(why, this.#host.workerName);
    if (terminal !== null) this.#append(terminal, true);
    if (this.#subscription === null) this.#processesGone = true;
    this.#finish();
  }

  answer(requestId: string, decision: unknown): void {
    this.#answers.answer(requestId, decision);
  }

  // Over once its stream is done and its processes are gone: only then may the job end.
  #finish(): void {
    if (!this.#over || !this.#processesGone) return;
    clearInterval(this.#beat);
    this.#host.active.delete(this.#runId);
    this.#host.tell({ type: 'ended', runId: this.#runId, stopped: this.#stopped });
    this.#done();
  }

  // An agent's message to the stream; a stream closed by someone else (a cancel, a watchdog) stops the agent.
  #write(message: CliMessage): void {
    void appendOrReport(this.#host.redis, this.#host.report, this.#keys, message, isTerminal(message)).then((accepted) => {
      if (!accepted && !this.#over) this.stop('ended');
    });
  }

  #append(message: CliMessage, terminal: boolean): void {
    void appendOrReport(this.#host.redis, this.#host.report, this.#keys, message, terminal);
  }

  // Fencing: callers take the run for lost once its heartbeat is gone; it must not run on unseen,
  // whether Redis refuses the beats or does not answer them.
  #heartbeat(): void {
    const { redis, workerName, heartbeatTtlMs, report } = this.#host;
    if (beatLapsed(performance.now() - this.#lastBeat, heartbeatTtlMs)) {
      this.#stopFor('unreachable');
      return;
    }
    const keys = this.#keys;
    redis.agentRxBeat(keys.end, keys.cancel, keys.heartbeat, keys.owner, workerName, heartbeatTtlMs).then((answer) => {
      this.#lastBeat = performance.now();
      this.#stopFor(answer);
    }, report);
    // An answer whose pub/sub message was lost is found here, within a beat.
    if (!this.#over) this.#answers.poll();
  }

  #stopFor(beat: string): void {
    const why = heartbeatStop(beat);
    if (why !== null) this.stop(why);
  }
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
  | { readonly type: 'ended'; readonly runId: string; readonly stopped: WorkerStopReason | null };
