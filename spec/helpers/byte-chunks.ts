import { readdirSync, readFileSync } from 'node:fs';
import fc from 'fast-check';
import { LineFramer, type Frame } from '../../lib/process/line-framer.js';
import { fixture } from './processes.js';

/** Every frame a LineFramer gives for `chunks` (strings are taken as UTF-8), its end included. */
export function frameChunks(chunks: readonly (string | Buffer)[], options: { maxLineBytes?: number; bytes?: boolean } = {}): Frame[] {
  const framer = new LineFramer(options.maxLineBytes ?? 1024, options.bytes ?? false);
  const out: Frame[] = [];
  const emit = (f: Frame): void => {
    out.push(f);
  };
  for (const chunk of chunks) framer.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk, emit);
  framer.end(emit);
  return out;
}

/**
 * `bytes` cut at `positions` (each taken modulo `bytes.length + 1`, then sorted): the pieces in
 * order, views of `bytes`. Equal positions give empty pieces; there is always at least one piece.
 */
export function cutAt(bytes: Buffer, positions: readonly number[]): Buffer[] {
  const cuts = positions.map((position) => position % (bytes.length + 1)).sort((a, b) => a - b);
  const pieces: Buffer[] = [];
  let at = 0;
  for (const cut of cuts) {
    pieces.push(bytes.subarray(at, cut));
    at = cut;
  }
  pieces.push(bytes.subarray(at));
  return pieces;
}

/** Cut positions for `cutAt`: none to a dozen, anywhere. */
export const cutPositions = fc.array(fc.nat(), { maxLength: 12 });

/** `bytes` one byte per piece (a view each). */
export function byteByByte(bytes: Buffer): Buffer[] {
  const pieces: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += 1) pieces.push(bytes.subarray(at, at + 1));
  return pieces;
}

/** A copy of `bytes` in a memory block of its own (not the shared pool of small Buffers). */
export function ownCopy(bytes: Uint8Array): Buffer {
  const copy = Buffer.alloc(bytes.length);
  copy.set(bytes);
  return copy;
}

/** The recorded pi transcripts (and those derived from them), as paths relative to `spec/fixtures`. */
export function piTranscriptNames(): string[] {
  const names = (folder: string): string[] =>
    readdirSync(fixture(folder))
      .filter((name) => name.endsWith('.jsonl'))
      .sort()
      .map((name) => `${folder}/${name}`);
  return [...names('pi'), ...names('pi/derived')];
}

/** The lines of a fixture file as it was printed (the text between LFs; no final empty line). */
export function printedLines(name: string): string[] {
  const lines = readFileSync(fixture(name), 'utf8').split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}
