import { constants } from 'node:os';

/** The signals that stop a run like Ctrl-C: SIGINT, SIGTERM (service managers, `timeout`), SIGHUP (a closed terminal). */
export const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
export type StopSignal = (typeof STOP_SIGNALS)[number];

/** The exit code a shell gives a command ended by `signal`: 128 + its number (130, 143, 129). */
export function exitCodeFor(signal: StopSignal): number {
  return exitCodeOf(signal);
}

/** What stops a command early: one of the stop signals, or `SIGPIPE`, a reader of stdout that went away. */
export type StopCause = StopSignal | 'SIGPIPE';

/** The exit code a shell gives a command ended by `cause`: 128 + its number (130, 143, 129, 141). */
function exitCodeOf(cause: StopCause): number {
  return 128 + constants.signals[cause];
}

/**
 * Handles SIGINT, SIGTERM and SIGHUP: the first calls `stop(signal)` and exits with
 * `exitCodeFor(signal)` once it settles; a second one of any of them exits at once with its own code.
 *
 * A broken stdout (`EPIPE`: `agent-rx run … | head` once `head` has what it wants) is a stop too,
 * `SIGPIPE` (exit 141, as a process killed by that signal): Node ignores the signal and reports the
 * write as an error, which would otherwise crash the command with the agent still running. Writes
 * that fail after it are ignored.
 */
export function onStopSignals(stop: (cause: StopCause) => Promise<void>): void {
  let stopping = false;
  const handle = (cause: StopCause): void => {
    if (stopping) {
      if (cause !== 'SIGPIPE') process.exit(exitCodeOf(cause));
      return;
    }
    stopping = true;
    const code = exitCodeOf(cause);
    const exit = (): never => process.exit(code);
    try {
      stop(cause).then(exit, exit);
    } catch {
      exit();
    }
  };
  for (const signal of STOP_SIGNALS) process.on(signal, handle);
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') handle('SIGPIPE');
    else throw error;
  });
}
