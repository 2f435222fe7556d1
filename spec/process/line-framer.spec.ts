import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { OVERLONG_HEAD_BYTES, type Frame } from '../../lib/process/line-framer.js';
import { frameChunks } from '../helpers/byte-chunks.js';

function frame(chunks: readonly (string | Buffer)[], maxLineBytes = 1024): Frame[] {
  return frameChunks(chunks, { maxLineBytes });
}

const lines = (...texts: string[]): Frame[] => texts.map((text) => ({ kind: 'line', text }));

describe('LineFramer', () => {
  it('splits on LF only and keeps a lone CR, U+2028 and U+2029 inside the line', () => {
    expect(frame(['a\rb\n', 'x\u2028y\u2029z\n'])).toEqual(lines('a\rb', 'x\u2028y\u2029z'));
  });

  it('strips the CR of a CRLF, also when CR and LF arrive in different chunks', () => {
    expect(frame(['one\r\ntwo\r', '\nthree\r\n'])).toEqual(lines('one', 'two', 'three'));
  });

  it('emits the final line when the stream ends without an LF', () => {
    expect(frame(['first\nsec', 'ond'])).toEqual(lines('first', 'second'));
  });

  it('emits empty lines as empty text and nothing for an empty stream', () => {
    expect(frame(['\n\na\n'])).toEqual(lines('', '', 'a'));
    expect(frame([])).toEqual([]);
  });

  it('joins a line that spans many chunks', () => {
    expect(frame(['ab', 'cd', 'ef\ngh', 'i'])).toEqual(lines('abcdef', 'ghi'));
  });

  it('decodes multi-byte characters split across chunks at every byte', () => {
    const text = 'héllo wörld ✓ 🚀 日本語';
    const bytes = Buffer.from(`${text}\n${text}`);
    for (let cut = 1; cut < bytes.length; cut += 1) {
      expect(frame([bytes.subarray(0, cut), bytes.subarray(cut)])).toEqual(lines(text, text));
    }
  });

  it('emits a line of exactly maxLineBytes, with or without CR LF', () => {
    expect(frame(['x'.repeat(8), '\n'], 8)).toEqual(lines('x'.repeat(8)));
    expect(frame(['x'.repeat(8), '\r', '\n'], 8)).toEqual(lines('x'.repeat(8)));
  });

  it('reports a line over maxLineBytes with its length and head, then goes on', () => {
    const long = 'y'.repeat(5000);
    const out = frame([long.slice(0, 100), long.slice(100, 4000), `${long.slice(4000)}\r\nnext\n`], 1024);
    expect(out).toEqual([
      { kind: 'line-too-long', bytes: 5000, head: 'y'.repeat(OVERLONG_HEAD_BYTES) },
      { kind: 'line', text: 'next' },
    ]);
  });

  it('reports an overlong line that arrives in one chunk, and one that never ends', () => {
    expect(frame([`${'z'.repeat(20)}\nok\n`], 10)).toEqual([{ kind: 'line-too-long', bytes: 20, head: 'z'.repeat(20) }, ...lines('ok')]);
    expect(frame(['z'.repeat(30), 'z'.repeat(30)], 10)).toEqual([{ kind: 'line-too-long', bytes: 60, head: 'z'.repeat(60) }]);
  });

  it('does not end an overlong head in half a character', () => {
    const out = frame([`${'é'.repeat(200)}\n`], 10);
    expect(out[0]).toEqual({ kind: 'line-too-long', bytes: 400, head: 'é'.repeat(OVERLONG_HEAD_BYTES / 2) });
    const odd = frame([`a${'é'.repeat(200)}\n`], 10);
    expect(odd[0]).toMatchObject({ kind: 'line-too-long', bytes: 401, head: `a${'é'.repeat(127)}` });
  });

  it('frames any chunking of any text like String#split on LF', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.string({ unit: 'binary' }), fc.constantFrom('\n', '\r\n', '\u2028'))), fc.array(fc.nat(40)), (parts, cuts) => {
        const text = parts.join('');
        const bytes = Buffer.from(text);
        const chunks: Buffer[] = [];
        let at = 0;
        for (const cut of cuts) {
          chunks.push(bytes.subarray(at, Math.min(bytes.length, at + cut)));
          at = Math.min(bytes.length, at + cut);
        }
        chunks.push(bytes.subarray(at));
        const expected = text.split('\n').map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
        if (text.endsWith('\n') || text === '') expected.pop();
        expect(frame(chunks, 1 << 20)).toEqual(lines(...expected));
      }),
    );
  });
});
