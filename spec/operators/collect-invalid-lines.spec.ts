import { describe, expect, it } from '@jest/globals';
import { collectInvalidLines, type CollectInvalidLinesOptions, type InvalidLineItem, type PipelineItem } from '../../lib/index.js';
import { ev, exit, scheduler } from '../helpers/items.js';

const bad = (lineNumber: number, textValue = `bad ${lineNumber}`): InvalidLineItem => ({
  kind: 'invalid',
  lineNumber,
  reason: 'not-json',
  detail: 'Unexpected token',
  text: textValue,
  bytes: Buffer.byteLength(textValue),
});

describe('collectInvalidLines', () => {
  it('removes invalid items and attaches them to the exit item', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold<PipelineItem>('-a-b-c-d-x|', { a: ev('one'), b: bad(2), c: ev('two'), d: bad(4), x: exit() });
      expectObservable(source.pipe(collectInvalidLines())).toBe('-a---c---x|', {
        a: ev('one'),
        c: ev('two'),
        x: {
          ...exit(),
          invalidOutput: {
            lines: [
              { lineNumber: 2, reason: 'not-json', detail: 'Unexpected token', text: 'bad 2', bytes: 5, truncated: false },
              { lineNumber: 4, reason: 'not-json', detail: 'Unexpected token', text: 'bad 4', bytes: 5, truncated: false },
            ],
            omitted: 0,
          },
        },
      });
    });
  });

  it('keeps at most maxLines, each cut to maxLineBytes on a character boundary, and counts the rest', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold<PipelineItem>('-a-b-c-x|', { a: bad(1, 'ééééé'), b: bad(2), c: bad(3), x: exit() });
      expectObservable(source.pipe(collectInvalidLines({ maxLines: 1, maxLineBytes: 5 }))).toBe('-------x|', {
        x: {
          ...exit(),
          invalidOutput: {
            lines: [{ lineNumber: 1, reason: 'not-json', detail: 'Unexpected token', text: 'éé', bytes: 10, truncated: true }],
            omitted: 2,
          },
        },
      });
    });
  });

  it('marks a line that was already cut upstream (too long) as truncated', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const head: InvalidLineItem = { kind: 'invalid', lineNumber: 1, reason: 'too-long', detail: 'over', text: 'abc', bytes: 1e9 };
      expectObservable(cold<PipelineItem>('-a-x|', { a: head, x: exit() }).pipe(collectInvalidLines())).toBe('---x|', {
        x: expect.objectContaining({ invalidOutput: { lines: [expect.objectContaining({ text: 'abc', truncated: true, bytes: 1e9 })], omitted: 0 } }),
      });
    });
  });

  it('completes empty, stays silent on never, forwards errors, and stops at an early unsubscribe', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      expectObservable(cold<PipelineItem>('|').pipe(collectInvalidLines())).toBe('|');
      expectObservable(cold<PipelineItem>('-').pipe(collectInvalidLines())).toBe('-');
      expectObservable(cold<PipelineItem>('-a-#', { a: ev('e') }).pipe(collectInvalidLines())).toBe('-a-#', { a: ev('e') });
      const source = cold<PipelineItem>('-a-a-a|', { a: ev('e') });
      expectObservable(source.pipe(collectInvalidLines()), '^-!').toBe('-a-', { a: ev('e') });
      expectSubscriptions(source.subscriptions).toBe('^-!');
    });
  });

  it('keeps a separate collection for each subscription', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const collected = cold<PipelineItem>('-b-x|', { b: bad(1), x: exit() }).pipe(collectInvalidLines({ maxLines: 1 }));
      const expected = { x: expect.objectContaining({ invalidOutput: { lines: [expect.objectContaining({ lineNumber: 1 })], omitted: 0 } }) };
      expectObservable(collected).toBe('---x|', expected);
      expectObservable(collected).toBe('---x|', expected);
    });
  });

  it.each<[string, unknown]>([
    ['maxLines -1', { maxLines: -1 }],
    ['maxLines 1.5', { maxLines: 1.5 }],
    ['maxLines NaN', { maxLines: Number.NaN }],
    ['maxLines Infinity', { maxLines: Number.POSITIVE_INFINITY }],
    ['maxLines a string', { maxLines: '10' }],
    ['maxLineBytes 0', { maxLineBytes: 0 }],
    ['maxLineBytes 2.5', { maxLineBytes: 2.5 }],
    ['maxLineBytes a string', { maxLineBytes: '2048' }],
    ['options null', null],
  ])('throws a TypeError at call time for %s', (_name, options) => {
    expect(() => collectInvalidLines(options as CollectInvalidLinesOptions)).toThrow(TypeError);
    expect(() => collectInvalidLines(options as CollectInvalidLinesOptions)).toThrow(/^agent-rx: /);
  });

  it('accepts zero lines kept', () => {
    expect(() => collectInvalidLines({ maxLines: 0, maxLineBytes: 1 })).not.toThrow();
  });
});
