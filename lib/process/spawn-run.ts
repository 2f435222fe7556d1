import { randomUUID } from 'node:crypto';
import { execa } from 'execa';
import { isObservable, type Subscription } from 'rxjs';
import type { ProcessExit, SpawnFailure } from './items.js';
import { LineFramer, type Frame } from './line-framer.js';
import type { ResolvedProcessOptions, StdinSource, StopReport } from './options.js';
import { describe, readProcessTable, readStat, runMembers } from './process-table.js';
import { track, untrack, type TrackedRun } from './run-registry.js';
import { sendSignal, signalGroup } from './signals.js';
import { StderrTail } from './stderr-tail.js';
import { transition, type StopEffect, type StopInput, type StopState } from './stop-machine.js';

/** Environment variable that marks every process of a run, so that escaped descendants are found. */
export const RUN_MARKER_ENV = 'AGENT_RX_RUN_ID';

/** How often confirmation looks for survivors. */
const CONFIRM_POLL_MS = 20;

export interface RunListener {
  frame(frame: Frame): void;
  exit(exit: ProcessExit): void;
}

/**
 * One spawned process and the shell that carries out its stop sequence. The listener is called
 * until `stop()`; the stop sequence then goes on by itself, tracked by the run registry.
 */
export class ProcessRun implements TrackedRun {
  readonly settled: Promise<void>;
  readonly #options: ResolvedProcessOptions;
  readonly #marker = `${RUN_MARKER_ENV}=${randomUUID()}`;
  readonly #subprocess: ReturnType<typeof spawn>;
  readonly #pid: number | null;
  readonly #rootStartTime: Promise<string | undefined>;
  readonly #startedAt = performance.now();
  #listener: RunListener | null;
  #state: StopState = 'running';
  #rootExited = false;
  #exitedGracefully = false;
  #requested = false;
  #sequenceStartedAt = 0;
  /** Descendants seen so far: pid → start time. */
  readonly #known = new Map<number, string>();
  readonly #killed = new Set<number>();
  readonly #errors: string[] = [];
  #graceTimer: NodeJS.Timeout | undefined;
  #stdinSubscription: Subscription | null = null;
  #settle!: () => void;

  constructor(command: string, args: readonly string[], options: ResolvedProcessOptions, listener: RunListener) {
    this.#options = options;
    this.#listener = listener;
    this.settled = new Promise((resolve) => {
      this.#settle = resolve;
    });
    const [name, value] = this.#marker.split('=') as [string, string];
    this.#subprocess = spawn(command, args, options, { [name]: value });
    this.#pid = this.#subprocess.pid ?? null;
    // Read now, while the root surely runs: a process started earlier cannot be of this run.
    this.#rootStartTime = this.#pid === null ? Promise.resolve(undefined) : readStat(this.#pid).then((stat) => stat?.startTime);
    track(this);
    this.#wire();
  }

  /** Starts the stop sequence; the listener hears nothing more. Idempotent. */
  stop(): void {
    this.#listener = null;
    this.#stdinSubscription?.unsubscribe();
    if (this.#state !== 'running') return;
    this.#requested = true;
    this.#dispatch({ type: 'stop' });
  }

  killNow(): void {
    if (this.#pid === null) return;
    signalGroup(this.#pid, 'SIGKILL');
    if (!this.#rootExited) sendSignal(this.#pid, 'SIGKILL');
    for (const pid of this.#known.keys()) sendSignal(pid, 'SIGKILL');
  }

  #wire(): void {
    const subprocess = this.#subprocess;
    const framer = new LineFramer(this.#options.maxLineBytes);
    const tail = new StderrTail(this.#options.stderrTailBytes);
    const emit = (frame: Frame): void => this.#listener?.frame(frame);
    // Keep draining after a stop, so a child blocked on a full pipe can still handle its interrupt.
    subprocess.stdout.on('data', (chunk: Buffer) => {
      if (this.#listener !== null) framer.push(chunk, emit);
    });
    subprocess.stderr.on('data', (chunk: Buffer) => {
      tail.push(chunk);
    });
    const record = (error: unknown): void => {
      this.#errors.push(describe(error));
    };
    subprocess.stdin?.on('error', record);
    subprocess.stdout.on('error', record);
    subprocess.stderr.on('error', record);
    subprocess.once('exit', () => {
      this.#rootExit();
    });
    this.#feedStdin();
    subprocess.then(
      (result) => {
        this.#rootExit();
        if (this.#listener === null) return;
        framer.end(emit);
        // The last line may have made the subscriber leave.
        const listener = this.#currentListener();
        if (listener === null) return;
        const spawnError = spawnFailure(result, this.#pid);
        listener.exit({
          kind: 'exit',
          exitCode: spawnError === null ? (result.exitCode ?? null) : null,
          signal: result.signal ?? null,
          stderr: tail.text(),
          stderrTruncatedBytes: tail.droppedBytes,
          spawnError,
          pid: this.#pid,
          durationMs: performance.now() - this.#startedAt,
        });
      },
      (error: unknown) => {
        // reject: false makes this unreachable in practice; still, the stream must end with an exit.
        this.#rootExit();
        record(error);
        this.#currentListener()?.exit({
          kind: 'exit',
          exitCode: null,
          signal: null,
          stderr: tail.text(),
          stderrTruncatedBytes: tail.droppedBytes,
          spawnError: { code: 'EUNEXPECTED', message: describe(error) },
          pid: this.#pid,
          durationMs: performance.now() - this.#startedAt,
        });
      },
    );
  }

  #currentListener(): RunListener | null {
    return this.#listener;
  }

  /** Writes an Observable stdin source as it emits; closes stdin when it completes. */
  #feedStdin(): void {
    const source = this.#options.stdin;
    const pipe = this.#subprocess.stdin;
    if (!isObservable(source) || pipe === null) return;
    this.#stdinSubscription = source.subscribe({
      next: (chunk) => {
        if (pipe.writable) pipe.write(chunk);
      },
      error: (error: unknown) => {
        this.#errors.push(`stdin source failed: ${describe(error)}`);
        pipe.end();
      },
      complete: () => {
        pipe.end();
      },
    });
  }

  #rootExit(): void {
    this.#stdinSubscription?.unsubscribe();
    if (this.#rootExited) return;
    this.#rootExited = true;
    this.#dispatch({ type: 'rootExited' });
  }

  #dispatch(input: StopInput): void {
    const previous = this.#state;
    const next = transition(previous, input);
    this.#state = next.state;
    if (previous === 'running' && next.state !== 'running') this.#sequenceStartedAt = performance.now();
    if (previous === 'interrupting' && input.type === 'rootExited') this.#exitedGracefully = true;
    for (const effect of next.effects) this.#run(effect);
  }

  #run(effect: StopEffect): void {
    switch (effect.type) {
      case 'recordTree':
        void this.#recordTree().then(() => {
          this.#dispatch({ type: 'treeRecorded' });
        });
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
        void this.#killAndConfirm().then((confirmed) => {
          this.#dispatch({ type: confirmed ? 'confirmed' : 'confirmTimeout' });
        });
        return;
      case 'finish':
        void this.#finish(effect.confirmed);
        return;
    }
  }

  async #recordTree(): Promise<void> {
    if (this.#pid === null) return;
    const table = await readProcessTable(this.#marker, await this.#rootStartTime);
    if (table.error !== null) this.#errors.push(table.error);
    for (const member of runMembers(table.entries, this.#pid, this.#known).values()) {
      this.#known.set(member.pid, member.startTime);
    }
  }

  #interrupt(): void {
    const { signal, stdin } = this.#options.interrupt;
    const pipe = this.#subprocess.stdin;
    if (stdin !== null && pipe !== null && pipe.writable && !pipe.writableEnded) {
      try {
        pipe.write(stdin);
      } catch (error) {
        this.#errors.push(`interrupt through stdin: ${describe(error)}`);
      }
    }
    if (signal !== null && this.#pid !== null) this.#note(sendSignal(this.#pid, signal));
  }

  /**
   * SIGKILLs the group, the root (while alive) and every member found, until two scans in a row
   * find nothing. One empty scan is not enough: a process forked after the scan listed /proc, by a
   * parent that exited before the scan read it, is missed; the group kill before the second scan
   * reaches it (same group), and the second scan finds it if it moved to another session.
   */
  async #killAndConfirm(): Promise<boolean> {
    const pid = this.#pid;
    if (pid === null) return true;
    const deadline = performance.now() + this.#options.killTimeoutMs;
    let emptyScans = 0;
    for (;;) {
      const rootAlive = !this.#rootExited;
      if (rootAlive) {
        this.#killed.add(pid);
        this.#note(sendSignal(pid, 'SIGKILL'));
      }
      this.#note(signalGroup(pid, 'SIGKILL'));
      const table = await readProcessTable(this.#marker, await this.#rootStartTime);
      if (table.error !== null && this.#errors.at(-1) !== table.error) this.#errors.push(table.error);
      const members = runMembers(table.entries, pid, this.#known);
      for (const member of members.values()) {
        this.#known.set(member.pid, member.startTime);
        this.#killed.add(member.pid);
        this.#note(sendSignal(member.pid, 'SIGKILL'));
      }
      emptyScans = members.size === 0 && !rootAlive ? emptyScans + 1 : 0;
      if (emptyScans === 2) return true;
      if (performance.now() >= deadline) return false;
      // A second look right away; after a kill, give the kernel a moment first.
      if (emptyScans === 0) await delay(CONFIRM_POLL_MS);
    }
  }

  async #finish(confirmed: boolean): Promise<void> {
    clearTimeout(this.#graceTimer);
    const survivors: number[] = [];
    if (!confirmed) {
      for (const [pid, startTime] of this.#known) {
        const stat = await readStat(pid);
        if (stat !== null && !stat.zombie && (startTime === '' || stat.startTime === startTime)) survivors.push(pid);
      }
      if (!this.#rootExited && this.#pid !== null) survivors.push(this.#pid);
    }
    untrack(this);
    const report: StopReport = {
      pid: this.#pid,
      requested: this.#requested,
      exitedGracefully: this.#exitedGracefully,
      killed: [...this.#killed],
      confirmed,
      survivors,
      durationMs: performance.now() - this.#sequenceStartedAt,
      errors: this.#errors,
    };
    this.#settle();
    try {
      this.#options.onStopped?.(report);
    } catch {
      // A throwing observer of the report must not break the host.
    }
  }

  #note(error: string | null): void {
    // A process that vanished between the scan and the signal is the expected race, not a failure.
    if (error !== null && !error.includes('ESRCH')) this.#errors.push(error);
  }
}

function spawn(command: string, args: readonly string[], options: ResolvedProcessOptions, marker: Record<string, string>) {
  return execa(command, args, {
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    env: { ...options.env, ...marker },
    extendEnv: true,
    ...stdinOption(options.stdin),
    stdout: 'pipe',
    stderr: 'pipe',
    buffer: false,
    reject: false,
    // Own process group: a group kill reaches grandchildren whose parent already exited.
    detached: true,
    cleanup: false,
    forceKillAfterDelay: false,
    windowsHide: true,
  });
}

function stdinOption(stdin: StdinSource | undefined) {
  if (stdin === undefined) return { stdin: 'ignore' as const };
  if (isObservable(stdin)) return { stdin: 'pipe' as const };
  return { input: stdin };
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function spawnFailure(
  result: { failed: boolean; code?: string | undefined; originalMessage?: string | undefined; shortMessage?: string | undefined },
  pid: number | null,
): SpawnFailure | null {
  if (pid !== null || !result.failed) return null;
  return { code: result.code ?? 'UNKNOWN', message: result.originalMessage ?? result.shortMessage ?? 'spawn failed' };
}
