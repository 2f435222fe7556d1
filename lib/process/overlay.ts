import { errorMessage } from './error-message.js';
import { hostTempDir } from './host-temp.js';

/**
 * A folder made for one run or session (a configuration, a file the agent is given), pointed at by
 * an environment variable or by arguments.
 */
export interface RunOverlay {
  /** Makes the overlay in `parent` (the host's temporary folder), from the run's environment; may throw. */
  create(env: Readonly<Record<string, string | undefined>>, parent: string): SettingsOverlay;
  /** The variable that points the agent at it, if one does. */
  readonly env?: string;
  /** Arguments that point the agent at it (`--output-schema <dir>/schema.json`), appended to the command's. */
  args?(dir: string): readonly string[];
  /** What it is for, for the setup failure's message: `pi's settings without retries`. */
  readonly what: string;
}

/** An overlay once made. */
export interface SettingsOverlay {
  /** The directory to point the agent at (its configuration directory, or the home that holds it). */
  readonly dir: string;
  /** Removes the overlay (never the real configuration). Idempotent, never throws. */
  remove(): void;
}

/** An overlay made for a process: its environment with the overlay's variable set, the arguments that name it, and how to remove it. */
export type MadeOverlay =
  | { readonly ok: true; readonly env: Readonly<Record<string, string | undefined>>; readonly args: readonly string[]; readonly remove: () => void }
  | { readonly ok: false; readonly problem: string };

/**
 * Makes `overlay` for a process with `env` (the caller's additions to the host's environment), in
 * the host's temporary folder. Runs and sessions both start their processes through it: the
 * environment to start with, the arguments to append, and `remove` for once the processes are
 * gone, or the setup problem.
 */
export function makeOverlay(overlay: RunOverlay, env: Readonly<Record<string, string | undefined>> | undefined): MadeOverlay {
  try {
    const made = overlay.create({ ...process.env, ...env }, hostTempDir());
    const remove = (): void => {
      made.remove();
    };
    const args = overlay.args?.(made.dir) ?? [];
    return { ok: true, env: overlay.env === undefined ? { ...env } : { ...env, [overlay.env]: made.dir }, args, remove };
  } catch (error) {
    return { ok: false, problem: `could not prepare ${overlay.what}: ${errorMessage(error)}` };
  }
}
