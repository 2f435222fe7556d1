/**
 * One line of output as bytes, in the pieces the pipe delivered it (`line-bytes` items), read in
 * place: a byte parser looks at what it needs without joining or decoding the line. Indices are
 * byte offsets into the whole line.
 *
 * @example
 * const line = new ByteLine([Buffer.from('{"type":'), Buffer.from('"message_update"}')]);
 * line.length; // 25
 * line.indexOf(0x3a, 0); // 7: the first ':'
 * line.text(9, 23); // 'message_update'
 */
export class ByteLine {
  readonly length: number;
  readonly #chunks: readonly Buffer[];
  /** Offset of each chunk in the line. */
  readonly #starts: number[];
  /** The chunk the last lookup found (lookups are mostly near each other). */
  #last = 0;

  /** A line made of these pieces, in order (they are read in place, not copied). */
  constructor(chunks: readonly Buffer[]) {
    this.#chunks = chunks;
    this.#starts = [];
    let offset = 0;
    for (const chunk of chunks) {
      this.#starts.push(offset);
      offset += chunk.length;
    }
    this.length = offset;
  }

  /** The byte at `index`, or -1 outside the line (or for an index that is not an integer). */
  at(index: number): number {
    if (!(index >= 0 && index < this.length) || !Number.isInteger(index)) return -1;
    const chunk = this.#find(index);
    return (this.#chunks[chunk] as Buffer)[index - (this.#starts[chunk] as number)] as number;
  }

  /** The first index at or after `from` that holds `byte`, or -1. */
  indexOf(byte: number, from: number): number {
    if (from >= this.length) return -1;
    for (let chunk = this.#find(Math.max(0, from)); chunk < this.#chunks.length; chunk += 1) {
      const start = this.#starts[chunk] as number;
      const found = (this.#chunks[chunk] as Buffer).indexOf(byte, Math.max(0, from - start));
      if (found !== -1) return start + found;
    }
    return -1;
  }

  /** The last index at or before `from` that holds `byte`, or -1. */
  lastIndexOf(byte: number, from: number): number {
    if (from < 0 || this.length === 0) return -1;
    for (let chunk = this.#find(Math.min(from, this.length - 1)); chunk >= 0; chunk -= 1) {
      const start = this.#starts[chunk] as number;
      const piece = this.#chunks[chunk] as Buffer;
      const found = piece.lastIndexOf(byte, Math.min(piece.length - 1, from - start));
      if (found !== -1) return start + found;
    }
    return -1;
  }

  /** Whether the bytes at `index` are `expected`. */
  startsWith(expected: Uint8Array, index: number): boolean {
    if (index < 0 || index + expected.length > this.length) return false;
    return this.#compare(index, expected.length, (piece, from, to, offset) => Buffer.compare(piece.subarray(from, to), expected.subarray(offset, offset + to - from)) === 0);
  }

  /** Whether the `size` bytes at `a` equal the `size` bytes at `b` (compared natively, piece by piece). */
  equal(a: number, b: number, size: number): boolean {
    if (a < 0 || b < 0 || a + size > this.length || b + size > this.length) return false;
    // Walk range a in pieces; compare each piece with range b, itself in pieces.
    return this.#compare(a, size, (piece, from, to, offset) =>
      this.#compare(b + offset, to - from, (other, otherFrom, otherTo, otherOffset) => {
        const start = from + otherOffset;
        return piece.compare(other, otherFrom, otherTo, start, start + otherTo - otherFrom) === 0;
      }),
    );
  }

  /** The bytes from `start` to `end` decoded as UTF-8 (both clamped to the line, as `Buffer#toString` does). */
  text(from: number, to: number): string {
    const start = Math.max(0, Math.min(from, this.length));
    const end = Math.max(0, Math.min(to, this.length));
    if (end <= start) return '';
    const first = this.#find(start);
    const base = this.#starts[first] as number;
    const piece = this.#chunks[first] as Buffer;
    if (end - base <= piece.length) return piece.toString('utf8', start - base, end - base);
    const parts: Buffer[] = [];
    this.#compare(start, end - start, (chunk, from, to) => {
      parts.push(chunk.subarray(from, to));
      return true;
    });
    return Buffer.concat(parts).toString('utf8');
  }

  /**
   * Calls `visit` for each piece of the range [index, index + size): the chunk, the range in it,
   * and the piece's offset in the range. Stops (returning false) when `visit` does.
   */
  #compare(index: number, size: number, visit: (chunk: Buffer, from: number, to: number, offset: number) => boolean): boolean {
    let offset = 0;
    let chunk = size > 0 ? this.#find(index) : 0;
    while (offset < size) {
      const piece = this.#chunks[chunk] as Buffer;
      const from = index + offset - (this.#starts[chunk] as number);
      const to = Math.min(piece.length, from + size - offset);
      if (!visit(piece, from, to, offset)) return false;
      offset += to - from;
      chunk += 1;
    }
    return true;
  }

  /** The chunk that holds `index` (0 ≤ index < length). */
  #find(index: number): number {
    const starts = this.#starts;
    let chunk = this.#last;
    if ((starts[chunk] as number) > index) chunk = 0;
    while (chunk + 1 < starts.length && (starts[chunk + 1] as number) <= index) chunk += 1;
    this.#last = chunk;
    return chunk;
  }
}
