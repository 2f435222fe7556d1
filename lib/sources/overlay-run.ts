import { defer, of, type Observable, type OperatorFunction } from 'rxjs';
import type { CliMessage } from '../messages.js';
import type { ProcessItem } from '../process/items.js';
import type { ProcessOptions } from '../process/options.js';
import { makeOverlay, type RunOverlay } from '../process/overlay.js';
import { setupFailure } from '../process/unstarted-exit.js';
import { processLines } from './process-lines.js';

/**
 * A run whose process gets a configuration overlay of its own, one per subscription, in the host's
 * temporary folder (`makeOverlay`, as a session's): removed once the run's processes are gone, and
 * with that folder at host exit (by the keeper if the host is killed without warning). An overlay
 * that cannot be made is a `setup` failure in the stream.
 */
export function runWithOverlay(
  command: string,
  args: readonly string[],
  processOptions: ProcessOptions,
  overlay: RunOverlay,
  toMessages: OperatorFunction<ProcessItem, CliMessage>,
): Observable<CliMessage> {
  return defer(() => {
    const made = makeOverlay(overlay, processOptions.env);
    if (!made.ok) return of(setupFailure(made.problem)).pipe(toMessages);
    return processLines(command, [...args, ...made.args], {
      ...processOptions,
      env: made.env,
      onStopped: (report) => {
        made.remove();
        processOptions.onStopped?.(report);
      },
    }).pipe(toMessages);
  });
}
