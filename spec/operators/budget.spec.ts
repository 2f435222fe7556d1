import { describe, expect, it } from '@jest/globals';
import { Observable, of, Subject, type Subscriber } from 'rxjs';
import { budget, isRetryableFailure, TerminalFailedSchema, TurnFailedSchema, type BudgetExceeded, type CliMessage, type SessionMessage, type TerminalFailed } from '../../lib/index.js';
import { currentRunScope, type RunControl } from '../../lib/process/run-scope.js';
import { scheduler } from '../helpers/items.js';

const m: Record<string, CliMessage> = {
  s: { type: 'session.started', sessionId: 'S' },
  a: { type: 'assistant', text: 'abcdefgh' },
  t: { type: 'tool.call', toolCallId: 'T1', name: 'bash', input: null },
  u: { type: 'tool.call', toolCallId: 'T2', name: 'bash', input: null },
  o: { type: 'tool.completed', toolCallId: 'T1', name: 'bash', output: '' },
  c: { type: 'terminal.completed', stopReason: 'end_turn', usage: { inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0, totalTokens: 15 } },
};

// The budget's own terminal for a stream it could not stop gracefully (no process under it).
const ended = (exceeded: BudgetExceeded): TerminalFailed =>
  expect.objectContaining({ type: 'terminal.failed', reason: 'budget', budget: exceeded }) as unknown as TerminalFailed;

describe('budget: a run', () => {
  it('passes a run within its limits through unchanged, and completes with it', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-s-a-t-o-(c|)', m);
      expectObservable(source.pipe(budget({ tokens: 1000, toolCalls: 1 }))).toBe('-s-a-t-o-(c|)', m);
      expectSubscriptions(source.subscriptions).toBe('^--------!');
    });
  });

  it('completes an empty stream, and passes an error through', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<CliMessage>('|').pipe(budget({ toolCalls: 0 }))).toBe('|');
      expectObservable(cold('-s-#', m, new Error('boom')).pipe(budget({ toolCalls: 0 }))).toBe('-s-#', m, new Error('boom'));
    });
  });

  it('ends a stream it cannot stop gracefully at the call after the last allowed one: unsubscribed, then its own terminal with the figures', () => {
    const testScheduler = scheduler();
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-s-t-o-u-a-(c|)', m);
      const spent = { tokens: 0, wallMs: 7, toolCalls: 2, turns: 0, estimatedTokens: 0 };
      expectObservable(source.pipe(budget({ toolCalls: 1, scheduler: testScheduler }))).toBe('-s-t-o-(u f|)', {
        ...m,
        f: ended({ limit: 'toolCalls', max: 1, used: 2, per: 'total', spent }),
      });
      expectSubscriptions(source.subscriptions).toBe('^------!');
    });
  });

  it('estimates the tokens of streamed text until the agent reports them (4 characters a token)', () => {
    const testScheduler = scheduler();
    testScheduler.run(({ cold, expectObservable }) => {
      // 8 characters: 2 tokens; the third `a` makes 6 > 5.
      const source = cold('-a-a-a-a-(c|)', m);
      const spent = { tokens: 6, wallMs: 5, toolCalls: 0, turns: 0, estimatedTokens: 6 };
      expectObservable(source.pipe(budget({ tokens: 5, scheduler: testScheduler }))).toBe('-a-a-(a f|)', { ...m, f: ended({ limit: 'tokens', max: 5, used: 6, per: 'total', spent }) });
    });
  });

  it('ends the run when its wall time runs out, on the given scheduler', () => {
    const testScheduler = scheduler();
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-s 100ms a-(c|)', m);
      const spent = { tokens: 0, wallMs: 50, toolCalls: 0, turns: 0, estimatedTokens: 0 };
      expectObservable(source.pipe(budget({ wallMs: 50, scheduler: testScheduler }))).toBe('-s 48ms (f|)', { ...m, f: ended({ limit: 'wallMs', max: 50, used: 50, per: 'total', spent }) });
      expectSubscriptions(source.subscriptions).toBe('^ 49ms !');
    });
  });

  it('cancels its timer when unsubscribed early', () => {
    const testScheduler = scheduler();
    testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-s-a 100ms (c|)', m);
      // 8 characters written: 2 tokens at $10 per million output tokens.
      expectObservable(source.pipe(budget({ wallMs: 1000, costUsd: 1, price: { input: 1, output: 10 }, scheduler: testScheduler })), '^---!').toBe('-s-a', m);
      expectSubscriptions(source.subscriptions).toBe('^---!');
    });
    expect(testScheduler.actions).toHaveLength(0);
  });

  it("prices what streamed with the caller's price until the agent reports its usage", () => {
    const testScheduler = scheduler();
    testScheduler.run(({ cold, expectObservable }) => {
      // 8 characters written: 2 tokens at $10 per million output tokens, $0.00002 > $0.00001.
      const source = cold('-s-a-(c|)', m);
      const spent = { tokens: 2, costUsd: 0.00002, wallMs: 3, toolCalls: 0, turns: 0, estimatedTokens: 2 };
      expectObservable(source.pipe(budget({ costUsd: 0.00001, price: { input: 1, output: 10 }, scheduler: testScheduler }))).toBe('-s-(a f|)', {
        ...m,
        f: ended({ limit: 'costUsd', max: 0.00001, used: 0.00002, per: 'total', spent }),
      });
    });
  });

  describe('prices by model', () => {
    // Two reported tokens in, one out; the prices make them cost 1, 2 or 3 cents.
    const usage = { inputTokens: 2, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0, totalTokens: 3 };
    const run = (model: string | undefined): SessionMessage[] => [
      { type: 'session.started', sessionId: 'S', ...(model === undefined ? {} : { model }) },
      { type: 'turn.started', turn: 1, prompt: 'a' },
      { type: 'turn.completed', turn: 1, stopReason: 'end_turn', usage },
      { type: 'turn.started', turn: 2, prompt: 'b' },
    ];
    const prices = {
      'claude-sonnet': { input: 5000, output: 0 },
      'claude-sonnet-4-5': { input: 2500, output: 10_000 },
      'gpt-5': { input: 0, output: 30_000 },
    };
    const costOf = (messages: readonly SessionMessage[], options: Parameters<typeof budget>[0]): number | undefined => {
      const seen: SessionMessage[] = [];
      // A $0.0001 budget over a session whose first turn costs more: the second turn is ended, and the terminal's figures say what the first cost.
      of(...messages)
        .pipe(budget(options))
        .subscribe((message) => seen.push(message));
      const failed = seen.find((message): message is TerminalFailed => message.type === 'terminal.failed');
      return failed?.budget?.spent.costUsd;
    };

    it('prices the model the agent says it uses by its id, else by the longest id it starts with, else by `price`', () => {
      expect(costOf(run('gpt-5'), { costUsd: 0.0001, prices })).toBeCloseTo(0.03, 10);
      // `claude-sonnet-4-5-20250929` starts with both `claude-sonnet` and `claude-sonnet-4-5`: the longer one prices it.
      expect(costOf(run('claude-sonnet-4-5-20250929'), { costUsd: 0.0001, prices })).toBeCloseTo(0.015, 10);
      expect(costOf(run('claude-sonnet-3'), { costUsd: 0.0001, prices })).toBeCloseTo(0.01, 10);
      expect(costOf(run('qwen3-coder'), { costUsd: 0.0001, prices, price: { input: 10_000, output: 10_000 } })).toBeCloseTo(0.03, 10);
    });

    it('stops a run whose model has no price as it starts, saying which model, when the agent reports no cost', () => {
      const testScheduler = scheduler();
      testScheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
        const source = cold<CliMessage>('-s-a-(c|)', { ...m, s: { type: 'session.started', sessionId: 'S', model: 'llama-4' } });
        const spent = { tokens: 0, wallMs: 1, toolCalls: 0, turns: 0, estimatedTokens: 0 };
        expectObservable(source.pipe(budget({ costUsd: 1, tokens: 100, prices, scheduler: testScheduler }))).toBe('-(s f|)', {
          s: { type: 'session.started', sessionId: 'S', model: 'llama-4' },
          f: ended({ limit: 'costUsd', max: 1, used: 0, per: 'total', spent, unpriced: { model: 'llama-4' } }),
        });
        expectSubscriptions(source.subscriptions).toBe('^!');
      });
      const seen: SessionMessage[] = [];
      of(...run(undefined))
        .pipe(budget({ costUsd: 1, prices }))
        .subscribe((message) => seen.push(message));
      const failed = seen.at(-1) as TerminalFailed;
      expect(failed.budget?.unpriced).toEqual({ model: null });
      expect(failed.message).toMatch(/budget.prices has no price for the model \(neither the agent nor the run named it\)/);
      expect(TerminalFailedSchema.safeParse(failed).success).toBe(true);
    });

    it('needs no price for a model when no cost limit is set, and refuses a table that is not one at call time', () => {
      const seen: SessionMessage[] = [];
      of(...run('llama-4'))
        .pipe(budget({ tokens: 100, prices }))
        .subscribe((message) => seen.push(message));
      expect(seen.map((message) => message.type)).toEqual(['session.started', 'turn.started', 'turn.completed', 'turn.started']);
      expect(() => budget({ costUsd: 1, prices: { 'gpt-5': { input: 1 } as never } })).toThrow(/budget.prices\["gpt-5"\].output must be a number/);
      expect(() => budget({ costUsd: 1, prices: [] as never })).toThrow(/budget.prices must be an object of prices by model id/);
    });
  });

  it('keeps nothing between two subscriptions: each counts its own tool calls', () => {
    const testScheduler = scheduler();
    testScheduler.run(({ cold, expectObservable }) => {
      const budgeted = cold('-t-(c|)', m).pipe(budget({ toolCalls: 1, scheduler: testScheduler }));
      expectObservable(budgeted).toBe('-t-(c|)', m);
      expectObservable(budgeted).toBe('-t-(c|)', m);
    });
  });

  it("counts the cost at the caller's price, which may end a session's next turn as it starts", () => {
    const testScheduler = scheduler();
    const messages: SessionMessage[] = [];
    const done = { type: 'terminal.completed', stopReason: 'end_turn', usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0, totalTokens: 2, cost: 0.5 } } as const;
    // One turn of a session uses 2 tokens at $250,000 a million: $0.50, so the next turn starts over the $0.40 budget, and is ended.
    const session = of<SessionMessage[]>(
      { type: 'turn.started', turn: 1, prompt: 'a' },
      { type: 'turn.completed', turn: 1, stopReason: 'end_turn', usage: done.usage },
      { type: 'turn.started', turn: 2, prompt: 'b' },
      { type: 'assistant', text: 'late' },
    );
    session.pipe(budget({ costUsd: 0.4, price: { input: 250_000, output: 250_000 }, scheduler: testScheduler })).subscribe((message) => messages.push(message));
    const failed = messages.find((message) => message.type === 'terminal.failed');
    expect(failed?.budget).toMatchObject({ limit: 'costUsd', max: 0.4, used: 0.5, per: 'total' });
    expect(messages.map((message) => message.type)).toEqual(['turn.started', 'turn.completed', 'turn.started', 'turn.failed', 'terminal.failed']);
  });

  it('refuses, at call time, limits it cannot measure or that make no sense', () => {
    expect(() => budget({})).toThrow(/at least one limit/);
    expect(() => budget({ costUsd: 1 })).toThrow(/budget.costUsd needs a price/);
    expect(() => budget({ turns: 2, per: 'turn' })).toThrow(/cannot be a limit per turn/);
    expect(() => budget({ tokens: 0 })).toThrow(/budget.tokens must be a number > 0/);
    expect(() => budget({ toolCalls: 1.5 })).toThrow(/budget.toolCalls must be a whole number/);
    expect(() => budget({ wallMs: 2 ** 31 })).toThrow(/budget.wallMs must be a number of ms/);
    expect(() => budget({ tokens: 5, price: { input: 1, output: -1 } })).toThrow(/budget.price.output/);
    expect(() => budget({ token: 5 } as never)).toThrow(/budget has no option "token"/);
  });

  it("is never retried by isRetryableFailure, and its terminal validates", () => {
    let terminal: CliMessage | undefined;
    of<CliMessage[]>(m['t'] as CliMessage, m['u'] as CliMessage).pipe(budget({ toolCalls: 1 })).subscribe((message) => (terminal = message));
    expect(TerminalFailedSchema.parse(terminal)).toMatchObject({ reason: 'budget' });
    expect(isRetryableFailure(terminal as TerminalFailed)).toBe(false);
    expect((terminal as TerminalFailed).message).toBe('the budget of 1 tool call was spent (2 tool calls used): the run was ended');
  });
});

// A source that attaches a control to the scope it is subscribed in, as the process layer and sessions do.
function controlled<T>(emit: (subscriber: Subscriber<T>) => void, control: RunControl): Observable<T> {
  return new Observable<T>((subscriber) => {
    const detach = currentRunScope()?.attach(control);
    emit(subscriber);
    return () => detach?.();
  });
}

describe('budget: what it asks of the source under it', () => {
  it('asks a process run to stop for the budget, and passes on what it says until its terminal', () => {
    const causes: unknown[] = [];
    const live = new Subject<CliMessage>();
    const messages: CliMessage[] = [];
    controlled<CliMessage>((subscriber) => live.subscribe(subscriber), { stop: (cause) => causes.push(cause) })
      .pipe(budget({ toolCalls: 0 }))
      .subscribe((message) => messages.push(message));
    live.next(m['t'] as CliMessage);
    live.next(m['t'] as CliMessage);
    expect(causes).toEqual([{ kind: 'budget', exceeded: expect.objectContaining({ limit: 'toolCalls', max: 0, used: 1 }) }]);
    live.next({ type: 'terminal.failed', reason: 'budget', message: 'stopped' } as TerminalFailed);
    expect(messages.map((message) => message.type)).toEqual(['tool.call', 'tool.call', 'terminal.failed']);
  });

  it("aborts a session's turn at its per-turn limit, and the next turn has the limit afresh", () => {
    const aborted: BudgetExceeded[] = [];
    const live = new Subject<SessionMessage>();
    const messages: SessionMessage[] = [];
    controlled<SessionMessage>((subscriber) => live.subscribe(subscriber), {
      abortTurn: (exceeded) => {
        aborted.push(exceeded);
        return true;
      },
    })
      .pipe(budget({ toolCalls: 1, per: 'turn' }))
      .subscribe((message) => messages.push(message));
    const call = m['t'] as CliMessage;
    live.next({ type: 'turn.started', turn: 1, prompt: 'a' });
    live.next(call);
    live.next(call);
    live.next(call);
    expect(aborted).toEqual([expect.objectContaining({ limit: 'toolCalls', max: 1, used: 2, per: 'turn' })]);
    live.next({ type: 'turn.failed', turn: 1, reason: 'budget', message: 'aborted' });
    live.next({ type: 'turn.started', turn: 2, prompt: 'b' });
    live.next(call);
    live.next({ type: 'turn.completed', turn: 2, stopReason: 'end_turn' });
    expect(aborted).toHaveLength(1);
    expect(messages).toHaveLength(8);
  });

  it('aborts every turn past `turns` as it starts, and the session goes on', () => {
    const aborted: BudgetExceeded[] = [];
    const live = new Subject<SessionMessage>();
    controlled<SessionMessage>((subscriber) => live.subscribe(subscriber), { abortTurn: (exceeded) => aborted.push(exceeded) > 0 }).pipe(budget({ turns: 1 })).subscribe();
    live.next({ type: 'turn.started', turn: 1, prompt: 'a' });
    live.next({ type: 'turn.completed', turn: 1, stopReason: 'end_turn' });
    live.next({ type: 'turn.started', turn: 2, prompt: 'b' });
    live.next({ type: 'turn.failed', turn: 2, reason: 'budget', message: 'aborted' });
    live.next({ type: 'turn.started', turn: 3, prompt: 'c' });
    expect(aborted.map((exceeded) => [exceeded.limit, exceeded.used])).toEqual([
      ['turns', 2],
      ['turns', 3],
    ]);
  });

  it('makes the scope per subscription, and nests: an inner budget\'s source is reachable from the outer one', () => {
    const stops: string[] = [];
    const source = controlled<CliMessage>((subscriber) => {
      subscriber.next(m['t'] as CliMessage);
      subscriber.next(m['u'] as CliMessage);
    }, { stop: () => stops.push('stop') });
    source.pipe(budget({ tokens: 1000 }), budget({ toolCalls: 1 })).subscribe();
    expect(stops).toEqual(['stop']);
    expect(currentRunScope()).toBeUndefined();
  });

  it('gives turn.failed and terminal.failed that validate when a session cannot abort its turn', () => {
    const messages: SessionMessage[] = [];
    of<SessionMessage[]>({ type: 'turn.started', turn: 1, prompt: 'a' }, m['t'] as CliMessage, m['u'] as CliMessage)
      .pipe(budget({ toolCalls: 1 }))
      .subscribe((message) => messages.push(message));
    expect(messages.map((message) => message.type)).toEqual(['turn.started', 'tool.call', 'tool.call', 'turn.failed', 'terminal.failed']);
    expect(TurnFailedSchema.parse(messages[3])).toMatchObject({ reason: 'budget', budget: { limit: 'toolCalls' } });
  });
});
