import { describe, expect, it } from '@jest/globals';
import { Subject, type SchedulerAction, type SchedulerLike, type Subscription } from 'rxjs';
import { throttleToolUpdates } from '../../lib/fleet/throttle-tool-updates.js';
import type { CliMessage } from '../../lib/index.js';
import { scheduler } from '../helpers/items.js';

// Call 1's output grows (a, b); call 2 has one update (c); d ends call 1; s and t pass as they are.
const update = (toolCallId: string, output: string): CliMessage => ({ type: 'tool.update', toolCallId, name: 'bash', output });
const values: Record<string, CliMessage> = {
  a: update('call-1', 'l'),
  b: update('call-1', 'li'),
  c: update('call-2', 'x'),
  d: { type: 'tool.completed', toolCallId: 'call-1', name: 'bash', output: 'line' },
  s: { type: 'assistant', text: 'done' },
  t: { type: 'terminal.completed', stopReason: 'end_turn' },
};
const throttled = () => throttleToolUpdates({ intervalMs: 5 });

// The operator takes no callback of the caller's: there is no throwing callback to route.
describe('throttleToolUpdates', () => {
  it('lets the latest update of each call through together, intervalMs after the first one was held', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-a-b-c-------|', values).pipe(throttled())).toBe('------(bc)---|', values);
    });
  });

  it('lets the held updates through before any other message, in the order their calls were first held', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-c-a-d------|', values).pipe(throttled())).toBe('-----(cad)--|', values);
    });
  });

  it('holds again after each release: at most one release per interval, however chatty the tool', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-a-b-a-b-a-b-|', values).pipe(throttled())).toBe('------a-----b|', values);
    });
  });

  it('passes every other message at once, unchanged', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-s-d-t|', values).pipe(throttled())).toBe('-s-d-t|', values);
    });
  });

  it('lets the held updates through when the source completes', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-a-c|', values).pipe(throttled())).toBe('----(ac|)', values);
    });
  });

  it('waits 250 ms on the async scheduler by default', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-a 300ms |', values).pipe(throttleToolUpdates())).toBe('- 250ms a 50ms |', values);
    });
  });

  it('completes empty, stays silent on never (releasing what it holds), and drops what it holds on an error', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('|', values).pipe(throttled())).toBe('|');
      expectObservable(cold('-', values).pipe(throttled())).toBe('-');
      expectObservable(cold('-a-', values).pipe(throttled())).toBe('------a-', values);
      expectObservable(cold('-a-#', values).pipe(throttled())).toBe('---#', values);
    });
  });

  it('stops at an early unsubscribe: the source is unsubscribed, and the wait for the held updates is cancelled', () => {
    const test = scheduler();
    const waits: Subscription[] = [];
    // The test scheduler, with every wait the operator schedules kept to be looked at.
    const schedule = (work: (this: SchedulerAction<unknown>, state?: unknown) => void, delay?: number, state?: unknown): Subscription => {
      const wait = test.schedule(work, delay, state);
      waits.push(wait);
      return wait;
    };
    const watched: SchedulerLike = { now: () => test.now(), schedule };
    let cancelled: boolean | undefined;
    test.run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-a-------|', values);
      expectObservable(source.pipe(throttleToolUpdates({ intervalMs: 5, scheduler: watched })), '^--!').toBe('---', values);
      expectSubscriptions(source.subscriptions).toBe('^--!');
      // Looked at after the unsubscribe (frame 3), before the wait would have ended (frame 6).
      test.schedule(() => {
        cancelled = waits[0]?.closed;
      }, 4);
    });
    expect(waits).toHaveLength(1);
    expect(cancelled).toBe(true);
  });

  it('keeps what it holds per subscription: a later subscriber holds only what it saw', () => {
    scheduler().run(({ hot, expectObservable }) => {
      const result = hot('-a-b-c-----|', values).pipe(throttled());
      expectObservable(result).toBe('------(bc)-|', values);
      expectObservable(result, '----^').toBe('----------c|', values);
    });
  });

  it('has emptied what it holds before it lets it through: an update pushed from downstream meanwhile is held for the next release', () => {
    const test = scheduler();
    const seen: [number, CliMessage][] = [];
    test.run(({ flush }) => {
      const source = new Subject<CliMessage>();
      source.pipe(throttled()).subscribe((message) => {
        seen.push([test.now(), message]);
        if (message === values['a']) source.next(values['c'] as CliMessage);
      });
      test.schedule(() => {
        source.next(values['a'] as CliMessage);
      }, 1);
      flush();
    });
    expect(seen).toEqual([
      [6, values['a']],
      [11, values['c']],
    ]);
  });

  it('throws a TypeError at call time for an interval that is not a finite number of ms >= 0', () => {
    for (const intervalMs of [-1, Number.NaN, Number.POSITIVE_INFINITY, '5' as unknown as number]) {
      expect(() => throttleToolUpdates({ intervalMs })).toThrow(TypeError);
    }
  });
});
