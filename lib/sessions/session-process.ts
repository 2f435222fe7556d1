import type { SettingsOverlay } from '../agents/shared/settings-overlay.js';
import { errorMessage } from '../process/error-message.js';
import { hostTempDir } from '../process/host-temp.js';
import type { ResolvedProcessOptions } from '../process/options.js';
import { startProcessRun, type ProcessRun, type RunListener } from '../process/process-run.js';
import { setupFailure } from '../process/unstarted-exit.js';
import type { RunOverlay } from '../sources/overlay-run.js';

/**
 * Starts a session's process, with its configuration overlay when it has one: made for this
 * session in the host's temporary folder, and removed once the session's processes are gone. An
 * overlay that cannot be made is a `setup` exit item for `listener`, and no process (`null`).
 */
export function startSessionProcess(
  command: string,
  args: readonly string[],
  options: ResolvedProcessOptions,
  overlay: RunOverlay | undefined,
  listener: RunListener,
): ProcessRun | null {
  let made: SettingsOverlay | null = null;
  let env = options.env;
  if (overlay !== undefined) {
    try {
      made = overlay.create({ ...process.env, ...options.env }, hostTempDir());
      env = { ...options.env, [overlay.env]: made.dir };
    } catch (error) {
      listener.exit(setupFailure(`could not prepare ${overlay.what}: ${errorMessage(error)}`));
      return null;
    }
  }
  return startProcessRun(
    command,
    args,
    {
      ...options,
      env,
      onStopped: (report) => {
        made?.remove();
        options.onStopped?.(report);
      },
    },
    listener,
  );
}
