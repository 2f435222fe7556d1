import { createReadStream } from 'node:fs';
import { Observable } from 'rxjs';
import type { ProcessItem } from '../process/items.js';
import { LineFramer } from '../process/line-framer.js';
import { describe } from '../process/process-table.js';

/**
 * A recorded agent stdout file as the items `processLines` would emit for it: its lines, framed
 * the same way, then an exit item with code 0. A file that cannot be read becomes an exit item
 * with a spawn error, so the pipeline reports it as it reports a missing executable.
 */
export function replayFile(path: string, maxLineBytes = 32 * 1024 * 1024): Observable<ProcessItem> {
  return new Observable<ProcessItem>((subscriber) => {
    const startedAt = performance.now();
    const framer = new LineFramer(maxLineBytes);
    const emit = (item: ProcessItem): void => {
      subscriber.next(item);
    };
    const exit = (spawnError: { code: string; message: string } | null): void => {
      framer.end(emit);
      subscriber.next({
        kind: 'exit',
        exitCode: spawnError === null ? 0 : null,
        signal: null,
        stderr: '',
        stderrTruncatedBytes: 0,
        spawnError,
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
      exit({ code: error.code ?? 'EREPLAY', message: `cannot read ${path}: ${describe(error)}` });
    });
    return () => {
      stream.destroy();
    };
  });
}
