import type { ResolvedProcessOptions } from '../process/options.js';
import { makeOverlay, type RunOverlay } from '../process/overlay.js';
import { startProcessRun, type ProcessRun, type RunListener } from '../process/process-run.js';
import { setupFailure } from '../process/unstarted-exit.js';

/**
 * Starts a session's process, with its configuration overlay when it has one (made as a run's is,
 * by `makeOverlay`), removed once the session's processes are gone. An overlay that cannot be made
 * is a `setup` exit item for `listener`, and no process (`null`).
 */
export function startSessionProcess(
  command: string,
  args: readonly string[],
  options: ResolvedProcessOptions,
  overlay: RunOverlay | undefined,
  listener: RunListener,
): ProcessRun | null {
  if (overlay === undefined) return startProcessRun(command, args, options, listener);
  const made = makeOverlay(overlay, options.env);
  if (!made.ok) {
    listener.exit(setupFailure(made.problem));
    return null;
  }
  return startProcessRun(
    command,
    [...args, ...made.args],
    {
      ...options,
      env: made.env,
      onStopped: (report) => {
        made.remove();
        options.onStopped?.(report);
      },
    },
    listener,
  );
}
