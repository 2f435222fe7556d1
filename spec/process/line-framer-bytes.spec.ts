import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { OVERLONG_HEAD_BYTES, type Frame } from '../../lib/process/line-framer.js';
import { frameChunks, ownCopy } from '../helpers/byte-chunks.js';

function frame(chunks: readonly (string | Buffer)[], options: { maxLineBytes?: number; bytes?: boolean } = {}): Frame[] {
  return frameChunks(chunks, { bytes: true, ...options });
}

/** Each frame with its pieces as strings (one string per piece). */
function pieces(frames: readonly Frame[]): unknown[] {
  return frames.map((f) => (f.kind === 'line-bytes' ? { kind: 'line-bytes', chunks: f.chunks.map((chunk) => chunk.toString()) } : f));
}

const bytesLines = (...lines: string[][]): unknown[] => lines.map((chunks) => ({ kind: 'line-bytes', chunks }));

/** A bytes-mode frame as the text-mode frame it stands for. */
function asText(f: Frame): Frame {
  return f.kind === 'line-bytes' ? { kind: 'line', text: Buffer.concat(f.chunks).toString('utf8') } : f;
}

describe('LineFramer, bytes mode', () => {
  it('emits a line inside one chunk as a view of that chunk, without a copy', () => {
    const chunk = ownCopy(Buffer.from('one\ntwo\r\nthree\n'));
    const out = frame([chunk]);
    expect(pieces(out)).toEqual(bytesLines(['one'], ['two'], ['three']));
    const offsets = [0, 4, 9];
    out.forEach((f, i) => {
      if (f.kind !== 'line-bytes') throw new Error('expected line-bytes');
      expect(f.chunks).toHaveLength(1);
      const [view] = f.chunks as [Buffer];
      expect(view.buffer).toBe(chunk.buffer);
      expect(view.byteOffset).toBe(chunk.byteOffset + (offsets[i] as number));
    });
    // A view, not a copy: the line reads what the chunk's memory holds.
    chunk[0] = 'O'.charCodeAt(0);
    expect(pieces(out.slice(0, 1))).toEqual(bytesLines(['One']));
  });

  it('emits a line over several chunks as one view of each, in order', () => {
    const chunks = ['ab', 'cd', 'ef\ngh', 'i', 'jk\n'].map((text) => ownCopy(Buffer.from(text)));
    const out = frame(chunks);
    expect(pieces(out)).toEqual(bytesLines(['ab', 'cd', 'ef'], ['gh', 'i', 'jk']));
    const [first, second] = out as [Extract<Frame, { kind: 'line-bytes' }>, Extract<Frame, { kind: 'line-bytes' }>];
    expect(first.chunks.map((piece) => piece.buffer)).toEqual([chunks[0]?.buffer, chunks[1]?.buffer, chunks[2]?.buffer]);
    expect(second.chunks.map((piece) => piece.buffer)).toEqual([chunks[2]?.buffer, chunks[3]?.buffer, chunks[4]?.buffer]);
  });

  it('removes the CR of a CRLF whose CR ends one chunk and whose LF starts the next', () => {
    expect(pieces(frame(['one\r', '\ntwo\r\n']))).toEqual(bytesLines(['one'], ['two']));
    expect(pieces(frame(['o', 'ne\r', '\n']))).toEqual(bytesLines(['o', 'ne']));
    expect(pieces(frame(['a\r', '\r', '\n']))).toEqual(bytesLines(['a\r']));
  });

  it('drops a chunk that is only the CR of a CRLF', () => {
    expect(pieces(frame(['one', '\r', '\nnext\n']))).toEqual(bytesLines(['one'], ['next']));
    expect(pieces(frame(['\r', '\n']))).toEqual(bytesLines([]));
  });

  it('keeps a lone CR (one not before the LF) inside the line, also as a chunk of its own', () => {
    expect(pieces(frame(['a', '\r', 'b\n']))).toEqual(bytesLines(['a', '\r', 'b']));
    expect(pieces(frame(['a\rb\n', 'x\u2028y\u2029z\n']))).toEqual(bytesLines(['a\rb'], ['x\u2028y\u2029z']));
  });

  it('emits empty lines with no chunks, and nothing for an empty stream', () => {
    expect(frame(['\n\r\n', '\n', 'a\n'])).toEqual([
      { kind: 'line-bytes', chunks: [] },
      { kind: 'line-bytes', chunks: [] },
      { kind: 'line-bytes', chunks: [] },
      { kind: 'line-bytes', chunks: [Buffer.from('a')] },
    ]);
    expect(frame([])).toEqual([]);
    expect(frame([Buffer.alloc(0)])).toEqual([]);
  });

  it('emits the final line at the end when the stream ends without an LF, its CR removed as in text mode', () => {
    expect(pieces(frame(['first\nsec', 'ond']))).toEqual(bytesLines(['first'], ['sec', 'ond']));
    expect(pieces(frame(['last\r']))).toEqual(bytesLines(['last']));
    expect(frame(['last\r'], { bytes: false })).toEqual([{ kind: 'line', text: 'last' }]);
    expect(pieces(frame(['last', '\r']))).toEqual(bytesLines(['last']));
  });

  it('keeps a multi-byte character split across chunks as its bytes, whole once joined', () => {
    const text = 'héllo ✓ 🚀 日本語';
    const bytes = Buffer.from(`${text}\n`);
    for (let cut = 1; cut < bytes.length - 1; cut += 1) {
      const out = frame([bytes.subarray(0, cut), bytes.subarray(cut)]);
      expect(out.map(asText)).toEqual([{ kind: 'line', text }]);
    }
  });

  it('emits a line of exactly maxLineBytes, with or without CR LF', () => {
    expect(pieces(frame(['x'.repeat(8), '\n'], { maxLineBytes: 8 }))).toEqual(bytesLines(['x'.repeat(8)]));
    expect(pieces(frame(['x'.repeat(8), '\r', '\n'], { maxLineBytes: 8 }))).toEqual(bytesLines(['x'.repeat(8)]));
    expect(pieces(frame(['x'.repeat(8), '\r\n'], { maxLineBytes: 8 }))).toEqual(bytesLines(['x'.repeat(8)]));
    expect(frame([`${'x'.repeat(9)}\n`], { maxLineBytes: 8 })).toEqual([{ kind: 'line-too-long', bytes: 9, head: 'x'.repeat(9) }]);
  });

  it.each<[string, (string | Buffer)[], number]>([
    ['over many chunks, with CR LF', ['y'.repeat(100), 'y'.repeat(3900), `${'y'.repeat(1000)}\r\nnext\n`], 1024],
    ['in one chunk', [`${'z'.repeat(20)}\nok\n`], 10],
    ['in one chunk, with CR LF', [`${'z'.repeat(20)}\r\nok\n`], 10],
    ['that never ends', ['z'.repeat(30), 'z'.repeat(30)], 10],
    ['that ends in a CR and no LF', ['z'.repeat(30), 'z'.repeat(30), '\r'], 10],
    ['whose CR LF is split after the limit', ['z'.repeat(11), '\r', '\nok\n'], 10],
    ['one byte over, its CR in the same chunk', [`${'z'.repeat(11)}\r`, '\n'], 10],
    ['of two-byte characters', [`${'é'.repeat(200)}\n`], 10],
    ['of two-byte characters after one ASCII byte', [`a${'é'.repeat(200)}\n`], 10],
    ['whose head ends inside a character split over chunks', [Buffer.from('é'.repeat(200)).subarray(0, 255), Buffer.from(`${'é'.repeat(200)}\n`).subarray(255)], 10],
  ])('reports an overlong line (%s) exactly as text mode does', (_name, chunks, maxLineBytes) => {
    const bytes = frame(chunks, { maxLineBytes });
    expect(bytes.map(asText)).toEqual(frame(chunks, { maxLineBytes, bytes: false }));
    expect(bytes[0]).toMatchObject({ kind: 'line-too-long' });
    expect((bytes[0] as { head: string }).head.length).toBeLessThanOrEqual(OVERLONG_HEAD_BYTES);
  });

  it('frames any chunking of any text as text mode does, item for item, with non-empty views of the chunks', () => {
    const part = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 12 }),
      fc.constantFrom('\n', '\r\n', '\r', '\r\r\n', 'é', '✓', '🚀', '日本', '\u2028', '\u2029', ' '),
    );
    fc.assert(
      fc.property(
        fc.array(part, { maxLength: 30 }),
        fc.array(fc.nat(24), { maxLength: 40 }),
        fc.oneof(fc.constant(1 << 20), fc.integer({ min: 1, max: 40 })),
        (parts, sizes, maxLineBytes) => {
          const bytes = Buffer.from(parts.join(''));
          // Each chunk in memory of its own, so a piece shows which chunk it is a view of.
          const chunks: Buffer[] = [];
          let at = 0;
          for (const size of sizes) {
            const end = Math.min(bytes.length, at + size);
            chunks.push(ownCopy(bytes.subarray(at, end)));
            at = end;
          }
          chunks.push(ownCopy(bytes.subarray(at)));
          const text = frame(chunks, { maxLineBytes, bytes: false });
          const out = frame(chunks, { maxLineBytes });
          expect(out.map(asText)).toEqual(text);
          const owners = chunks.map((chunk) => chunk.buffer);
          for (const f of out) {
            if (f.kind !== 'line-bytes') continue;
            let previous = -1;
            for (const piece of f.chunks) {
              expect(piece.length).toBeGreaterThan(0);
              const owner = owners.indexOf(piece.buffer);
              // A view of one of the chunks, each chunk at most once per line, in order.
              expect(owner).toBeGreaterThan(previous);
              previous = owner;
            }
          }
        },
      ),
      { numRuns: 400 },
    );
  });
});
