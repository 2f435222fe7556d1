import { describe, expect, it } from '@jest/globals';
import * as z from 'zod';
import { parseJsonLine } from '../../lib/index.js';
import type { ParseJsonLineOptions, ProcessItem } from '../../lib/index.js';
import { exit, line, scheduler } from '../helpers/items.js';

describe('parseJsonLine', () => {
  it('turns JSON lines into events, bad lines into invalid items with a reason, and passes the exit', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const values: Record<string, ProcessItem> = {
        a: line('{"type":"hello","n":1}'),
        b: line('not json'),
        c: line('[1,2]'),
        d: line('{"no":"type"}'),
        e: line('   '),
        f: { kind: 'line-too-long', bytes: 99_999_999, head: '{"type":"huge' },
        g: line('{"type":"x","text":"a\u2028b"}'),
        x: exit(),
      };
      const source = cold('-a-b-c-d-e-f-g-x|', values);
      expectObservable(source.pipe(parseJsonLine())).toBe('-A-B-C-D---F-G-x|', {
        A: { kind: 'event', event: { type: 'hello', n: 1 }, lineNumber: 1 },
        B: expect.objectContaining({ kind: 'invalid', reason: 'not-json', lineNumber: 2, text: 'not json', bytes: 8 }),
        C: expect.objectContaining({ kind: 'invalid', reason: 'not-object', lineNumber: 3, detail: 'a JSON array, not an object' }),
        D: expect.objectContaining({ kind: 'invalid', reason: 'no-type', lineNumber: 4 }),
        F: expect.objectContaining({ kind: 'invalid', reason: 'too-long', lineNumber: 6, bytes: 99_999_999, text: '{"type":"huge' }),
        G: { kind: 'event', event: { type: 'x', text: 'a\u2028b' }, lineNumber: 7 },
        x: values['x'],
      });
      expectSubscriptions(source.subscriptions).toBe('^---------------!');
    });
  });

  it('passes stderr lines on untouched, without counting them as stdout lines', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const values: Record<string, ProcessItem> = { a: line('{"type":"a"}'), s: { kind: 'stderr-line', text: 'not json at all' }, b: line('{"type":"b"}'), x: exit() };
      expectObservable(cold('-a-s-b-x|', values).pipe(parseJsonLine())).toBe('-A-s-B-x|', {
        A: { kind: 'event', event: { type: 'a' }, lineNumber: 1 },
        s: values['s'],
        B: { kind: 'event', event: { type: 'b' }, lineNumber: 2 },
        x: values['x'],
      });
    });
  });

  it('validates known event types and lets unknown ones pass untouched', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const schemas = { greet: z.looseObject({ type: z.literal('greet'), name: z.string() }) };
      const source = cold('-a-b-c|', {
        a: line('{"type":"greet","name":"pi"}'),
        b: line('{"type":"greet","name":7}'),
        c: line('{"type":"brand-new","anything":[1]}'),
      });
      expectObservable(source.pipe(parseJsonLine({ schemas }))).toBe('-a-b-c|', {
        a: { kind: 'event', event: { type: 'greet', name: 'pi' }, lineNumber: 1 },
        b: expect.objectContaining({ kind: 'invalid', reason: 'invalid-event', detail: expect.stringContaining('name') }),
        c: { kind: 'event', event: { type: 'brand-new', anything: [1] }, lineNumber: 3 },
      });
    });
  });

  it('does not treat inherited property names as known types', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold('-a|', { a: line('{"type":"constructor"}') });
      expectObservable(source.pipe(parseJsonLine({ schemas: {} }))).toBe('-a|', {
        a: { kind: 'event', event: { type: 'constructor' }, lineNumber: 1 },
      });
    });
  });

  it('completes empty, stays silent on never, and forwards errors', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<ProcessItem>('|').pipe(parseJsonLine())).toBe('|');
      expectObservable(cold<ProcessItem>('-').pipe(parseJsonLine())).toBe('-');
      expectObservable(cold<ProcessItem>('-a-#', { a: line('{"type":"t"}') }).pipe(parseJsonLine())).toBe('-a-#', {
        a: { kind: 'event', event: { type: 't' }, lineNumber: 1 },
      });
    });
  });

  it('stops at an early unsubscribe', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-a-a-a-a|', { a: line('{"type":"t"}') });
      expectObservable(source.pipe(parseJsonLine()), '^--!').toBe('-a-', { a: expect.objectContaining({ kind: 'event' }) });
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });

  it('numbers lines per subscription: two subscriptions do not share state', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const parsed = cold('-a-a|', { a: line('{"type":"t"}') }).pipe(parseJsonLine());
      const expected = { 1: { kind: 'event', event: { type: 't' }, lineNumber: 1 }, 2: { kind: 'event', event: { type: 't' }, lineNumber: 2 } };
      expectObservable(parsed).toBe('-1-2|', expected);
      expectObservable(parsed).toBe('-1-2|', expected);
    });
  });

  it('errors the stream with what a validator throws, at that line, emits nothing after, and unsubscribes the source', () => {
    const boom = new Error('validator bug');
    const schemas = {
      boom: {
        safeParse: (): never => {
          throw boom;
        },
      },
    };
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-a-b-a-|', { a: line('{"type":"t"}'), b: line('{"type":"boom"}') });
      expectObservable(source.pipe(parseJsonLine({ schemas }))).toBe('-a-#', { a: { kind: 'event', event: { type: 't' }, lineNumber: 1 } }, boom);
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });

  it.each<[string, unknown]>([
    ['options a string', 'json'],
    ['schemas an array', { schemas: [] }],
    ['schemas a string', { schemas: 'pi' }],
    ['a schema without safeParse', { schemas: { t: {} } }],
    ['a schema whose safeParse is not a function', { schemas: { t: { safeParse: true } } }],
    ['a schema that is a function', { schemas: { t: () => true } }],
    ['parse not a function', { parse: 'JSON.parse' }],
  ])('throws a TypeError at call time for %s', (_name, options) => {
    expect(() => parseJsonLine(options as ParseJsonLineOptions)).toThrow(TypeError);
    expect(() => parseJsonLine(options as ParseJsonLineOptions)).toThrow(/^agent-rx: /);
  });

  it('accepts zod schemas and a parse function', () => {
    expect(() => parseJsonLine({ schemas: { t: z.looseObject({ type: z.literal('t') }) }, parse: JSON.parse })).not.toThrow();
  });
});
