import { closeSync, createReadStream, openSync, readSync } from 'node:fs';
import { Observable } from 'rxjs';
import { AGENT_NAMES, AGENTS, type AgentName } from '../agent-table.js';
import type { ProcessItem, StartFailure } from '../process/items.js';
import { LineFramer } from '../process/line-framer.js';
import { unstartedExit } from '../process/unstarted-exit.js';
import { errorMessage } from '../process/error-message.js';

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
      const durationMs = performance.now() - startedAt;
      subscriber.next(
        startError === null
          ? { kind: 'exit', exitCode: 0, signal: null, stderr: '', stderrTruncatedBytes: 0, startError, pid: null, durationMs }
          : unstartedExit(startError, { durationMs }),
      );
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
      exit({ stage: 'input', code: error.code ?? 'EREPLAY', message: errorMessage(error) });
    });
    return () => {
      stream.destroy();
    };
  });
}

/** How many bytes and lines of a recording are looked at to tell its agent. */
const HEAD_BYTES = 256 * 1024;
const HEAD_LINES = 10;

/**
 * Which agent recorded the stdout file at `path`, from its first lines: `null` when none of them
 * is one an agent recognises as its own. Throws what reading the file throws (ENOENT, EISDIR…).
 */
export function detectRecordingAgent(path: string): AgentName | null {
  const head = Buffer.alloc(HEAD_BYTES);
  const fd = openSync(path, 'r');
  let length: number;
  try {
    length = readSync(fd, head, 0, HEAD_BYTES, 0);
  } finally {
    closeSync(fd);
  }
  return detectAgentOfLines(head.subarray(0, length).toString('utf8').split('\n'));
}

/** The agent that recognises the first of `lines` any agent does (blank lines skipped), or `null`. */
export function detectAgentOfLines(lines: readonly string[]): AgentName | null {
  for (const line of lines.map((text) => text.trim()).filter((text) => text !== '').slice(0, HEAD_LINES)) {
    const agent = AGENT_NAMES.find((name) => AGENTS[name].recognizesOutput(line));
    if (agent !== undefined) return agent;
  }
  return null;
}
