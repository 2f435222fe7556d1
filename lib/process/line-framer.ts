import type { ProcessLine, ProcessLineBytes, ProcessOverlongLine } from './items.js';

const LF = 0x0a;
const CR = 0x0d;

/** Bytes of an overlong line kept for its diagnostic head. */
export const OVERLONG_HEAD_BYTES = 256;

export type Frame = ProcessLine | ProcessLineBytes | ProcessOverlongLine;

/**
 * Splits a byte stream into lines on LF only (never on a lone CR, U+2028 or U+2029), working on
 * Buffers: only complete lines are decoded, so a multi-byte UTF-8 character split across chunks
 * comes out whole. A trailing CR is removed. A line longer than `maxLineBytes` is discarded as it
 * arrives; only its length and its head are kept. With `bytes`, lines are not decoded nor joined:
 * each comes as the views of the chunks it arrived in (`line-bytes`), so a long line costs no copy.
 */
export class LineFramer {
  readonly #maxLineBytes: number;
  readonly #bytes: boolean;
  /** Pieces of the unfinished line, in order. */
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  /** Set while discarding an overlong line. */
  #overlong: { head: Buffer; bytes: number; lastByte: number } | null = null;

  constructor(maxLineBytes: number, bytes = false) {
    this.#maxLineBytes = maxLineBytes;
    this.#bytes = bytes;
  }

  /** Feeds one chunk; calls `emit` for every line it completes. */
  push(chunk: Buffer, emit: (frame: Frame) => void): void {
    let start = 0;
    let lf = chunk.indexOf(LF);
    while (lf !== -1) {
      emit(this.#complete(chunk, start, lf));
      start = lf + 1;
      lf = chunk.indexOf(LF, start);
    }
    if (start < chunk.length) this.#keep(chunk, start);
  }

  /** Flushes the final line when the stream ended without an LF. */
  end(emit: (frame: Frame) => void): void {
    if (this.#overlong !== null || this.#pendingBytes > 0) emit(this.#complete(EMPTY, 0, 0));
  }

  #complete(chunk: Buffer, start: number, end: number): Frame {
    const overlong = this.#overlong;
    if (overlong !== null) {
      this.#overlong = null;
      const lastByte = end > start ? chunk[end - 1] : overlong.lastByte;
      const bytes = overlong.bytes + (end - start) - (lastByte === CR ? 1 : 0);
      if (overlong.head.length < OVERLONG_HEAD_BYTES) overlong.head = headOf([overlong.head, chunk.subarray(start, end)]);
      return { kind: 'line-too-long', bytes, head: decodeHead(overlong.head) };
    }
    if (this.#bytes) return this.#completeBytes(chunk, start, end);
    let line = chunk;
    if (this.#pendingBytes > 0) {
      // The line started in an earlier chunk: join its pieces once, now that it is complete.
      if (end > start) this.#pending.push(chunk.subarray(start, end));
      line = Buffer.concat(this.#pending);
      start = 0;
      end = line.length;
      this.#pending = [];
      this.#pendingBytes = 0;
    }
    if (end > start && line[end - 1] === CR) end -= 1;
    if (end - start > this.#maxLineBytes) {
      return { kind: 'line-too-long', bytes: end - start, head: decodeHead(headOf([line.subarray(start, end)])) };
    }
    return { kind: 'line', text: line.toString('utf8', start, end) };
  }

  /** The line as views of its chunks (the CR removed from the last piece that has bytes). */
  #completeBytes(chunk: Buffer, start: number, end: number): Frame {
    const chunks = this.#pending;
    const bytes = this.#pendingBytes + (end - start);
    this.#pending = [];
    this.#pendingBytes = 0;
    if (end > start) chunks.push(chunk.subarray(start, end));
    const last = chunks.at(-1);
    let length = bytes;
    if (last !== undefined && last[last.length - 1] === CR) {
      length -= 1;
      if (last.length === 1) chunks.pop();
      else chunks[chunks.length - 1] = last.subarray(0, last.length - 1);
    }
    if (length > this.#maxLineBytes) return { kind: 'line-too-long', bytes: length, head: decodeHead(headOf(chunks)) };
    return { kind: 'line-bytes', chunks };
  }

  #keep(chunk: Buffer, start: number): void {
    const length = chunk.length - start;
    const overlong = this.#overlong;
    if (overlong !== null) {
      if (overlong.head.length < OVERLONG_HEAD_BYTES) overlong.head = headOf([overlong.head, chunk.subarray(start)]);
      overlong.bytes += length;
      overlong.lastByte = chunk[chunk.length - 1] ?? overlong.lastByte;
      return;
    }
    this.#pending.push(chunk.subarray(start));
    this.#pendingBytes += length;
    // One byte of slack: a line of exactly maxLineBytes may still end in CR LF.
    if (this.#pendingBytes > this.#maxLineBytes + 1) {
      this.#overlong = {
        head: headOf(this.#pending),
        bytes: this.#pendingBytes,
        lastByte: chunk[chunk.length - 1] ?? 0,
      };
      this.#pending = [];
      this.#pendingBytes = 0;
    }
  }
}

const EMPTY = Buffer.alloc(0);

/** The first OVERLONG_HEAD_BYTES bytes of the pieces, copied (so no large chunk stays pinned). */
function headOf(pieces: readonly Buffer[]): Buffer {
  const bytes: Buffer[] = [];
  let total = 0;
  for (const piece of pieces) {
    if (total >= OVERLONG_HEAD_BYTES) break;
    const part = piece.subarray(0, OVERLONG_HEAD_BYTES - total);
    bytes.push(part);
    total += part.length;
  }
  return Buffer.concat(bytes);
}

function decodeHead(bytes: Buffer): string {
  const head = bytes.toString('utf8');
  // Cutting a multi-byte character in half leaves a replacement character at the end.
  return head.endsWith('\uFFFD') ? head.slice(0, -1) : head;
}
