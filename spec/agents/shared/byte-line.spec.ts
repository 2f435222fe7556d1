import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { ByteLine } from '../../../lib/agents/shared/byte-line.js';
import { byteByByte, cutAt, cutPositions } from '../../helpers/byte-chunks.js';

/** The same operations, on the whole line, written out plainly. */
const reference = {
  at: (bytes: Buffer, index: number): number => (index >= 0 && index < bytes.length ? (bytes[index] as number) : -1),
  indexOf(bytes: Buffer, byte: number, from: number): number {
    for (let i = Math.max(0, from); i < bytes.length; i += 1) if (bytes[i] === byte) return i;
    return -1;
  },
  lastIndexOf(bytes: Buffer, byte: number, from: number): number {
    for (let i = Math.min(from, bytes.length - 1); i >= 0; i -= 1) if (bytes[i] === byte) return i;
    return -1;
  },
  startsWith: (bytes: Buffer, expected: Buffer, index: number): boolean =>
    index >= 0 && index + expected.length <= bytes.length && bytes.subarray(index, index + expected.length).equals(expected),
  equal: (bytes: Buffer, a: number, b: number, size: number): boolean =>
    a >= 0 && b >= 0 && a + size <= bytes.length && b + size <= bytes.length && bytes.subarray(a, a + size).equals(bytes.subarray(b, b + size)),
  text: (bytes: Buffer, start: number, end: number): string => (end <= start ? '' : bytes.toString('utf8', start, end)),
};

type Query =
  | { op: 'at'; index: number }
  | { op: 'indexOf'; byte: number; from: number }
  | { op: 'lastIndexOf'; byte: number; from: number }
  | { op: 'startsWith'; start: number; size: number; other: readonly number[]; index: number }
  | { op: 'equal'; a: number; b: number; size: number }
  | { op: 'text'; start: number; end: number };

/** Runs one query on the line and on the whole bytes; both answers. */
function answer(line: ByteLine, bytes: Buffer, query: Query): [unknown, unknown] {
  const n = bytes.length;
  // Indices drawn from a wide range are brought into [-3, n + 3]: in range mostly, out of it at both ends.
  const near = (value: number): number => (value % (n + 7)) - 3;
  switch (query.op) {
    case 'at':
      return [line.at(near(query.index)), reference.at(bytes, near(query.index))];
    case 'indexOf': {
      const byte = pickByte(bytes, query.byte);
      return [line.indexOf(byte, near(query.from)), reference.indexOf(bytes, byte, near(query.from))];
    }
    case 'lastIndexOf': {
      const byte = pickByte(bytes, query.byte);
      return [line.lastIndexOf(byte, near(query.from)), reference.lastIndexOf(bytes, byte, near(query.from))];
    }
    case 'startsWith': {
      // Mostly a piece of the line itself (often true), sometimes other bytes.
      const start = query.start % (n + 1);
      const piece = query.other.length > 0 ? Buffer.from(query.other) : bytes.subarray(start, Math.min(n, start + query.size));
      return [line.startsWith(piece, near(query.index)), reference.startsWith(bytes, piece, near(query.index))];
    }
    case 'equal': {
      const size = query.size % (n + 2);
      return [line.equal(near(query.a), near(query.b), size), reference.equal(bytes, near(query.a), near(query.b), size)];
    }
    case 'text': {
      // In range: 0 ≤ start, end ≤ length (end before start gives '').
      const start = query.start % (n + 1);
      const end = query.end % (n + 1);
      return [line.text(start, end), reference.text(bytes, start, end)];
    }
  }
}

/** A byte of the line (most of the time) or any byte. */
function pickByte(bytes: Buffer, seed: number): number {
  return seed % 3 !== 0 && bytes.length > 0 ? (bytes[seed % bytes.length] as number) : seed % 256;
}

const query: fc.Arbitrary<Query> = fc.oneof(
  fc.record({ op: fc.constant('at' as const), index: fc.nat() }),
  fc.record({ op: fc.constant('indexOf' as const), byte: fc.nat(), from: fc.nat() }),
  fc.record({ op: fc.constant('lastIndexOf' as const), byte: fc.nat(), from: fc.nat() }),
  fc.record({
    op: fc.constant('startsWith' as const),
    start: fc.nat(),
    size: fc.nat(40),
    other: fc.oneof({ weight: 3, arbitrary: fc.constant<readonly number[]>([]) }, { weight: 1, arbitrary: fc.array(fc.nat(255), { maxLength: 4 }) }),
    index: fc.nat(),
  }),
  fc.record({ op: fc.constant('equal' as const), a: fc.nat(), b: fc.nat(), size: fc.nat() }),
  fc.record({ op: fc.constant('text' as const), start: fc.nat(), end: fc.nat() }),
);

/** Text with multi-byte characters, quotes, backslashes and braces; often the same part twice (equal ranges). */
const lineText = fc
  .tuple(
    fc.string({ unit: fc.constantFrom('a', 'b', '"', '\\', '{', '}', ':', ',', 'é', '✓', '🚀', '日', '\u2028', '\r'), maxLength: 30 }),
    fc.string({ unit: 'binary', maxLength: 10 }),
    fc.boolean(),
  )
  .map(([part, other, twice]) => (twice ? `${part}${other}${part}` : `${other}${part}`));

describe('ByteLine', () => {
  it('answers every operation as the joined line does, for any chunking (empty pieces included) and any index', () => {
    fc.assert(
      fc.property(lineText, cutPositions, fc.array(query, { minLength: 1, maxLength: 40 }), (text, cuts, queries) => {
        const bytes = Buffer.from(text);
        const line = new ByteLine(cutAt(bytes, cuts));
        expect(line.length).toBe(bytes.length);
        // One line, many queries in a random order (it remembers the piece of its last lookup).
        for (const q of queries) {
          const [actual, expected] = answer(line, bytes, q);
          if (actual !== expected) throw new Error(`${JSON.stringify(q)} on ${JSON.stringify(text)}: got ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`);
        }
      }),
      { numRuns: 1500 },
    );
  });

  it('answers as the joined line does when every byte is a piece of its own', () => {
    const bytes = Buffer.from('{"a":"é✓🚀"},"x":{"a":"é✓🚀"}');
    const line = new ByteLine(byteByByte(bytes));
    const n = bytes.length;
    for (let i = -2; i < n + 2; i += 1) {
      expect(line.at(i)).toBe(reference.at(bytes, i));
      for (const byte of [0x22, 0x7b, 0x7d, 0xe2, 0x00]) {
        expect(line.indexOf(byte, i)).toBe(reference.indexOf(bytes, byte, i));
        expect(line.lastIndexOf(byte, i)).toBe(reference.lastIndexOf(bytes, byte, i));
      }
    }
    for (let start = 0; start <= n; start += 1) {
      for (let end = 0; end <= n; end += 1) expect(line.text(start, end)).toBe(reference.text(bytes, start, end));
    }
    const copy = Buffer.byteLength('{"a":"é✓🚀"}');
    expect(line.equal(0, copy + 5, copy)).toBe(true);
    expect(line.equal(0, copy + 5, copy + 1)).toBe(false);
    expect(line.equal(1, copy + 5, copy)).toBe(false);
  });

  it('decodes a multi-byte character split between pieces whole, wherever the cut', () => {
    const text = 'é✓🚀日本語';
    const bytes = Buffer.from(text);
    for (let cut = 0; cut <= bytes.length; cut += 1) {
      for (let second = cut; second <= bytes.length; second += 1) {
        const line = new ByteLine([bytes.subarray(0, cut), bytes.subarray(cut, second), bytes.subarray(second)]);
        expect(line.text(0, bytes.length)).toBe(text);
        expect(line.text(2, 5)).toBe('✓');
        expect(line.text(5, 9)).toBe('🚀');
      }
    }
  });

  it('compares ranges whose pieces are cut at different places', () => {
    const copy = Buffer.from('{"role":"assistant","text":"a \\"b\\" é"}');
    const bytes = Buffer.concat([copy, Buffer.from('},"message":'), copy]);
    const at = copy.length + 12;
    for (const cuts of [[3], [3, 17, at + 5], [copy.length, at], [at + 1, at + 2, at + 30], [10, 11, 12, at + 11, at + 12]]) {
      const line = new ByteLine(cutAt(bytes, cuts));
      expect(line.equal(0, at, copy.length)).toBe(true);
      expect(line.equal(at, 0, copy.length)).toBe(true);
      expect(line.equal(1, at + 1, copy.length - 1)).toBe(true);
      expect(line.equal(0, at + 1, copy.length - 1)).toBe(false);
      expect(line.equal(0, at, copy.length + 1)).toBe(false);
      expect(line.startsWith(copy, at)).toBe(true);
      expect(line.startsWith(copy, at - 1)).toBe(false);
      expect(line.startsWith(Buffer.from('},"message":'), copy.length)).toBe(true);
    }
  });

  it('treats indices outside the line as not found', () => {
    const line = new ByteLine([Buffer.from('ab'), Buffer.from('c')]);
    expect([line.at(-1), line.at(3), line.at(100)]).toEqual([-1, -1, -1]);
    expect([line.indexOf(0x61, 3), line.indexOf(0x63, -10), line.lastIndexOf(0x61, -1), line.lastIndexOf(0x63, 99)]).toEqual([-1, 2, -1, 2]);
    expect([line.startsWith(Buffer.from('c'), 3), line.startsWith(Buffer.from('cd'), 2), line.startsWith(Buffer.from('a'), -1)]).toEqual([false, false, false]);
    expect([line.startsWith(Buffer.alloc(0), 3), line.startsWith(Buffer.alloc(0), 4)]).toEqual([true, false]);
    expect([line.equal(-1, 0, 1), line.equal(0, 2, 2), line.equal(1, 1, 2), line.equal(3, 3, 0), line.equal(3, 4, 0)]).toEqual([false, false, true, true, false]);
    expect([line.text(2, 1), line.text(1, 1), line.text(0, 3)]).toEqual(['', '', 'abc']);
    // Clamped to the line, as Buffer#toString clamps.
    expect([line.text(1, 10), line.text(-1, 2), line.text(5, 9)]).toEqual(['bc', 'ab', '']);
    expect([line.at(0.5), line.at(Number.NaN)]).toEqual([-1, -1]);
  });

  it('reads an empty line (no pieces, or empty pieces) as empty', () => {
    for (const chunks of [[], [Buffer.alloc(0)], [Buffer.alloc(0), Buffer.alloc(0)]]) {
      const line = new ByteLine(chunks);
      expect(line.length).toBe(0);
      expect([line.at(0), line.indexOf(0x22, 0), line.lastIndexOf(0x22, 5), line.startsWith(Buffer.from('"'), 0), line.text(0, 0)]).toEqual([-1, -1, -1, false, '']);
      expect([line.startsWith(Buffer.alloc(0), 0), line.equal(0, 0, 0)]).toEqual([true, true]);
    }
  });
});
