import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { from } from 'rxjs';
import * as z from 'zod';
import { parseJsonLine } from '../../lib/index.js';
import type { ParseJsonLineOptions, ProcessItem, ProcessLineBytes } from '../../lib/index.js';
import { cutAt, cutPositions } from '../helpers/byte-chunks.js';
import { exit, line, scheduler } from '../helpers/items.js';

/** A line-bytes item made of these pieces (strings are UTF-8 encoded). */
const bytes = (...pieces: (string | Buffer)[]): ProcessLineBytes => ({
  kind: 'line-bytes',
  chunks: pieces.map((piece) => (typeof piece === 'string' ? Buffer.from(piece) : piece)),
});

/** `text` encoded and cut at byte `at`. */
const cut = (text: string, at: number): ProcessLineBytes => {
  const encoded = Buffer.from(text);
  return bytes(encoded.subarray(0, at), encoded.subarray(at));
};

describe('parseJsonLine over line-bytes items', () => {
  it('parses JSON lines in one or many pieces, bad lines into invalid items with their text, and counts them with text lines', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const values: Record<string, ProcessItem> = {
        a: bytes('{"type":"hello","n":1}'),
        b: bytes('{"type"', ':"split",', '"n":', '2}'),
        c: bytes('not ', 'json'),
        d: bytes('[1,', '2]'),
        e: bytes('{"no":"type"}'),
        f: { kind: 'line-too-long', bytes: 99_999_999, head: '{"type":"huge' },
        g: line('{"type":"text"}'),
        h: bytes('{"type":"x","text":"a\u2028b"}'),
        x: exit(),
      };
      const source = cold('-a-b-c-d-e-f-g-h-x|', values);
      expectObservable(source.pipe(parseJsonLine())).toBe('-A-B-C-D-E-F-G-H-x|', {
        A: { kind: 'event', event: { type: 'hello', n: 1 }, lineNumber: 1 },
        B: { kind: 'event', event: { type: 'split', n: 2 }, lineNumber: 2 },
        C: expect.objectContaining({ kind: 'invalid', reason: 'not-json', lineNumber: 3, text: 'not json', bytes: 8 }),
        D: expect.objectContaining({ kind: 'invalid', reason: 'not-object', lineNumber: 4, detail: 'a JSON array, not an object', text: '[1,2]' }),
        E: expect.objectContaining({ kind: 'invalid', reason: 'no-type', lineNumber: 5, text: '{"no":"type"}' }),
        F: expect.objectContaining({ kind: 'invalid', reason: 'too-long', lineNumber: 6, bytes: 99_999_999 }),
        G: { kind: 'event', event: { type: 'text' }, lineNumber: 7 },
        H: { kind: 'event', event: { type: 'x', text: 'a\u2028b' }, lineNumber: 8 },
        x: values['x'],
      });
      expectSubscriptions(source.subscriptions).toBe('^-----------------!');
    });
  });

  it('skips blank and white-space-only lines without calling parseBytes or parse, but counts them', () => {
    const seen: string[] = [];
    const parseBytes = (chunks: readonly Buffer[]): unknown => {
      seen.push(`bytes:${Buffer.concat(chunks).toString()}`);
      return undefined;
    };
    const parse = (text: string): unknown => {
      seen.push(`text:${text}`);
      return JSON.parse(text);
    };
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold('-a-b-c-d-e-f-g-h|', {
        a: bytes(),
        b: bytes(''),
        c: bytes(' ', '\t', ''),
        d: bytes('\u00a0'),
        e: bytes('\u2028', ' \r'),
        f: bytes('\ufeff'),
        g: bytes(Buffer.from('\u3000').subarray(0, 1), Buffer.from('\u3000').subarray(1)),
        h: bytes('  {"type":"t"}  '),
      });
      expectObservable(source.pipe(parseJsonLine({ parseBytes, parse }))).toBe('---------------h|', {
        h: { kind: 'event', event: { type: 't' }, lineNumber: 8 },
      });
    });
    expect(seen).toEqual(['bytes:  {"type":"t"}  ', 'text:  {"type":"t"}  ']);
  });

  it('skips blank line-bytes lines without a parseBytes too', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const values = { a: bytes(' '), b: bytes('{"type":"t"}'), c: bytes('\t\t') };
      expectObservable(cold('-a-b-c|', values).pipe(parseJsonLine())).toBe('---b--|', { b: { kind: 'event', event: { type: 't' }, lineNumber: 2 } });
    });
  });

  it('uses what parseBytes returns, checked as a parsed line (object, type, schema)', () => {
    const schemas = { greet: z.looseObject({ type: z.literal('greet'), name: z.string() }) };
    const parseBytes = (chunks: readonly Buffer[]): unknown => {
      const text = Buffer.concat(chunks).toString();
      if (text === 'array') return [1];
      if (text === 'untyped') return { name: 'x' };
      if (text === 'bad greet') return { type: 'greet', name: 7 };
      return { type: 'greet', name: text };
    };
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold('-a-b-c-d|', { a: bytes('p', 'i'), b: bytes('arr', 'ay'), c: bytes('untyped'), d: bytes('bad ', 'greet') });
      expectObservable(source.pipe(parseJsonLine({ schemas, parseBytes }))).toBe('-a-b-c-d|', {
        a: { kind: 'event', event: { type: 'greet', name: 'pi' }, lineNumber: 1 },
        b: expect.objectContaining({ kind: 'invalid', reason: 'not-object', lineNumber: 2, text: 'array', bytes: 5 }),
        c: expect.objectContaining({ kind: 'invalid', reason: 'no-type', lineNumber: 3, text: 'untyped' }),
        d: expect.objectContaining({ kind: 'invalid', reason: 'invalid-event', lineNumber: 4, text: 'bad greet', detail: expect.stringContaining('name') }),
      });
    });
  });

  it('decodes and parses a line with parse when parseBytes returns undefined', () => {
    const given: (readonly Buffer[])[] = [];
    const parseBytes = (chunks: readonly Buffer[]): unknown => {
      given.push(chunks);
      return undefined;
    };
    const parse = (text: string): unknown => ({ ...(JSON.parse(text) as object), parsedBy: 'parse' });
    const item = bytes('{"type":', '"t"}');
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-a-b|', { a: item, b: bytes('nope') }).pipe(parseJsonLine({ parseBytes, parse }))).toBe('-a-b|', {
        a: { kind: 'event', event: { type: 't', parsedBy: 'parse' }, lineNumber: 1 },
        b: expect.objectContaining({ kind: 'invalid', reason: 'not-json', lineNumber: 2, text: 'nope' }),
      });
    });
    // parseBytes gets the pieces as they came, not a joined copy.
    expect(given[0]).toBe(item.chunks);
  });

  it('turns what parseBytes throws into a not-json item with the decoded line and the message', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const parseBytes = (chunks: readonly Buffer[]): unknown => {
        if (chunks.length === 1) throw new SyntaxError('bad bytes');
        // eslint-disable-next-line @typescript-eslint/only-throw-error -- what a parser might throw
        throw 'not an Error';
      };
      const source = cold('-a-b|', { a: bytes('{"type":"t","s":"é"}'), b: cut('{"type":"é✓"}', 11) });
      expectObservable(source.pipe(parseJsonLine({ parseBytes }))).toBe('-a-b|', {
        a: { kind: 'invalid', reason: 'not-json', lineNumber: 1, detail: 'bad bytes', text: '{"type":"t","s":"é"}', bytes: Buffer.byteLength('{"type":"t","s":"é"}') },
        b: { kind: 'invalid', reason: 'not-json', lineNumber: 2, detail: 'not an Error', text: '{"type":"é✓"}', bytes: Buffer.byteLength('{"type":"é✓"}') },
      });
    });
  });

  it('decodes a multi-byte character split between pieces whole, at every cut', () => {
    const text = '{"type":"t","s":"é ✓ 🚀 日本"}';
    const length = Buffer.byteLength(text);
    const bad = '« é ✓ 🚀 »';
    for (let at = 0; at <= length; at += 1) {
      scheduler().run(({ cold, expectObservable }) => {
        const source = cold('-a-b|', { a: cut(text, at), b: cut(bad, at % (Buffer.byteLength(bad) + 1)) });
        expectObservable(source.pipe(parseJsonLine())).toBe('-a-b|', {
          a: { kind: 'event', event: { type: 't', s: 'é ✓ 🚀 日本' }, lineNumber: 1 },
          b: expect.objectContaining({ kind: 'invalid', reason: 'not-json', text: bad, bytes: Buffer.byteLength(bad) }),
        });
      });
    }
  });

  it('gives for any line in any pieces, without parseBytes or with one that declines, what it gives for the text line', () => {
    const unit = fc.constantFrom('{', '}', '"', ':', ',', '1', 'a', ' ', '\t', '\u00a0', '\u2028', '\u0085', '\u0001', 'é', '🚀', '\ufeff', '"type"', '"t"');
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit, maxLength: 12 }), fc.string({ unit: 'binary', maxLength: 12 })), cutPositions, fc.boolean(), (text, cuts, declining) => {
        const options = declining ? { parseBytes: (): unknown => undefined } : {};
        const run = (item: ProcessItem): unknown[] => {
          const out: unknown[] = [];
          from([item, exit()]).pipe(parseJsonLine(options)).subscribe((parsed) => out.push(parsed));
          return out;
        };
        expect(run({ kind: 'line-bytes', chunks: cutAt(Buffer.from(text), cuts) })).toEqual(run(line(text)));
      }),
      { numRuns: 500 },
    );
  });

  it('completes empty, stays silent on never, and forwards errors', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const parseBytes = (): unknown => undefined;
      expectObservable(cold<ProcessItem>('|').pipe(parseJsonLine({ parseBytes }))).toBe('|');
      expectObservable(cold<ProcessItem>('-').pipe(parseJsonLine({ parseBytes }))).toBe('-');
      expectObservable(cold<ProcessItem>('-a-#', { a: bytes('{"type":"t"}') }).pipe(parseJsonLine({ parseBytes }))).toBe('-a-#', {
        a: { kind: 'event', event: { type: 't' }, lineNumber: 1 },
      });
    });
  });

  it('stops at an early unsubscribe', () => {
    let calls = 0;
    const parseBytes = (): unknown => {
      calls += 1;
      return { type: 't' };
    };
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-a-a-a-a|', { a: bytes('{"type":', '"t"}') });
      expectObservable(source.pipe(parseJsonLine({ parseBytes })), '^--!').toBe('-a-', { a: { kind: 'event', event: { type: 't' }, lineNumber: 1 } });
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
    expect(calls).toBe(1);
  });

  it('numbers lines per subscription: two subscriptions share nothing', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const parsed = cold('-a-b|', { a: bytes('{"type":"t"}'), b: bytes('{"ty', 'pe":"t"}') }).pipe(parseJsonLine({ parseBytes: () => undefined }));
      const expected = { 1: { kind: 'event', event: { type: 't' }, lineNumber: 1 }, 2: { kind: 'event', event: { type: 't' }, lineNumber: 2 } };
      expectObservable(parsed).toBe('-1-2|', expected);
      expectObservable(parsed).toBe('-1-2|', expected);
    });
  });

  it('errors the stream with what a validator throws, at that line, and unsubscribes the source (from parseBytes or parse alike)', () => {
    const boom = new Error('validator bug');
    const schemas = {
      boom: {
        safeParse: (): never => {
          throw boom;
        },
      },
    };
    for (const parseBytes of [(): unknown => ({ type: 'boom' }), (): unknown => undefined]) {
      scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
        const source = cold('-a-b-a-|', { a: line('{"type":"t"}'), b: bytes('{"type":', '"boom"}') });
        expectObservable(source.pipe(parseJsonLine({ schemas, parseBytes }))).toBe('-a-#', { a: { kind: 'event', event: { type: 't' }, lineNumber: 1 } }, boom);
        expectSubscriptions(source.subscriptions).toBe('^--!');
      });
    }
  });

  it.each<[string, unknown]>([
    ['a string', 'JSON.parse'],
    ['an object', { parse: JSON.parse }],
    ['null', null],
    ['a number', 1],
  ])('throws a TypeError at call time for a parseBytes that is %s', (_name, parseBytes) => {
    const options = { parseBytes } as unknown as ParseJsonLineOptions;
    expect(() => parseJsonLine(options)).toThrow(TypeError);
    expect(() => parseJsonLine(options)).toThrow(/^agent-rx: /);
  });

  it('accepts a parseBytes function, or none', () => {
    expect(() => parseJsonLine({ parseBytes: () => undefined })).not.toThrow();
    expect(() => parseJsonLine({ parse: JSON.parse })).not.toThrow();
  });
});
