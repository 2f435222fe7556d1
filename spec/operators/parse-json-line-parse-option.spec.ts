import { describe, expect, it } from '@jest/globals';
import { parseJsonLine } from '../../lib/index.js';
import { line, scheduler } from '../helpers/items.js';

describe('parseJsonLine with a parse option', () => {
  it('parses lines with the given function instead of JSON.parse', () => {
    const seen: string[] = [];
    scheduler().run(({ cold, expectObservable }) => {
      const parse = (text: string): unknown => {
        seen.push(text);
        return { ...(JSON.parse(text) as object), parsedBy: 'hook' };
      };
      const source = cold('-a-b|', { a: line('{"type":"t"}'), b: line('  ') });
      expectObservable(source.pipe(parseJsonLine({ parse }))).toBe('-a--|', {
        a: { kind: 'event', event: { type: 't', parsedBy: 'hook' }, lineNumber: 1 },
      });
    });
    // The blank line is skipped before parsing.
    expect(seen).toEqual(['{"type":"t"}']);
  });

  it('turns what the parse function throws into a not-json item with its message', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const parse = (): unknown => {
        throw new SyntaxError('bad line');
      };
      const source = cold('-a|', { a: line('{"type":"t"}') });
      expectObservable(source.pipe(parseJsonLine({ parse }))).toBe('-a|', {
        a: expect.objectContaining({ kind: 'invalid', reason: 'not-json', detail: 'bad line', text: '{"type":"t"}' }),
      });
    });
  });

  it('applies the schemas and the object checks to what the parse function returns', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const parse = (text: string): unknown => (text === 'array' ? [1] : { type: text });
      const source = cold('-a-b|', { a: line('array'), b: line('hello') });
      expectObservable(source.pipe(parseJsonLine({ parse }))).toBe('-a-b|', {
        a: expect.objectContaining({ kind: 'invalid', reason: 'not-object' }),
        b: { kind: 'event', event: { type: 'hello' }, lineNumber: 2 },
      });
    });
  });
});
