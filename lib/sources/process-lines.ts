import { Observable } from 'rxjs';
import type { ProcessItem } from '../process/items.js';
import { resolveProcessOptions, type ProcessOptions } from '../process/options.js';
import { startProcessRun } from '../process/process-run.js';

/**
 * Runs a command as a cold Observable: every subscription spawns one process (no shell), emits
 * its stdout as LF-framed lines and ends with one `exit` item, then completes. It never errors
 * for anything the process or the OS did: a command that cannot start gives an `exit` item with
 * `startError` (stage `spawn`).
 *
 * Unsubscribing starts the stop sequence: record the process tree, send the interrupt, wait
 * `gracePeriodMs`, SIGKILL the group and every descendant, confirm. It finishes after the
 * subscriber has gone; `stopAllRuns()` awaits it.
 *
 * ```
 * stdout:  "a\nb"···"c\n"··(exit 0)
 * result:  -a--------bc------x|        x = { kind: 'exit', exitCode: 0, ... }
 * ```
 *
 * @example
 * processLines('node', ['--version']).subscribe((item) => {
 *   if (item.kind === 'line') console.log(item.text);
 *   if (item.kind === 'exit') console.log('exit code', item.exitCode);
 * });
 */
export function processLines(command: string, args: readonly string[] = [], options: ProcessOptions = {}): Observable<ProcessItem> {
  const resolved = resolveProcessOptions(command, args, options);
  return new Observable<ProcessItem>((subscriber) => {
    const run = startProcessRun(command, args, resolved, {
      frame: (frame) => {
        subscriber.next(frame);
      },
      exit: (exit) => {
        subscriber.next(exit);
        subscriber.complete();
      },
    });
    return () => {
      run.stop({ kind: 'unsubscribe' });
    };
  });
}
