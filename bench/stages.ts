import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { Readable } from 'node:stream';
import { Observable } from 'rxjs';
import split2 from 'split2';
import { parsePiLine } from '../lib/agents/pi/events.js';
import { parsePiBytes } from '../lib/agents/pi/parse-bytes.js';
import { parseJsonLine, type ProcessItem } from '../lib/index.js';
import { piEventSchemas, piOutputToMessages } from '../lib/dialects.js';
import { LineFramer } from '../lib/process/line-framer.js';
import { summarize, type Summary } from './util.js';

export interface StageRow {
  readonly stage: string;
  /** Milliseconds for the whole input. */
  readonly ms: Summary;
  /** MB/s over the input's bytes (median). */
  readonly mbps: number;
}

export interface StagesResult {
  readonly input: string;
  readonly bytes: number;
  readonly lines: number;
  readonly repetitions: number;
  readonly rows: readonly StageRow[];
}

const CHUNK = 64 * 1024;

/** Reads a whole file, or only its last `tailBytes` starting at a line boundary. */
export function readInput(path: string, tailBytes?: number): Buffer {
  const size = statSync(path).size;
  const start = tailBytes === undefined ? 0 : Math.max(0, size - tailBytes);
  const buffer = Buffer.allocUnsafe(size - start);
  const fd = openSync(path, 'r');
  try {
    let read = 0;
    while (read < buffer.length) read += readSync(fd, buffer, read, buffer.length - read, start + read);
  } finally {
    closeSync(fd);
  }
  return start === 0 ? buffer : buffer.subarray(buffer.indexOf(0x0a) + 1);
}

const EXIT: ProcessItem = { kind: 'exit', exitCode: 0, signal: null, stderr: '', stderrTruncatedBytes: 0, startError: null, pid: 1, durationMs: 1 };

/** The items processLines would emit for these chunks (lines as text, or as bytes): LineFramer output, then the exit item. */
function framed(chunks: readonly Buffer[], bytes: boolean): Observable<ProcessItem> {
  return new Observable<ProcessItem>((subscriber) => {
    const framer = new LineFramer(32 * 1024 * 1024, bytes);
    const emit = (frame: ProcessItem): void => {
      subscriber.next(frame);
    };
    for (const chunk of chunks) framer.push(chunk, emit);
    framer.end(emit);
    subscriber.next(EXIT);
    subscriber.complete();
  });
}

/** Subscribes and drops everything (nothing is kept, as in a real run), resolving at completion. */
function drain<T>(source: Observable<T>): Promise<void> {
  return new Promise((resolve, reject) => {
    source.subscribe({ error: reject, complete: resolve });
  });
}

/**
 * Where the time goes, stage by stage, in this process (no child, no pipe): the input cut into
 * 64 KiB chunks as a pipe delivers it, or split into lines beforehand.
 */
export async function stages(input: Buffer, label: string, repetitions: number): Promise<StagesResult> {
  const chunks: Buffer[] = [];
  for (let at = 0; at < input.length; at += CHUNK) chunks.push(input.subarray(at, at + CHUNK));
  const texts = input.toString('utf8').split('\n').filter((text) => text !== '');
  const items: ProcessItem[] = [...texts.map((text): ProcessItem => ({ kind: 'line', text })), EXIT];
  const byteLines: Buffer[][] = [];
  const byteFramer = new LineFramer(32 * 1024 * 1024, true);
  const keep = (frame: ProcessItem): void => {
    if (frame.kind === 'line-bytes' && frame.chunks.length > 0) byteLines.push([...frame.chunks]);
  };
  for (const chunk of chunks) byteFramer.push(chunk, keep);
  byteFramer.end(keep);
  const replay = (list: readonly ProcessItem[]): Observable<ProcessItem> =>
    new Observable<ProcessItem>((subscriber) => {
      for (const item of list) subscriber.next(item);
      subscriber.complete();
    });
  const lineItems = replay(items);
  const byteItems = replay([...byteLines.map((pieces): ProcessItem => ({ kind: 'line-bytes', chunks: pieces })), EXIT]);
  const frameOnly = (bytes: boolean) => (): void => {
    const framer = new LineFramer(32 * 1024 * 1024, bytes);
    const drop = (): void => undefined;
    for (const chunk of chunks) framer.push(chunk, drop);
    framer.end(drop);
  };
  const measured: [string, () => unknown][] = [
    ['LineFramer: LF framing + UTF-8 decode of every line', frameOnly(false)],
    ['LineFramer, lines as bytes: LF framing, views of the chunks', frameOnly(true)],
    [
      'split2 (the baseline framing: string decoder + regex split)',
      () =>
        new Promise<void>((resolve, reject) => {
          Readable.from(chunks).pipe(split2()).on('data', () => undefined).on('end', resolve).on('error', reject);
        }),
    ],
    [
      'JSON.parse of every line',
      () => {
        for (const text of texts) JSON.parse(text);
      },
    ],
    [
      'parsePiLine of every line (the pre-parser)',
      () => {
        for (const text of texts) parsePiLine(text);
      },
    ],
    [
      'parsePiBytes of every line (the byte parser; lines it leaves go to parsePiLine)',
      () => {
        for (const pieces of byteLines) {
          if (parsePiBytes(pieces) === undefined) parsePiLine(Buffer.concat(pieces).toString('utf8'));
        }
      },
    ],
    ['parseJsonLine + zod schemas, parsePiLine', () => drain(lineItems.pipe(parseJsonLine({ schemas: piEventSchemas, parse: parsePiLine })))],
    [
      'parseJsonLine + zod schemas, parsePiBytes',
      () => drain(byteItems.pipe(parseJsonLine({ schemas: piEventSchemas, parse: parsePiLine, parseBytes: parsePiBytes }))),
    ],
    ['pi pipeline on lines as text', () => drain(lineItems.pipe(piOutputToMessages()))],
    ['pi pipeline on lines as bytes', () => drain(byteItems.pipe(piOutputToMessages()))],
    ['LineFramer + pi pipeline, lines as text (before)', () => drain(framed(chunks, false).pipe(piOutputToMessages()))],
    ['LineFramer + pi pipeline, lines as bytes (now)', () => drain(framed(chunks, true).pipe(piOutputToMessages()))],
  ];
  const samples = new Map<string, number[]>(measured.map(([stage]) => [stage, []]));
  for (let rep = 0; rep < repetitions; rep += 1) {
    for (const [stage, run] of measured) {
      const started = performance.now();
      await run();
      samples.get(stage)?.push(performance.now() - started);
    }
  }
  const rows = measured.map(([stage]): StageRow => {
    const ms = summarize(samples.get(stage) ?? []);
    return { stage, ms, mbps: input.length / 1e6 / (ms.median / 1000) };
  });
  return { input: label, bytes: input.length, lines: texts.length, repetitions, rows };
}
