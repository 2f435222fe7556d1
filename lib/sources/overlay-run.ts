import { defer, of, type Observable, type OperatorFunction } from 'rxjs';
import type { SettingsOverlay } from '../agents/shared/settings-overlay.js';
import type { CliMessage } from '../messages.js';
import { hostTempDir } from '../process/host-temp.js';
import type { ProcessItem } from '../process/items.js';
import type { ProcessOptions } from '../process/options.js';
import { errorMessage } from '../process/error-message.js';
import { setupFailure } from '../process/unstarted-exit.js';
import { processLines } from './process-lines.js';

/** A configuration overlay a run is pointed at through one environment variable. */
export interface RunOverlay {
  /** Makes the overlay in `parent` (the host's temporary folder), from the run's environment. */
  create(env: Readonly<Record<string, string | undefined>>, parent: string): SettingsOverlay;
  /** The variable that points the agent at it. */
  readonly env: string;
  /** What it is for, for the setup failure's message: `pi's settings without retries`. */
  readonly what: string;
}

/**
 * A run whose process gets a configuration overlay of its own, one per subscription, in the host's
 * temporary folder: removed once the run's processes are gone, and with that folder at host exit
 * (by the keeper if the host is killed without warning). An overlay that cannot be made is a
 * `setup` failure in the stream.
 */
export function runWithOverlay(
  command: string,
  args: readonly string[],
  processOptions: ProcessOptions,
  overlay: RunOverlay,
  toMessages: OperatorFunction<ProcessItem, CliMessage>,
): Observable<CliMessage> {
  return defer(() => {
    let made: SettingsOverlay;
    try {
      made = overlay.create({ ...process.env, ...processOptions.env }, hostTempDir());
    } catch (error) {
      return of(setupFailure(`could not prepare ${overlay.what}: ${errorMessage(error)}`)).pipe(toMessages);
    }
    return processLines(command, args, {
      ...processOptions,
      env: { ...processOptions.env, [overlay.env]: made.dir },
      onStopped: (report) => {
        made.remove();
        processOptions.onStopped?.(report);
      },
    }).pipe(toMessages);
  });
}
