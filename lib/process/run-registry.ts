import { installHostExitHooks, removeHostExitHooks } from './host-exit.js';
import { removeHostTempDir } from './host-temp.js';
import { ensureKeeper, keeperGroup } from './keeper.js';
import type { ProcessEntry } from './process-entry.js';
import { readStatSync } from './proc-stat.js';
import { readProcessTableSync } from './process-table.js';
import { hostToken } from './run-marker.js';
import { sendSignal, signalGroup } from './signals.js';
import type { StopRequest } from './stop-machine.js';

/** What the registry needs from a run. */
export interface TrackedRun {
  /** The run's process group (its root's pid), or `null` when nothing was started. */
  readonly groupId: number | null;
  /** Starts the stop sequence (idempotent). */
  stop(request: StopRequest): void;
  /** Settles when the run's stop sequence or clean-up after exit has finished. */
  readonly settled: Promise<void>;
  /** What of the run `table` shows alive, for the synchronous kill at host exit: pids, and its group while it has members. */
  targetsNow(table: readonly ProcessEntry[]): { readonly pids: readonly number[]; readonly group: number | null };
}

const active = new Set<TrackedRun>();
/** The host's start time: no process of its runs started earlier. */
let hostStartTime: string | undefined;

/**
 * Tracks a run from its subscription (its spawn may wait for a later event-loop turn) until its
 * processes are gone. While any run is tracked, the host's exit hooks are installed; the keeper is
 * started with the first run and stays.
 */
export function track(run: TrackedRun): void {
  hostStartTime ??= readStatSync(process.pid)?.startTime ?? '';
  installHostExitHooks(killEverythingNow);
  ensureKeeper();
  active.add(run);
  trackGroup(run);
}

/** Tells the keeper about a tracked run's process group, once it has one. */
export function trackGroup(run: TrackedRun): void {
  if (active.has(run) && run.groupId !== null) keeperGroup(run.groupId, true);
}

export function untrack(run: TrackedRun): void {
  if (!active.delete(run)) return;
  if (run.groupId !== null) keeperGroup(run.groupId, false);
  if (active.size === 0) {
    removeHostExitHooks();
    removeHostTempDir();
  }
}

/**
 * How many runs are tracked: running, stopping, or cleaning up after their exit. `retryAgentRun`'s
 * waits are not runs and are not counted.
 *
 * @example
 * // A health endpoint's figure: how many agent runs this host has in hand.
 * const health = () => ({ runs: activeRunCount() });
 */
export function activeRunCount(): number {
  return active.size;
}

/**
 * Stops every run that is still active, with the same stop sequence as an unsubscribe, and
 * resolves when every stop has finished. A subscriber still listening to a run gets its
 * `terminal.failed` with reason `stopped` (for `processLines`: an exit item with
 * `stoppedBy: { kind: 'host' }`) and completion. For a graceful host shutdown: the agents get
 * their interrupt and grace period (pi kills its own tools and saves its session).
 *
 * `retryAgentRun`'s waits hold no process and are not tracked: a host ends them by unsubscribing
 * (`takeUntil(shutdown$)`).
 *
 * No process outlives its host however the host ends, even without this call:
 *
 * | how the host ends | what agent-rx does |
 * |---|---|
 * | `process.exit()`, an uncaught exception, an unhandled rejection | on `exit`, synchronously: SIGKILL of every process of every run (found by their run markers, see {@link RUN_MARKER_ENV}), until two scans find none; the host's temporary folder is removed |
 * | SIGINT, SIGTERM or SIGHUP, and the host has **no** listener for it | the same, then the host dies of the signal as it would have (exit status 130, 143, 129) |
 * | the same signal, and the host **has** a listener | nothing: the signal is the host's (call `stopAllRuns()` in it, as below) |
 * | SIGKILL, the OOM killer, a crash of Node itself | the keeper cleans up |
 *
 * These hooks are installed while runs are active and removed when none is. The keeper is a small
 * `/bin/sh` script started with the host's first run, in its own session, holding a pipe from the
 * host: when the host dies, however it dies, the pipe closes, and the keeper SIGKILLs the process
 * groups of the host's runs and every process carrying the host's run markers, removes the host's
 * temporary folder, and exits. It works on Linux; `AGENT_RX_KEEPER=off` in the host's environment
 * runs without it.
 *
 * @example
 * process.once('SIGTERM', () => {
 *   void stopAllRuns().then(() => process.exit(0));
 * });
 */
export async function stopAllRuns(): Promise<void> {
  const runs = [...active];
  for (const run of runs) run.stop({ kind: 'host' });
  await Promise.all(runs.map((run) => run.settled));
}

/** Rounds of synchronous scanning at host exit, and the pause after a round that killed something. */
const EXIT_ROUNDS = 20;
const EXIT_PAUSE_MS = 5;

/**
 * At host exit, synchronously: SIGKILLs every process carrying the host's token and every
 * process of every tracked run, until two scans in a row find none alive (bounded), then removes
 * the host's temporary folder.
 */
function killEverythingNow(): void {
  let empty = 0;
  for (let round = 0; active.size > 0 && empty < 2 && round < EXIT_ROUNDS; round += 1) {
    const { entries } = readProcessTableSync(hostToken(), hostStartTime);
    // Each target once: the table is marked with the host's token, so every run sees every marked process.
    const pids = new Set<number>();
    for (const entry of entries) if (entry.marked && !entry.zombie && entry.pid !== process.pid) pids.add(entry.pid);
    for (const run of active) {
      const targets = run.targetsNow(entries);
      for (const pid of targets.pids) pids.add(pid);
      if (targets.group !== null) signalGroup(targets.group, 'SIGKILL');
    }
    for (const pid of pids) sendSignal(pid, 'SIGKILL');
    empty = pids.size === 0 ? empty + 1 : 0;
    if (pids.size > 0) sleepSync(EXIT_PAUSE_MS);
  }
  removeHostTempDir();
}

// Nothing asynchronous runs at exit; Atomics.wait is a real sleep for the main thread.
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
