import { describe, expect, it } from '@jest/globals';
import { from, Subject } from 'rxjs';
import { snapshotToDelta, type AgentEvent, type PipelineItem, type SnapshotToDeltaOptions, type TextReading } from '../../lib/index.js';
import { ev, exit, scheduler, sourceMarble, text, withdraw } from '../helpers/items.js';

// A tiny dialect: `snap` events carry a snapshot, `delta` events a delta (and maybe a snapshot).
const read = (event: AgentEvent): TextReading | null => {
  const key = typeof event['key'] === 'string' ? event['key'] : 'm';
  const channel = event['channel'] === 'thought' ? 'thought' : 'assistant';
  const snapshot = event['text'] as string | undefined;
  if (event.type === 'snap') return { channel, key, snapshot: snapshot ?? '' };
  if (event.type === 'delta') return { channel, key, delta: event['delta'] as string, ...(snapshot === undefined ? {} : { snapshot }) };
  return null;
};
const snap = (value: string, key = 'm') => ev('snap', { text: value, key });

describe('snapshotToDelta', () => {
  it('emits the first snapshot whole, then only the new suffix of a growing snapshot', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold<PipelineItem>(sourceMarble('-(1a)-(2b)-(3c)-x|'), { a: snap('He'), b: snap('Hello'), c: snap('Hello!'), x: exit() });
      expectObservable(source.pipe(snapshotToDelta({ createReader: () => read }))).toBe('-(1a)-(2b)-(3c)-x|', {
        1: text('He'),
        2: text('llo'),
        3: text('!'),
        a: snap('He'),
        b: snap('Hello'),
        c: snap('Hello!'),
        x: exit(),
      });
    });
  });

  it('emits nothing for a stale or shorter replay, and withdraws before a diverged snapshot instead of doubling it', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold<PipelineItem>(sourceMarble('-(1a)-b-c-(23d)|'), { a: snap('Hello'), b: snap('Hello'), c: snap('Hel'), d: snap('Help!') });
      expectObservable(source.pipe(snapshotToDelta({ createReader: () => read }))).toBe('-(1a)-b-c-(23d)|', {
        1: text('Hello'),
        2: withdraw('lo'),
        3: text('p!'),
        a: snap('Hello'),
        b: snap('Hello'),
        c: snap('Hel'),
        d: snap('Help!'),
      });
    });
  });

  it('withdraws the text of later keys too when an earlier key diverges, then emits it again after the new text', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const values = { a: snap('one ', 'k1'), b: snap('two', 'k2'), c: snap('uno ', 'k1') };
      const result = cold<PipelineItem>(sourceMarble('-(1a)-(2b)-(345c)|'), values).pipe(snapshotToDelta({ createReader: () => read }));
      expectObservable(result).toBe('-(1a)-(2b)-(345c)|', { ...values, 1: text('one '), 2: text('two'), 3: withdraw('one two'), 4: text('uno '), 5: text('two') });
    });
  });

  it('prefers an explicit delta, even when the snapshot in the same event runs ahead', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const a = ev('delta', { delta: 'He', text: 'Hello' });
      const b = ev('delta', { delta: 'llo', text: 'Hello' });
      const c = snap('Hello');
      const source = cold<PipelineItem>(sourceMarble('-(1a)-(2b)-c|'), { a, b, c });
      expectObservable(source.pipe(snapshotToDelta({ createReader: () => read }))).toBe('-(1a)-(2b)-c|', { 1: text('He'), 2: text('llo'), a, b, c });
    });
  });

  it('keeps whitespace-only deltas', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const a = ev('delta', { delta: ' ' });
      const b = ev('delta', { delta: '\n' });
      expectObservable(cold<PipelineItem>(sourceMarble('-(1a)-(2b)|'), { a, b }).pipe(snapshotToDelta({ createReader: () => read }))).toBe('-(1a)-(2b)|', {
        1: text(' '),
        2: text('\n'),
        a,
        b,
      });
    });
  });

  it('keeps state across turns per key, so a message replayed after a tool turn is not emitted twice', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const values = { a: snap('First answer', 'm1'), b: snap('Second', 'm2'), c: snap('First answer', 'm1'), d: snap('Second part', 'm2') };
      const result = cold<PipelineItem>(sourceMarble('-(1a)-(2b)-c-(3d)|'), values).pipe(snapshotToDelta({ createReader: () => read }));
      expectObservable(result).toBe('-(1a)-(2b)-c-(3d)|', { ...values, 1: text('First answer'), 2: text('Second'), 3: text(' part') });
    });
  });

  it('tracks channels separately', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const a = ev('delta', { delta: 'hmm', channel: 'thought' });
      const b = ev('delta', { delta: 'hi' });
      expectObservable(cold<PipelineItem>(sourceMarble('-(1a)-(2b)|'), { a, b }).pipe(snapshotToDelta({ createReader: () => read }))).toBe('-(1a)-(2b)|', {
        1: text('hmm', 'thought'),
        2: text('hi'),
        a,
        b,
      });
    });
  });

  it('completes empty, stays silent on never, forwards errors, and stops at an early unsubscribe', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      expectObservable(cold<PipelineItem>('|').pipe(snapshotToDelta({ createReader: () => read }))).toBe('|');
      expectObservable(cold<PipelineItem>('-').pipe(snapshotToDelta({ createReader: () => read }))).toBe('-');
      expectObservable(cold<PipelineItem>('-a-#', { a: ev('other') }).pipe(snapshotToDelta({ createReader: () => read }))).toBe('-a-#', { a: ev('other') });
      const source = cold<PipelineItem>('-a----b-c|', { a: snap('a'), b: snap('ab'), c: snap('abc') });
      expectObservable(source.pipe(snapshotToDelta({ createReader: () => read })), '^--!').toBe('-(1a)-', { 1: text('a'), a: snap('a') });
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });

  it('starts fresh for every subscription', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const result = cold<PipelineItem>(sourceMarble('-(1a)-(2b)|'), { a: snap('ab'), b: snap('abc') }).pipe(snapshotToDelta({ createReader: () => read }));
      const expected = { 1: text('ab'), 2: text('c'), a: snap('ab'), b: snap('abc') };
      expectObservable(result).toBe('-(1a)-(2b)|', expected);
      expectObservable(result).toBe('-(1a)-(2b)|', expected);
    });
  });

  it('creates a reader per subscription when given a factory, for readers that count earlier events', () => {
    let created = 0;
    scheduler().run(({ cold, expectObservable }) => {
      // Each `block` event is the next block of one message: the reader numbers them.
      const create = () => {
        created += 1;
        let seen = 0;
        return (event: AgentEvent): TextReading | null => {
          if (event.type !== 'block') return null;
          seen += 1;
          return { channel: 'assistant', key: `m:${String(seen)}`, snapshot: event['text'] as string };
        };
      };
      const values = { a: ev('block', { text: 'one' }), b: ev('block', { text: 'two' }) };
      const result = cold<PipelineItem>(sourceMarble('-(1a)-(2b)|'), values).pipe(snapshotToDelta({ createReader: create }));
      const expected = { ...values, 1: text('one'), 2: text('two') };
      expectObservable(result).toBe('-(1a)-(2b)|', expected);
      expectObservable(result).toBe('-(1a)-(2b)|', expected);
    });
    expect(created).toBe(2);
  });

  it('forgets the oldest key beyond maxKeys', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const values = { a: snap('x', 'k1'), b: snap('y', 'k2'), c: snap('x', 'k1') };
      const result = cold<PipelineItem>(sourceMarble('-(1a)-(2b)-(1c)|'), values).pipe(snapshotToDelta({ createReader: () => read, maxKeys: 1 }));
      expectObservable(result).toBe('-(1a)-(2b)-(1c)|', { ...values, 1: text('x'), 2: text('y') });
    });
  });

  it('has updated its state when downstream re-enters synchronously', () => {
    const seen: string[] = [];
    const subject = new Subject<PipelineItem>();
    subject.pipe(snapshotToDelta({ createReader: () => read })).subscribe((item) => {
      seen.push(item.kind === 'text' ? item.text : `<${item.kind}>`);
      // On the first delta, push the next snapshot from inside next().
      if (item.kind === 'text' && item.text === 'ab') subject.next(snap('abc'));
    });
    subject.next(snap('ab'));
    expect(seen).toEqual(['ab', 'c', '<event>', '<event>']);
  });

  it('errors the stream with what the reader throws, at that event, emits nothing after, and unsubscribes the source', () => {
    const boom = new Error('reader bug');
    const throwing = (event: AgentEvent): TextReading | null => {
      if (event.type === 'boom') throw boom;
      return read(event);
    };
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold<PipelineItem>('-a----b-c-|', { a: snap('He'), b: ev('boom'), c: snap('Hello') });
      expectObservable(source.pipe(snapshotToDelta({ createReader: () => throwing }))).toBe('-(1a)-#', { 1: text('He'), a: snap('He') }, boom);
      expectSubscriptions(source.subscriptions).toBe('^-----!');
    });
  });

  it('errors the stream with a TypeError when the reader returns something that is not a reading', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold<PipelineItem>('-a-a|', { a: ev('any') });
      const result = source.pipe(snapshotToDelta({ createReader: () => () => undefined as unknown as null }));
      expectObservable(result).toBe('-#', {}, expect.any(TypeError));
      expectSubscriptions(source.subscriptions).toBe('^!');
    });
  });

  it('stops reading after the reader threw, even when a synchronous source goes on', () => {
    const boom = new Error('reader bug');
    const seen: string[] = [];
    const errors: unknown[] = [];
    from<PipelineItem[]>([snap('a'), ev('boom'), snap('ab'), snap('abc')])
      .pipe(
        snapshotToDelta({
          createReader: () => (event) => {
            seen.push(event.type);
            if (event.type === 'boom') throw boom;
            return read(event);
          },
        }),
      )
      .subscribe({ error: (error: unknown) => errors.push(error) });
    expect(errors).toEqual([boom]);
    expect(errors[0]).toBe(boom);
    expect(seen).toEqual(['snap', 'boom']);
  });

  it('errors on subscribe, without subscribing to the source, when the reader factory throws', () => {
    const boom = new Error('factory bug');
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold<PipelineItem>('-a|', { a: snap('x') });
      const create = (): never => {
        throw boom;
      };
      expectObservable(source.pipe(snapshotToDelta({ createReader: create }))).toBe('#', {}, boom);
      const notAReader = source.pipe(snapshotToDelta({ createReader: () => 'reader' as unknown as () => null }));
      expectObservable(notAReader).toBe('#', {}, new TypeError('agent-rx: what createReader() returns must be a function; got "reader"'));
      expectSubscriptions(source.subscriptions).toBe([]);
    });
  });

  it.each<[string, unknown]>([
    ['no options', undefined],
    ['no createReader', {}],
    ['createReader a string', { createReader: 'text' }],
    ['the old read option', { read }],
    ['replayedPrefix not a boolean', { createReader: () => read, replayedPrefix: 'yes' }],
    ['maxKeys 0', { createReader: () => read, maxKeys: 0 }],
    ['maxKeys -1', { createReader: () => read, maxKeys: -1 }],
    ['maxKeys 1.5', { createReader: () => read, maxKeys: 1.5 }],
    ['maxKeys NaN', { createReader: () => read, maxKeys: Number.NaN }],
    ['maxKeys Infinity', { createReader: () => read, maxKeys: Number.POSITIVE_INFINITY }],
    ['maxKeys a string', { createReader: () => read, maxKeys: '10' }],
  ])('throws a TypeError at call time for %s', (_name, options) => {
    expect(() => snapshotToDelta(options as SnapshotToDeltaOptions)).toThrow(TypeError);
    expect(() => snapshotToDelta(options as SnapshotToDeltaOptions)).toThrow(/^agent-rx: /);
  });
});
