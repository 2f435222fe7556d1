import { constants } from 'node:os';

/** The signals that stop a run like Ctrl-C: SIGINT, SIGTERM (service managers, `timeout`), SIGHUP (a closed terminal). */
export const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
export type StopSignal = (typeof STOP_SIGNALS)[number];

/** The exit code a shell gives a command ended by `signal`: 128 + its number (130, 143, 129). */
export function exitCodeFor(signal: StopSignal): number {
  return 128 + constants.signals[signal];
}

/**
 * Handles SIGINT, SIGTERM and SIGHUP: the first calls `stop(signal)` and exits with
 * `exitCodeFor(signal)` once it settles; a second one of any of them exits at once with its own code.
 */
export function onStopSignals(stop: (signal: StopSignal) => Promise<void>): void {
  let stopping = false;
  const handle = (signal: StopSignal): void => {
    if (stopping) process.exit(exitCodeFor(signal));
    stopping = true;
    const code = exitCodeFor(signal);
    const exit = (): never => process.exit(code);
    try {
      stop(signal).then(exit, exit);
    } catch {
      exit();
    }
  };
  for (const signal of STOP_SIGNALS) process.on(signal, handle);
}
