import { afterEach, describe, expect, it } from '@jest/globals';
import { activeRunCount, processLines, stopAllRuns, type ProcessExit, type ProcessItem, type ProcessOptions } from '../../lib/index.js';
import { collect, fixture, killLeftovers } from '../helpers/processes.js';

const node = process.execPath;

const exitOf = (items: readonly ProcessItem[]): ProcessExit => {
  const last = items.at(-1);
  if (last?.kind !== 'exit') throw new Error('the stream did not end with an exit item');
  return last;
};

/** The items before the exit, each line-bytes item as its joined text. */
function joined(items: readonly ProcessItem[]): unknown[] {
  return items.slice(0, -1).map((item) => (item.kind === 'line-bytes' ? { kind: 'line-bytes', text: Buffer.concat(item.chunks).toString('utf8') } : item));
}

const bytesLine = (text: string): unknown => ({ kind: 'line-bytes', text });

afterEach(async () => {
  await stopAllRuns();
  killLeftovers();
});

describe("processLines with lineEncoding: 'buffer'", () => {
  it('emits line-bytes items whose joined bytes are the lines: CRLF stripped, a lone CR and U+2028 kept, multi-byte text whole', async () => {
    const items = await collect(processLines(node, [fixture('crlf.mjs')], { lineEncoding: 'buffer' }));
    expect(joined(items)).toEqual([
      bytesLine('one'),
      bytesLine('two'),
      bytesLine('has\rcarriage'),
      bytesLine(JSON.stringify({ text: 'a\u2028b\u2029c' })),
      bytesLine('héllo wörld ✓ 🚀'),
    ]);
    for (const item of items) {
      if (item.kind !== 'line-bytes') continue;
      for (const piece of item.chunks) {
        expect(Buffer.isBuffer(piece)).toBe(true);
        expect(piece.length).toBeGreaterThan(0);
      }
    }
    expect(exitOf(items)).toMatchObject({ kind: 'exit', exitCode: 0, signal: null, startError: null, stderr: '' });
  });

  it('gives the same lines as the default encoding, in order, for a long output read in many pieces', async () => {
    const count = 20_000;
    const args = [fixture('lines.mjs'), String(count)];
    const items = await collect(processLines(node, args, { lineEncoding: 'buffer' }));
    const expected = Array.from({ length: count }, (_, i) => `line ${i}`);
    expect(items.slice(0, -1).map((item) => (item.kind === 'line-bytes' ? Buffer.concat(item.chunks).toString('utf8') : item.kind))).toEqual(expected);
    const text = await collect(processLines(node, args));
    expect(text.slice(0, -1).map((item) => (item.kind === 'line' ? item.text : item.kind))).toEqual(expected);
    expect(exitOf(items).exitCode).toBe(0);
  });

  it('emits a final line that has no newline', async () => {
    const items = await collect(processLines(node, [fixture('no-final-newline.mjs')], { lineEncoding: 'buffer' }));
    expect(joined(items)).toEqual([bytesLine('first'), bytesLine('second without newline')]);
  });

  it('reports a line over maxLineBytes as too long, as the default encoding does, and goes on', async () => {
    const size = 3 * 1024 * 1024;
    const items = await collect(processLines(node, [fixture('huge-line.mjs'), String(size)], { lineEncoding: 'buffer', maxLineBytes: 1024 * 1024 }));
    expect(joined(items)).toEqual([{ kind: 'line-too-long', bytes: size, head: 'x'.repeat(256) }, bytesLine('after one'), bytesLine('after two')]);
  });

  it('still emits stderr lines as text', async () => {
    const items = await collect(processLines(node, [fixture('interleaved.mjs')], { lineEncoding: 'buffer', stderrLines: true }));
    expect(joined(items).filter((item) => (item as ProcessItem).kind === 'line-bytes')).toEqual([bytesLine('out 1'), bytesLine('out 2')]);
    expect(items.filter((item) => item.kind === 'stderr-line')).toEqual([
      { kind: 'stderr-line', text: 'err 1' },
      { kind: 'stderr-line', text: 'err 2' },
    ]);
  });

  it("emits text lines with lineEncoding: 'utf8', as by default", async () => {
    const items = await collect(processLines(node, [fixture('no-final-newline.mjs')], { lineEncoding: 'utf8' }));
    expect(items.slice(0, -1)).toEqual([
      { kind: 'line', text: 'first' },
      { kind: 'line', text: 'second without newline' },
    ]);
  });

  it.each<[string, unknown]>([
    ['utf-8', 'utf-8'],
    ['binary', 'binary'],
    ['Buffer', 'Buffer'],
    ['a number', 8],
    ['null', null],
    ['true', true],
  ])('throws a TypeError at call time for lineEncoding %s, before spawning', (_name, lineEncoding) => {
    const options = { lineEncoding } as unknown as ProcessOptions;
    expect(() => processLines(node, [fixture('lines.mjs')], options)).toThrow(TypeError);
    expect(() => processLines(node, [fixture('lines.mjs')], options)).toThrow(/^agent-rx: lineEncoding must be 'utf8' or 'buffer'/);
    expect(activeRunCount()).toBe(0);
  });
});
