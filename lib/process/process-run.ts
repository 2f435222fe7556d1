import type { Subscription } from 'rxjs';
import { isObservable } from 'rxjs';
import type { ProcessExit, StartFailure } from './items.js';
import type { ResolvedProcessOptions, StopReport } from './options.js';
import { errorMessage } from './error-message.js';
import type { ProcessEntry } from './process-entry.js';
import { track, trackGroup, untrack, type TrackedRun } from './run-registry.js';
import { newRunMarker, RUN_MARKER_ENV } from './run-marker.js';
import { RunTree } from './run-tree.js';
import { currentRunScope, type ProcessFacts } from './run-scope.js';
import { sendSignal } from './signals.js';
import { readOutput, type OutputFrame } from './read-output.js';
import { spawnRoot, type Subprocess } from './spawn.js';
import { withSpawnProblem } from './spawn-problem.js';
import { spawnPacer } from './spawn-pacer.js';
import { feedStdin } from './stdin-feed.js';
import { INITIAL_STOP_STATE, transition, type StopEffect, type StopInput, type StopRequest, type StopState } from './stop-machine.js';
import { startTimeLimits, type TimeLimits } from './time-limits.js';
import { unstartedExit } from './unstarted-exit.js';

/** Who hears a run: its output frames, then one exit item. */
export interface RunListener {
  frame(frame: OutputFrame): void;
  exit(exit: ProcessExit): void;
  /**
   * The stop sequence is about to begin for a host stop or a time limit (not an unsubscribe), before
   * any signal: what waits on the agent may be settled now (a session's permission requests).
   */
  stopping?(request: StopRequest): void;
}

export interface ProcessRun {
  /**
   * Starts the stop sequence (idempotent; the first request is the one that counts). After an
   * `unsubscribe` the listener hears nothing more; after a host stop or a time limit it still gets
   * the rest of the output and an exit item that says why the run was stopped.
   */
  stop(request: StopRequest): void;
  /**
   * Kills the run's processes other than its root (a session's tool commands that the agent left
   * running), while the root lives on: SIGKILL, confirmed within `killTimeoutMs`. Only processes
   * started at or after `bornSince` (a start time from /proc, see `startTimeNow`) count. Never rejects.
   */
  killDescendants(bornSince?: string): Promise<{ readonly killed: readonly number[]; readonly confirmed: boolean }>;
  /** The root's pid and its process group (it leads its own), once spawned; `null` before or when it could not start. */
  readonly facts: ProcessFacts | null;
}

const UNSUBSCRIBE: StopRequest = { kind: 'unsubscribe' };

/**
 * Spawns a process and carries out its stop sequence: the stop machine decides, this shell does
 * the effects. The run is tracked by the run registry from its spawn until its processes are gone,
 * whether or not anybody still listens.
 */
export function startProcessRun(command: string, args: readonly string[], options: ResolvedProcessOptions, listener: RunListener): ProcessRun {
  return new Run(options, listener).start(command, args);
}

class Run implements TrackedRun, ProcessRun {
  readonly settled: Promise<void>;
  groupId: number | null = null;
  readonly #options: ResolvedProcessOptions;
  #startedAt = performance.now();
  readonly #errors: string[] = [];
  #listener: RunListener | null;
  #machine: StopState = INITIAL_STOP_STATE;
  #sequenceStartedAt = 0;
  #subprocess: Subprocess | undefined;
  #tree: RunTree | null = null;
  #limits: TimeLimits | undefined;
  #stdinFeed: Subscription | undefined;
  #graceTimer: NodeJS.Timeout | undefined;
  /** Withdraws the spawn while it waits for a later event-loop turn; `null` once it ran. */
  #withdrawSpawn: (() => void) | null = null;
  #settle!: () => void;
  /** The scope the run was started in: what it adds to the environment; where its control is attached. */
  readonly #scope = currentRunScope();
  #detach: (() => void) | undefined;
  /** The exit item, held until the clean-up is over: no process of the run is left when the listener hears it. */
  #heldExit: ProcessExit | null = null;
  #finished = false;

  constructor(options: ResolvedProcessOptions, listener: RunListener) {
    this.#options = options;
    this.#listener = listener;
    this.#detach = this.#scope?.attach({
      stop: (cause) => {
        this.stop(cause);
      },
      process: () => this.facts,
    });
    this.settled = new Promise((resolve) => {
      this.#settle = resolve;
    });
  }

  /** Tracks the run now; spawns now, or in a later turn when a burst of spawns used this turn's budget. */
  start(command: string, args: readonly string[]): this {
    track(this);
    this.#withdrawSpawn = spawnPacer.pace(() => {
      this.#withdrawSpawn = null;
      this.#spawn(command, args);
    });
    return this;
  }

  #spawn(command: string, args: readonly string[]): void {
    const options = this.#options;
    this.#startedAt = performance.now();
    let subprocess: Subprocess;
    try {
      const marker = newRunMarker(options.env?.[RUN_MARKER_ENV] ?? process.env[RUN_MARKER_ENV]);
      const scopeEnv = this.#scope?.env;
      // The scope's variables (a trace context) under the run's own.
      const spawned = scopeEnv === undefined || Object.keys(scopeEnv).length === 0 ? options : { ...options, env: { ...scopeEnv, ...options.env } };
      subprocess = spawnRoot(command, args, spawned, { [RUN_MARKER_ENV]: marker.value });
      this.#subprocess = subprocess;
      const pid = subprocess.pid ?? null;
      if (pid !== null) {
        this.groupId = pid;
        this.#tree = new RunTree(pid, marker.token);
        trackGroup(this);
      }
    } catch (error) {
      // execa reports a failed spawn through its result; anything thrown here is unexpected, and still ends the run in-band.
      this.#endUnstarted(null, { stage: 'spawn', code: 'EUNEXPECTED', message: errorMessage(error) });
      return;
    }
    this.#limits = startTimeLimits(options, (cause) => {
      this.stop(cause);
    });
    this.#readOutput(subprocess, this.groupId, command);
    const stdin = options.stdin;
    if (isObservable(stdin) && subprocess.stdin !== null) {
      this.#stdinFeed = feedStdin(subprocess.stdin, stdin, (message) => this.#errors.push(message));
    }
  }

  stop(request: StopRequest = UNSUBSCRIBE): void {
    if (this.#withdrawSpawn !== null) {
      // Stopped before its turn to spawn: nothing was started, nothing to stop.
      this.#withdrawSpawn();
      this.#withdrawSpawn = null;
      this.#endUnstarted(request, null);
      return;
    }
    if (request.kind === 'unsubscribe') this.#listener = null;
    else if (this.#machine.request === null) this.#listener?.stopping?.(request);
    this.#stdinFeed?.unsubscribe();
    this.#limits?.clear();
    this.#dispatch({ type: 'stop', request });
  }

  get facts(): ProcessFacts | null {
    const pid = this.groupId;
    return pid === null ? null : { pid, processGroup: pid };
  }

  killDescendants(bornSince?: string): Promise<{ readonly killed: readonly number[]; readonly confirmed: boolean }> {
    const tree = this.#tree;
    if (tree === null || this.#machine.rootExited) return Promise.resolve({ killed: [], confirmed: true });
    return tree.killDescendants(this.#options.killTimeoutMs, bornSince).catch((error: unknown) => {
      this.#errors.push(`killing the descendants: ${errorMessage(error)}`);
      return { killed: [], confirmed: false };
    });
  }

  targetsNow(table: readonly ProcessEntry[]): { readonly pids: readonly number[]; readonly group: number | null } {
    return this.#tree?.targetsNow(table, !this.#machine.rootExited) ?? { pids: [], group: null };
  }

  #readOutput(subprocess: Subprocess, pid: number | null, command: string): void {
    readOutput(subprocess, pid, this.#options, {
      listening: () => this.#listener !== null,
      frame: (frame) => this.#listener?.frame(frame),
      activity: () => this.#limits?.activity(),
      error: (message) => this.#errors.push(message),
      rootExited: () => {
        this.#rootExit();
      },
      ended: (end) => {
        const request = this.#machine.request;
        this.#heldExit = {
          kind: 'exit',
          ...end,
          startError: end.startError === null ? null : withSpawnProblem(end.startError, command, this.#options.cwd),
          pid,
          durationMs: performance.now() - this.#startedAt,
          ...(request === null || request.kind === 'unsubscribe' ? {} : { stoppedBy: request }),
        };
        if (this.#finished) this.#releaseExit();
      },
    });
  }

  #rootExit(): void {
    this.#stdinFeed?.unsubscribe();
    this.#limits?.clear();
    this.#dispatch({ type: 'rootExited' });
  }

  #dispatch(input: StopInput): void {
    const previous = this.#machine;
    const next = transition(previous, input);
    this.#machine = next.state;
    if (previous.phase === 'running' && next.state.phase !== 'running') this.#sequenceStartedAt = performance.now();
    for (const effect of next.effects) this.#run(effect);
  }

  #run(effect: StopEffect): void {
    const tree = this.#tree;
    switch (effect.type) {
      case 'recordTree':
        if (tree === null) {
          this.#dispatch({ type: 'treeRecorded' });
          return;
        }
        tree.record().then(
          () => {
            this.#dispatch({ type: 'treeRecorded' });
          },
          (error: unknown) => {
            this.#errors.push(`recording the tree: ${errorMessage(error)}`);
            this.#dispatch({ type: 'treeRecorded' });
          },
        );
        return;
      case 'interrupt':
        this.#interrupt();
        return;
      case 'startGraceTimer':
        // Not unref'd: the kill must still happen when nothing else keeps the host alive.
        this.#graceTimer = setTimeout(() => {
          this.#dispatch({ type: 'graceElapsed' });
        }, this.#options.gracePeriodMs);
        return;
      case 'clearGraceTimer':
        clearTimeout(this.#graceTimer);
        return;
      case 'killTree':
      case 'killSurvivors':
        if (tree === null) {
          this.#dispatch({ type: 'confirmed' });
          return;
        }
        tree.killAndConfirm(() => !this.#machine.rootExited, this.#options.killTimeoutMs).then(
          (confirmed) => {
            this.#dispatch({ type: confirmed ? 'confirmed' : 'confirmTimeout' });
          },
          (error: unknown) => {
            this.#errors.push(`killing the tree: ${errorMessage(error)}`);
            this.#dispatch({ type: 'confirmTimeout' });
          },
        );
        return;
      case 'finish':
        void this.#finish(effect.confirmed);
        return;
    }
  }

  #interrupt(): void {
    const { signal, stdin } = this.#options.interrupt;
    const pipe = this.#subprocess?.stdin;
    if (stdin !== null && pipe !== null && pipe !== undefined && pipe.writable && !pipe.writableEnded) {
      try {
        pipe.write(stdin);
      } catch (error) {
        this.#errors.push(`interrupt through stdin: ${errorMessage(error)}`);
      }
    }
    const pid = this.groupId;
    if (signal !== null && pid !== null) {
      const error = sendSignal(pid, signal);
      if (error !== null && !error.includes('ESRCH')) this.#errors.push(error);
    }
  }

  /** Ends a run that never had a process: stopped while it waited to spawn, or its spawn threw. */
  #endUnstarted(request: StopRequest | null, startError: StartFailure | null): void {
    const listener = this.#listener;
    this.#listener = null;
    // Over before it began: a later stop (the teardown that follows the exit item) finds nothing to do.
    this.#machine = { phase: 'stopped', request, rootExited: true, exitedGracefully: false };
    listener?.exit(unstartedExit(startError, { stoppedBy: request === null || request.kind === 'unsubscribe' ? undefined : request }));
    untrack(this);
    this.#detach?.();
    this.#settle();
    this.#reportStop({
      pid: null,
      requested: request !== null,
      cause: request?.kind ?? null,
      exitedGracefully: false,
      killed: [],
      confirmed: true,
      survivors: [],
      durationMs: 0,
      errors: startError === null ? [] : [startError.message],
    });
  }

  async #finish(confirmed: boolean): Promise<void> {
    clearTimeout(this.#graceTimer);
    const { request, rootExited, exitedGracefully } = this.#machine;
    const survivors = confirmed || this.#tree === null ? [] : await this.#tree.survivors(!rootExited).catch(() => []);
    untrack(this);
    this.#detach?.();
    const report: StopReport = {
      pid: this.groupId,
      requested: request !== null,
      cause: request?.kind ?? null,
      exitedGracefully,
      killed: this.#tree?.killed ?? [],
      confirmed,
      survivors,
      durationMs: performance.now() - this.#sequenceStartedAt,
      errors: [...this.#errors, ...(this.#tree?.errors ?? [])],
    };
    this.#settle();
    this.#reportStop(report);
    this.#finished = true;
    this.#releaseExit();
  }

  /** Gives the listener the exit item once the output ended and the clean-up is over, whichever came last. */
  #releaseExit(): void {
    const exit = this.#heldExit;
    if (exit === null) return;
    this.#heldExit = null;
    this.#listener?.exit(exit);
  }

  #reportStop(report: StopReport): void {
    try {
      this.#options.onStopped?.(report);
    } catch (error) {
      // The stream is over (or nobody listens): a throwing observer of the report is reported, never fatal.
      process.emitWarning(`agent-rx: onStopped threw: ${errorMessage(error)}`);
    }
  }
}
