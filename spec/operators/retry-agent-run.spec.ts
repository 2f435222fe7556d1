import { describe, expect, it } from '@jest/globals';
import { defer, filter, finalize, map, of, queueScheduler, takeUntil, type Observable } from 'rxjs';
import type { TestScheduler } from 'rxjs/testing';
import {
  isRunRetrying,
  retryAgentRun,
  RunRetryingSchema,
  type CliMessage,
  type RetryAgentRunOptions,
  type TerminalFailed,
} from '../../lib/index.js';
import { scheduler, terminalFailed } from '../helpers/items.js';

const failed = (agentError: string, extra: Partial<TerminalFailed> = {}): TerminalFailed =>
  terminalFailed({ message: `pi reported an error: ${agentError}`, agentError, ...extra });

const m: Record<string, CliMessage> = {
  s: { type: 'session.started', sessionId: 'S' },
  a: { type: 'assistant', text: 'Hi' },
  t: { type: 'tool.call', toolCallId: 'T1', name: 'bash', input: { command: 'touch x' } },
  u: { type: 'tool.completed', toolCallId: 'T1', name: 'bash', output: '' },
  c: { type: 'terminal.completed', stopReason: 'end_turn' },
  f: failed('429 rate limit exceeded'),
  g: failed('500 internal server error'),
  n: failed('401 invalid api key'),
};

const retrying = (attempt: number, delayMs: number, failure: CliMessage | undefined): CliMessage => ({
  type: 'run.retrying',
  attempt,
  delayMs,
  failure: failure as TerminalFailed,
});

// One cold observable per attempt, in order: attempt n subscribes to attempts[n - 1].
function attempts(...sources: readonly Observable<CliMessage>[]): Observable<CliMessage> {
  let started = 0;
  return defer(() => {
    const source = sources[Math.min(started, sources.length - 1)];
    started += 1;
    if (source === undefined) throw new Error('no attempts given');
    return source;
  });
}

// Virtual time, and a jitter that always lands in the middle of the window.
const virtual = (testScheduler: TestScheduler, extra: RetryAgentRunOptions = {}): RetryAgentRunOptions => ({
  scheduler: testScheduler,
  random: () => 0.5,
  ...extra,
});

describe('retryAgentRun', () => {
  it('swallows a retryable failure, says so with run.retrying, waits, and ends with the next attempt', () => {
    const testScheduler = scheduler();
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const first = cold('-s-(f|)', m);
      const second = cold('-s-a-(c|)', m);
      const result = attempts(first, second).pipe(retryAgentRun(virtual(testScheduler)));
      expectObservable(result).toBe('-s-r 499ms -s-a-(c|)', { ...m, r: retrying(2, 500, m['f']) });
      expectSubscriptions(first.subscriptions).toBe('^--!');
      expectSubscriptions(second.subscriptions).toBe('503ms ^----!');
    });
  });

  it('backs off exponentially with full jitter: the window doubles from 1 s for each further attempt', () => {
    const testScheduler = scheduler();
    testScheduler.run(({ cold, expectObservable }) => {
      const failing = cold('-(f|)', m);
      const run = () => attempts(failing, failing, failing, cold('-(c|)', m)).pipe(retryAgentRun(virtual(testScheduler, { maxAttempts: 4 })));
      // Windows 1 s, 2 s, 4 s; the jitter takes half of each.
      expectObservable(run()).toBe('-r 499ms -r 999ms -r 1999ms -(c|)', {
        ...m,
        r: expect.objectContaining({ type: 'run.retrying' }),
      });
      expectObservable(run().pipe(filter(isRunRetrying), map((message) => [message.attempt, message.delayMs]))).toBe(
        '-x 499ms -y 999ms -z 1999ms -|',
        { x: [2, 500], y: [3, 1000], z: [4, 2000] },
      );
    });
  });

  it('draws each delay uniformly from zero to the window, and caps the window at 30 s', () => {
    const testScheduler = scheduler();
    const longest: number[] = [];
    const shortest: number[] = [];
    testScheduler.run(({ cold, flush }) => {
      const failing = cold('-(f|)', m);
      failing
        .pipe(retryAgentRun({ scheduler: testScheduler, random: () => 1, maxAttempts: 9 }), filter(isRunRetrying))
        .subscribe((message) => longest.push(message.delayMs));
      failing
        .pipe(retryAgentRun({ scheduler: testScheduler, random: () => 0, maxAttempts: 3 }), filter(isRunRetrying))
        .subscribe((message) => shortest.push(message.delayMs));
      flush();
    });
    expect(longest).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
    expect(shortest).toEqual([0, 0]);
  });

  it('waits as long as a retry-after hint says, capped at 30 s, instead of the jitter', () => {
    const testScheduler = scheduler();
    testScheduler.run(({ cold, expectObservable }) => {
      const hinted = failed('429 rate limit exceeded', { retryAfterMs: 5000 });
      const result = attempts(cold('-(h|)', { h: hinted }), cold('-(c|)', m)).pipe(retryAgentRun(virtual(testScheduler)));
      expectObservable(result).toBe('-r 4999ms -(c|)', { ...m, r: retrying(2, 5000, hinted) });

      const long = failed('429 rate limit exceeded', { retryAfterMs: 120_000 });
      const capped = attempts(cold('-(h|)', { h: long }), cold('-(c|)', m)).pipe(retryAgentRun(virtual(testScheduler)));
      expectObservable(capped).toBe('-r 29999ms -(c|)', { ...m, r: retrying(2, 30_000, long) });
    });
  });

  it('takes a fixed delay, or asks a delay function with the attempt and the failure', () => {
    const testScheduler = scheduler();
    const asked: [number, string | undefined][] = [];
    testScheduler.run(({ cold, expectObservable }) => {
      const fixed = attempts(cold('-(f|)', m), cold('-(g|)', m), cold('-(c|)', m)).pipe(retryAgentRun(virtual(testScheduler, { delay: 10 })));
      expectObservable(fixed).toBe('-r 9ms -r 9ms -(c|)', {
        ...m,
        r: expect.objectContaining({ type: 'run.retrying', delayMs: 10 }),
      });
      const chosen = attempts(cold('-(f|)', m), cold('-(g|)', m), cold('-(c|)', m)).pipe(
        retryAgentRun(
          virtual(testScheduler, {
            delay: (attempt, failure) => {
              asked.push([attempt, failure.agentError]);
              return attempt * 100;
            },
          }),
        ),
      );
      expectObservable(chosen).toBe('-x 199ms -y 299ms -(c|)', { ...m, x: retrying(2, 200, m['f']), y: retrying(3, 300, m['g']) });
    });
    expect(asked).toEqual([
      [2, '429 rate limit exceeded'],
      [3, '500 internal server error'],
    ]);
  });

  it('forwards the last failure once maxAttempts attempts have failed', () => {
    const testScheduler = scheduler();
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const failing = cold('-(f|)', m);
      const result = attempts(failing).pipe(retryAgentRun(virtual(testScheduler, { maxAttempts: 2, delay: 5 })));
      expectObservable(result).toBe('-r 4ms -(f|)', { ...m, r: retrying(2, 5, m['f']) });
      expectSubscriptions(failing.subscriptions).toBe(['^!', '6ms ^!']);

      const once = cold('-(f|)', m);
      expectObservable(attempts(once).pipe(retryAgentRun(virtual(testScheduler, { maxAttempts: 1 })))).toBe('-(f|)', m);
      expectSubscriptions(once.subscriptions).toBe('^!');
    });
  });

  it('passes a non-retryable failure through on the first attempt, untouched', () => {
    const testScheduler = scheduler();
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const unauthorized = cold('-s-(n|)', m);
      expectObservable(attempts(unauthorized).pipe(retryAgentRun(virtual(testScheduler)))).toBe('-s-(n|)', m);
      expectSubscriptions(unauthorized.subscriptions).toBe('^--!');
    });
  });

  it('asks a custom classifier instead of the default one', () => {
    const testScheduler = scheduler();
    const seen: TerminalFailed[] = [];
    testScheduler.run(({ cold, expectObservable }) => {
      const isRetryable = (failure: TerminalFailed): boolean => {
        seen.push(failure);
        return failure.agentError?.startsWith('401') === true;
      };
      const result = attempts(cold('-(n|)', m), cold('-(f|)', m)).pipe(retryAgentRun(virtual(testScheduler, { isRetryable, delay: 0 })));
      expectObservable(result).toBe('-r(f|)', { ...m, r: retrying(2, 0, m['n']) });
    });
    expect(seen).toEqual([m['n'], m['f']]);
  });

  it('does not retry an attempt in which the agent used a tool, unless retryAfterToolUse is set', () => {
    const testScheduler = scheduler();
    testScheduler.run(({ cold, expectObservable }) => {
      const afterTool = cold('-t-u-(f|)', m);
      expectObservable(attempts(afterTool).pipe(retryAgentRun(virtual(testScheduler)))).toBe('-t-u-(f|)', m);
      const announced = cold('-t-(f|)', m);
      expectObservable(attempts(announced).pipe(retryAgentRun(virtual(testScheduler)))).toBe('-t-(f|)', m);
      const allowed = attempts(cold('-t-u-(f|)', m), cold('-(c|)', m)).pipe(retryAgentRun(virtual(testScheduler, { retryAfterToolUse: true, delay: 1 })));
      expectObservable(allowed).toBe('-t-u-r-(c|)', { ...m, r: retrying(2, 1, m['f']) });
    });
  });

  it('judges tool use per attempt: a clean attempt after a retried one is retried again', () => {
    const testScheduler = scheduler();
    testScheduler.run(({ cold, expectObservable }) => {
      const result = attempts(cold('-(f|)', m), cold('-(g|)', m), cold('-t-(f|)', m), cold('-(c|)', m)).pipe(
        retryAgentRun(virtual(testScheduler, { maxAttempts: 5, delay: 1 })),
      );
      expectObservable(result).toBe('-r-r-t-(f|)', { ...m, r: expect.objectContaining({ type: 'run.retrying' }) });
    });
  });

  it('starts no further attempt when unsubscribed during the wait', () => {
    const testScheduler = scheduler();
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const first = cold('-s-(f|)', m);
      const second = cold('-(c|)', m);
      const result = attempts(first, second).pipe(retryAgentRun(virtual(testScheduler)));
      expectObservable(result, '^ 200ms !').toBe('-s-r', { ...m, r: retrying(2, 500, m['f']) });
      expectSubscriptions(first.subscriptions).toBe('^--!');
      expectSubscriptions(second.subscriptions).toBe([]);
    });
  });

  it('starts no wait when the subscriber leaves on run.retrying itself', () => {
    const testScheduler = scheduler();
    testScheduler.run(({ cold, flush }) => {
      const second = cold('-(c|)', m);
      const seen: CliMessage[] = [];
      const subscription = attempts(cold('-(f|)', m), second)
        .pipe(retryAgentRun(virtual(testScheduler)))
        .subscribe((message) => {
          seen.push(message);
          if (message.type === 'run.retrying') subscription.unsubscribe();
        });
      flush();
      expect(seen.map((message) => message.type)).toEqual(['run.retrying']);
      expect(second.subscriptions).toEqual([]);
      expect(subscription.closed).toBe(true);
    });
  });

  it('unsubscribes the running attempt when unsubscribed mid-attempt, and emits nothing after', () => {
    const testScheduler = scheduler();
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const first = cold('-(f|)', m);
      const second = cold('-s-a-a-(c|)', m);
      const result = attempts(first, second).pipe(retryAgentRun(virtual(testScheduler, { delay: 10 })));
      expectObservable(result, '^ 14ms !').toBe('-r 9ms -s-a', { ...m, r: retrying(2, 10, m['f']) });
      expectSubscriptions(second.subscriptions).toBe('11ms ^---!');
    });
  });

  it('completes a source that ends without a terminal, stays silent on never, and forwards errors without retrying', () => {
    const testScheduler = scheduler();
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      expectObservable(cold<CliMessage>('|').pipe(retryAgentRun(virtual(testScheduler)))).toBe('|');
      expectObservable(cold('-s-a|', m).pipe(retryAgentRun(virtual(testScheduler)))).toBe('-s-a|', m);
      expectObservable(cold<CliMessage>('-').pipe(retryAgentRun(virtual(testScheduler)))).toBe('-');
      const erroring = cold('-s-#', m, new Error('boom'));
      expectObservable(erroring.pipe(retryAgentRun(virtual(testScheduler)))).toBe('-s-#', m, new Error('boom'));
      expectSubscriptions(erroring.subscriptions).toBe('^--!');
    });
  });

  it('ends with the terminal message, dropping anything a source emits after it', () => {
    const testScheduler = scheduler();
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const chatty = cold('-c-a-|', m);
      expectObservable(chatty.pipe(retryAgentRun(virtual(testScheduler)))).toBe('-(c|)', m);
      expectSubscriptions(chatty.subscriptions).toBe('^!');
      const afterFailure = attempts(cold('-f-a-a-|', m), cold('-(c|)', m)).pipe(retryAgentRun(virtual(testScheduler, { delay: 10 })));
      expectObservable(afterFailure).toBe('-r 9ms -(c|)', { ...m, r: retrying(2, 10, m['f']) });
    });
  });

  it('keeps a separate attempt count for each subscription', () => {
    const testScheduler = scheduler();
    testScheduler.run(({ cold, expectObservable }) => {
      const failing = cold('-(f|)', m);
      const result = failing.pipe(retryAgentRun(virtual(testScheduler, { maxAttempts: 2, delay: 3 })));
      const expected = { ...m, r: retrying(2, 3, m['f']) };
      expectObservable(result).toBe('-r 2ms -(f|)', expected);
      expectObservable(result).toBe('-r 2ms -(f|)', expected);
    });
  });

  it('emits run.retrying messages that match their schema', () => {
    const testScheduler = scheduler();
    const seen: CliMessage[] = [];
    testScheduler.run(({ cold, flush }) => {
      attempts(cold('-(f|)', m), cold('-(c|)', m)).pipe(retryAgentRun(virtual(testScheduler))).subscribe((message) => seen.push(message));
      flush();
    });
    expect(seen).toHaveLength(2);
    expect(RunRetryingSchema.safeParse(seen[0]).success).toBe(true);
  });

  it('never overlaps attempts, even with a synchronous source and a synchronous scheduler', () => {
    let active = 0;
    let most = 0;
    let started = 0;
    const source = defer(() => {
      started += 1;
      active += 1;
      most = Math.max(most, active);
      const messages = started < 3 ? [m['s'], m['f']] : [m['s'], m['c']];
      return of(...(messages as CliMessage[])).pipe(
        finalize(() => {
          active -= 1;
        }),
      );
    });
    const seen: string[] = [];
    source.pipe(retryAgentRun({ scheduler: queueScheduler, delay: 0 })).subscribe((message) => seen.push(message.type));
    expect(seen).toEqual(['session.started', 'run.retrying', 'session.started', 'run.retrying', 'session.started', 'terminal.completed']);
    expect(started).toBe(3);
    expect(most).toBe(1);
    expect(active).toBe(0);
  });

  it('ends a wait on takeUntil(shutdown$) and starts no further attempt', () => {
    const testScheduler = scheduler();
    testScheduler.run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      const first = cold('-s-(f|)', m);
      const second = cold('-(c|)', m);
      const shutdown = hot('-- 200ms x');
      const result = attempts(first, second).pipe(retryAgentRun(virtual(testScheduler)), takeUntil(shutdown));
      expectObservable(result).toBe('-s-r 198ms |', { ...m, r: retrying(2, 500, m['f']) });
      expectSubscriptions(first.subscriptions).toBe('^--!');
      expectSubscriptions(second.subscriptions).toBe([]);
    });
  });

  it('errors the stream with what the classifier throws, emits nothing after, and starts no attempt', () => {
    const testScheduler = scheduler();
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const boom = new Error('classifier bug');
      const first = cold('-s-f-a-|', m);
      const second = cold('-(c|)', m);
      const isRetryable = (): boolean => {
        throw boom;
      };
      expectObservable(attempts(first, second).pipe(retryAgentRun(virtual(testScheduler, { isRetryable })))).toBe('-s-#', m, boom);
      expectSubscriptions(first.subscriptions).toBe('^--!');
      expectSubscriptions(second.subscriptions).toBe([]);
    });
  });

  it('errors the stream with what the delay function throws, before run.retrying, and starts no attempt', () => {
    const testScheduler = scheduler();
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const boom = new Error('delay bug');
      const first = cold('-s-f-a-|', m);
      const second = cold('-(c|)', m);
      const delay = (): number => {
        throw boom;
      };
      expectObservable(attempts(first, second).pipe(retryAgentRun(virtual(testScheduler, { delay })))).toBe('-s-#', m, boom);
      expectSubscriptions(first.subscriptions).toBe('^--!');
      expectSubscriptions(second.subscriptions).toBe([]);
    });
  });

  it.each([
    ['negative', -1, '-1'],
    ['NaN', Number.NaN, 'NaN'],
    ['infinite', Number.POSITIVE_INFINITY, 'Infinity'],
    ['not a number', '5' as unknown as number, '5'],
  ])('errors the stream with a TypeError when the delay function returns a %s delay', (_name, value, shownValue) => {
    const testScheduler = scheduler();
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const first = cold('-(f|)', m);
      const second = cold('-(c|)', m);
      expectObservable(attempts(first, second).pipe(retryAgentRun(virtual(testScheduler, { delay: () => value })))).toBe(
        '-#',
        m,
        new TypeError(`agent-rx: delay() must be a finite number of ms >= 0; got ${shownValue}`),
      );
      expectSubscriptions(first.subscriptions).toBe('^!');
      expectSubscriptions(second.subscriptions).toBe([]);
    });
  });

  it('errors the stream with what random throws, or with a TypeError when it returns a number out of [0, 1]', () => {
    const testScheduler = scheduler();
    testScheduler.run(({ cold, expectObservable }) => {
      const boom = new Error('no entropy');
      const random = (): number => {
        throw boom;
      };
      expectObservable(cold('-s-f-a|', m).pipe(retryAgentRun({ scheduler: testScheduler, random }))).toBe('-s-#', m, boom);
      expectObservable(cold('-(f|)', m).pipe(retryAgentRun({ scheduler: testScheduler, random: () => Number.NaN }))).toBe(
        '-#',
        m,
        new TypeError('agent-rx: random() must return a number from 0 to 1; got NaN'),
      );
      expectObservable(cold('-(f|)', m).pipe(retryAgentRun({ scheduler: testScheduler, random: () => 2 }))).toBe(
        '-#',
        m,
        new TypeError('agent-rx: random() must return a number from 0 to 1; got 2'),
      );
    });
  });

  it('throws nothing out of the source\'s observer: an error from the classifier reaches the error callback', () => {
    const boom = new Error('classifier bug');
    const errors: unknown[] = [];
    of(m['f'] as CliMessage)
      .pipe(
        retryAgentRun({
          isRetryable: () => {
            throw boom;
          },
        }),
      )
      .subscribe({ error: (error: unknown) => errors.push(error) });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBe(boom);
  });

  it.each<[string, unknown]>([
    ['maxAttempts 0', { maxAttempts: 0 }],
    ['maxAttempts -1', { maxAttempts: -1 }],
    ['maxAttempts 1.5', { maxAttempts: 1.5 }],
    ['maxAttempts NaN', { maxAttempts: Number.NaN }],
    ['delay -1', { delay: -1 }],
    ['delay NaN', { delay: Number.NaN }],
    ['delay Infinity', { delay: Number.POSITIVE_INFINITY }],
    ['delay a string', { delay: '10' }],
    ['isRetryable not a function', { isRetryable: 'yes' }],
    ['retryAfterToolUse not a boolean', { retryAfterToolUse: 1 }],
    ['random not a function', { random: 0.5 }],
    ['scheduler without schedule', { scheduler: { now: () => 0 } }],
    ['scheduler not an object', { scheduler: 'async' }],
    ['options null', null],
  ])('throws a TypeError at call time for %s', (_name, options) => {
    expect(() => retryAgentRun(options as RetryAgentRunOptions)).toThrow(TypeError);
    expect(() => retryAgentRun(options as RetryAgentRunOptions)).toThrow(/^agent-rx: /);
  });

  it('accepts Infinity attempts, a zero delay and any SchedulerLike', () => {
    expect(() => retryAgentRun({ maxAttempts: Number.POSITIVE_INFINITY, delay: 0 })).not.toThrow();
    expect(() => retryAgentRun({ scheduler: queueScheduler })).not.toThrow();
    expect(() => retryAgentRun({ scheduler: { now: () => 0, schedule: queueScheduler.schedule.bind(queueScheduler) } })).not.toThrow();
  });
});
