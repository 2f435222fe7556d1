import { onExit } from 'signal-exit';

/** What the registry needs from a run. */
export interface TrackedRun {
  /** Starts the stop sequence (idempotent). */
  stop(): void;
  /** Settles when the run's stop sequence or clean-up after exit has finished. */
  readonly settled: Promise<void>;
  /** Synchronous last resort at host exit: SIGKILL everything known of the run. */
  killNow(): void;
}

const active = new Set<TrackedRun>();
let removeExitHook: (() => void) | null = null;

export function track(run: TrackedRun): void {
  active.add(run);
  // Installed on first use, so importing the library changes nothing in the host.
  removeExitHook ??= onExit(() => {
    for (const tracked of active) tracked.killNow();
  });
}

export function untrack(run: TrackedRun): void {
  active.delete(run);
}

/** How many runs are tracked: running, stopping, or cleaning up after their exit. */
export function activeRunCount(): number {
  return active.size;
}

/**
 * Stops every run that is still active, with the same stop sequence as an unsubscribe, and
 * resolves when every stop in flight has finished. For graceful host shutdown.
 *
 * @example
 * process.once('SIGTERM', () => {
 *   void stopAllRuns().then(() => process.exit(0));
 * });
 */
export async function stopAllRuns(): Promise<void> {
  const runs = [...active];
  for (const run of runs) run.stop();
  await Promise.all(runs.map((run) => run.settled));
}
