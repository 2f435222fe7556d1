import type { ProcessExit, ProcessStderrLine } from './items.js';
import { LineFramer, type Frame } from './line-framer.js';
import { errorMessage } from './error-message.js';
import { spawnFailure, type Subprocess } from './spawn.js';
import { StderrTail } from './stderr-tail.js';

/** What a run's output gives its listener: stdout frames, and stderr lines when asked for. */
export type OutputFrame = Frame | ProcessStderrLine;

/** How a process ended, as read from its pipes: the exit item without what the run adds. */
export type OutputEnd = Pick<ProcessExit, 'exitCode' | 'signal' | 'startError' | 'stderr' | 'stderrTruncatedBytes'>;

/** Where a run's output goes. */
export interface OutputSink {
  /** Whether stdout lines are still wanted; stdout is drained either way. */
  listening(): boolean;
  frame(frame: OutputFrame): void;
  /** Any stdout bytes arrived (for the idle limit). */
  activity(): void;
  /** A stream error, for the stop report. */
  error(message: string): void;
  /** The root process exited (its pipes may still be open). */
  rootExited(): void;
  /** The process is gone and its pipes are closed; called only while listening. */
  ended(end: OutputEnd): void;
}

/**
 * Reads a root process's output: stdout framed into lines (dropped, not framed, once nobody
 * listens: draining must go on, so a child blocked on a full pipe can still handle its
 * interrupt), stderr kept as a bounded tail (and framed into lines too, with `stderrLines`), and
 * the end reported once the pipes are closed.
 */
export function readOutput(
  subprocess: Subprocess,
  pid: number | null,
  limits: { maxLineBytes: number; lineEncoding: 'utf8' | 'buffer'; stderrTailBytes: number; stderrLines: boolean },
  sink: OutputSink,
): void {
  const framer = new LineFramer(limits.maxLineBytes, limits.lineEncoding === 'buffer');
  const stderrFramer = limits.stderrLines ? new LineFramer(limits.maxLineBytes) : null;
  const tail = new StderrTail(limits.stderrTailBytes);
  const emit = (frame: Frame): void => {
    if (sink.listening()) sink.frame(frame);
  };
  const emitStderr = (frame: Frame): void => {
    // The stderr framer decodes: its frames are lines or overlong heads.
    if (sink.listening()) sink.frame({ kind: 'stderr-line', text: frame.kind === 'line' ? frame.text : frame.kind === 'line-too-long' ? frame.head : '' });
  };
  subprocess.stdout.on('data', (chunk: Buffer) => {
    sink.activity();
    if (sink.listening()) framer.push(chunk, emit);
  });
  subprocess.stderr.on('data', (chunk: Buffer) => {
    tail.push(chunk);
    if (stderrFramer !== null && sink.listening()) stderrFramer.push(chunk, emitStderr);
  });
  const record = (error: unknown): void => {
    sink.error(errorMessage(error));
  };
  subprocess.stdin?.on('error', record);
  subprocess.stdout.on('error', record);
  subprocess.stderr.on('error', record);
  subprocess.once('exit', () => {
    sink.rootExited();
  });
  const end = (fields: Pick<ProcessExit, 'exitCode' | 'signal' | 'startError'>): void => {
    // The last line may have made the subscriber leave.
    if (sink.listening()) sink.ended({ ...fields, stderr: tail.text(), stderrTruncatedBytes: tail.droppedBytes });
  };
  subprocess.then(
    (result) => {
      sink.rootExited();
      if (!sink.listening()) return;
      framer.end(emit);
      stderrFramer?.end(emitStderr);
      const startError = spawnFailure(result, pid);
      end({ exitCode: startError === null ? (result.exitCode ?? null) : null, signal: result.signal ?? null, startError });
    },
    (error: unknown) => {
      // reject: false makes this unreachable in practice; still, the stream must end with an exit.
      sink.rootExited();
      record(error);
      end({ exitCode: null, signal: null, startError: { stage: 'spawn', code: 'EUNEXPECTED', message: errorMessage(error) } });
    },
  );
}
