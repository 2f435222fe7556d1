import { createReadStream } from 'node:fs';
import { Observable } from 'rxjs';
import type { ProcessItem, StartFailure } from '../process/items.js';
import { LineFramer } from '../process/line-framer.js';
import { describe } from '../process/process-table.js';

/**
 * A recorded agent stdout file as the items `processLines` would emit for it: its lines, framed
 * the same way, then an exit item with code 0. A file that cannot be read becomes an exit item
 * whose `startError` has the stage `input` (not a spawn error: no executable was missing).
 */
export function replayFile(path: string, maxLineBytes = 32 * 1024 * 1024): Observable<ProcessItem> {
  return new Observable<ProcessItem>((subscriber) => {
    const startedAt = performance.now();
    const framer = new LineFramer(maxLineBytes);
    const emit = (item: ProcessItem): void => {
      subscriber.next(item);
    };
    const exit = (startError: StartFailure | null): void => {
      framer.end(emit);
      subscriber.next({
        kind: 'exit',
        exitCode: startError === null ? 0 : null,
        signal: null,
        stderr: '',
        stderrTruncatedBytes: 0,
        startError,
        pid: null,
        durationMs: performance.now() - startedAt,
      });
      subscriber.complete();
    };
    const stream = createReadStream(path);
    stream.on('data', (chunk) => {
      framer.push(chunk as Buffer, emit);
    });
    stream.on('end', () => {
      exit(null);
    });
    stream.on('error', (error: NodeJS.ErrnoException) => {
      exit({ stage: 'input', code: error.code ?? 'EREPLAY', message: describe(error) });
    });
    return () => {
      stream.destroy();
    };
  });
}
