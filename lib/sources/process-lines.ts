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
 * - Cold: each subscription spawns one process (no shell; the arguments are an argv array).
 *   Spawning blocks the event loop (a few ms per child), so a burst of subscriptions spawns at
 *   most 8 ms worth per event-loop turn and the rest in the next turns, in order; a run
 *   unsubscribed (or stopped by `stopAllRuns()`) before its turn starts nothing.
 * - stdout is framed on LF only: a trailing CR is removed, a final line without a newline is
 *   emitted, U+2028/U+2029 and a lone CR stay inside the line, multi-byte characters split across
 *   reads come out whole. With `lineEncoding: 'buffer'` lines come undecoded (`line-bytes`).
 * - A line longer than `maxLineBytes` becomes `{ kind: 'line-too-long', bytes, head }` (its length
 *   and its first 256 bytes); the rest of it is discarded as it arrives, and the stream goes on.
 * - The last item is always `{ kind: 'exit', exitCode, signal, stderr, stderrTruncatedBytes,
 *   startError, pid, durationMs, stoppedBy? }`. `stoppedBy` is set when the library stopped a run
 *   that was still listened to: `{ kind: 'host' }` (`stopAllRuns()`) or
 *   `{ kind: 'timeout', limit: 'run' | 'idle', ms }`.
 * - Invalid options (an empty command, a negative grace period, …) throw a `TypeError` now, before
 *   anything spawns.
 *
 * The stop sequence:
 *
 * | phase | what happens | time |
 * |---|---|---|
 * | record | snapshot the run's processes: descendants by parent pid, members of its process group, and processes that carry the run's marker in their environment ({@link RUN_MARKER_ENV}, inherited by every descendant) | a few ms |
 * | interrupt | the configured stdin bytes and/or signal, sent to the root only | — |
 * | grace | wait for the root to exit | up to `gracePeriodMs` (2 s) |
 * | kill | SIGKILL the process group, the root, and every recorded or newly found descendant | — |
 * | confirm | look again until every process of the run is gone, killing any new one | up to `killTimeoutMs` (5 s) |
 *
 * When the root exits (by itself or on the interrupt), whatever of its tree outlived it is killed
 * at once, so a descendant holding stdout open can never keep a finished run from completing; the
 * exit item comes once that clean-up is over (after `onStopped`): when a listener hears it, no
 * process of the run is left (or the report names the survivors). The
 * child leads its own process group, so it does not receive the terminal's Ctrl-C. Errors while
 * stopping (EPIPE, ESRCH, no `/proc` and no `ps`) are swallowed and listed in the
 * {@link StopReport}, never thrown. A recorded pid is only killed while its start time still
 * matches, so a reused pid is never hit. The process table is read from `/proc` on Linux and with
 * `ps` elsewhere.
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
