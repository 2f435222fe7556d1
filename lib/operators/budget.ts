import { asyncScheduler, Observable, Subscription, type SchedulerLike } from 'rxjs';
import { BUDGET_LIMITS, type BudgetExceeded, type BudgetLimit, type BudgetSpent, type SessionMessage, type Usage } from '../messages.js';
import { currentRunScope, RunScope } from '../process/run-scope.js';
import { terminalFailed } from '../terminal-failed.js';
import { budgetText } from './budget-text.js';

/** A model's price in USD per million tokens; cache tokens cost the input price unless given. */
export interface TokenPrice {
  readonly input: number;
  readonly output: number;
  readonly cacheRead?: number;
  readonly cacheWrite?: number;
}

/** The limits of a {@link budget}: at least one. */
export interface BudgetLimits {
  /** Tokens, as the agent reports them (`usage.totalTokens`), and between reports estimated from the text it streams. */
  readonly tokens?: number;
  /** USD: from `price` or `prices` (what streamed since the last report too), else the agent's own figure (`usage.cost`). Needs a price in the operator. */
  readonly costUsd?: number;
  /** Wall time in ms, from the subscription (or, `per: 'turn'`, from each turn's start). */
  readonly wallMs?: number;
  /** Tool calls (`tool.call`): the call after the last allowed one crosses it. */
  readonly toolCalls?: number;
  /** A session's turns (`turn.started`): the turn after the last allowed one is aborted. A run is one turn. */
  readonly turns?: number;
}

/** Options of {@link budget}. */
export interface BudgetOptions extends BudgetLimits {
  /**
   * `total` (default): the limits are the whole run's, or the whole session's; `turn`: each turn of
   * a session has them afresh (`turns` is then refused).
   */
  readonly per?: 'total' | 'turn';
  /**
   * The model's price: `costUsd` counts the tokens at it (also those estimated while text streams),
   * rather than the agent's own cost. With `prices`, the price of a model the table does not list.
   */
  readonly price?: TokenPrice;
  /**
   * Prices by model id. The run's model is the one the agent says it uses (`session.started`'s
   * `model`), else the one the run asked for (its `model` option, for a `budget` given as an option
   * of the run); it is priced by its id in the table, else by the longest id in the table it starts
   * with (`claude-sonnet-4-5` prices `claude-sonnet-4-5-20250929`), else by `price`. A model with
   * no price, in a run whose agent reports no cost, cannot be held to `costUsd`: the run is stopped
   * as it starts (reason `budget`, `unpriced` saying the model).
   */
  readonly prices?: Readonly<Record<string, TokenPrice>>;
  /** For `wallMs` and the time spent. Default `asyncScheduler`. */
  readonly scheduler?: SchedulerLike;
}

/** Characters of streamed text taken as one token until the agent reports its usage. */
export const CHARACTERS_PER_TOKEN = 4;

/**
 * Caps what a run or a session may spend: tokens, cost, wall time, tool calls, turns. Around a
 * retry (`retryAgentRun()` before it) it counts every attempt; inside one, each attempt afresh.
 *
 * A run whose budget is crossed is stopped the graceful way (the stop sequence: interrupt, grace,
 * kill of the tree) and ends with `terminal.failed`, reason `budget`, whose `budget` field says
 * which limit, its value, what was used and everything counted. In a session, the running turn is
 * aborted (`turn.failed`, reason `budget`) and the session goes on; with `per: 'total'`, each later
 * turn is aborted as it starts while the budget stays spent. `isRetryableFailure` never retries it.
 *
 * Tokens count what the agent reports at the end of each turn (or run), plus, until then, the text
 * it streamed (answer, thinking, tool inputs and outputs) at {@link CHARACTERS_PER_TOKEN}
 * characters a token, so a long answer is stopped while it streams; `spent.estimatedTokens` says
 * how much of a figure was estimated. Cost is the model's price (`price`, or `prices` by model)
 * times the tokens, or without one the cost the agent reports with its usage.
 *
 * A stream that is not a local process (a fleet run, a recording) has nothing to stop gracefully:
 * it is unsubscribed (which cancels it) and the budget's own terminal ends it. A fleet session's
 * running turn is aborted on its worker.
 *
 * @example
 * runCodex({ prompt: 'Fix the failing test' })
 *   .pipe(budget({ tokens: 200_000, toolCalls: 40, wallMs: 10 * 60_000 }))
 *   .subscribe(render);
 *
 * @example
 * // Each turn of a session may use 20 tool calls; the session 100k tokens in all.
 * commands.pipe(claudeCodeSession(), budget({ toolCalls: 20, per: 'turn' }), budget({ tokens: 100_000 }));
 */
export function budget(options: BudgetOptions): <T extends SessionMessage>(source: Observable<T>) => Observable<T> {
  const checked = checkBudget(options, null);
  return (source) => budgeted(source, checked);
}

/** What an agent's `budget` option knows of the agent that a bare {@link budget} does not. */
export interface BudgetAgent {
  /** The agent's name, for the errors. */
  readonly name: string;
  /** The agent reports what it spent (`usage.cost`): `costUsd` may go without a price. */
  readonly reportsCost: boolean;
  /** The model the run asked for, where it named one: priced from `prices` until the agent says its own. */
  readonly model: string | undefined;
}

/**
 * The budget of an agent's `budget` option: like {@link budget}, except that `costUsd` may go
 * without a price when the agent reports what it spent, and that the model the run asked for is
 * priced (and checked against `prices` now) until the agent says its own.
 */
export function agentBudget(options: BudgetOptions, agent: BudgetAgent): <T extends SessionMessage>(source: Observable<T>) => Observable<T> {
  const checked = checkBudget(options, agent);
  return (source) => budgeted(source, checked);
}

interface CheckedBudget {
  readonly limits: ReadonlyArray<readonly [BudgetLimit, number]>;
  readonly per: 'total' | 'turn';
  readonly pricing: Pricing;
  /** The agent reports what it spent: a model without a price is counted at the agent's own cost. */
  readonly reportsCost: boolean;
  readonly scheduler: SchedulerLike;
}

/** How a budget prices tokens: one price, prices by model, or none (the agent's own cost). */
class Pricing {
  readonly #price: TokenPrice | undefined;
  readonly #prices: ReadonlyArray<readonly [string, TokenPrice]>;
  /** The model the run asked for. */
  readonly requested: string | undefined;

  constructor(price: TokenPrice | undefined, prices: Readonly<Record<string, TokenPrice>> | undefined, requested: string | undefined) {
    this.#price = price;
    // Longest ids first: the first whose id starts the model's is the most specific.
    this.#prices = Object.entries(prices ?? {}).sort(([a], [b]) => b.length - a.length);
    this.requested = requested;
  }

  /** Whether the caller gave any price. */
  get priced(): boolean {
    return this.#price !== undefined || this.#prices.length > 0;
  }

  /** The price of `model` (`undefined` when not known): by the longest id in the table it starts with (its own, when listed), else the one price. */
  of(model: string | undefined): TokenPrice | undefined {
    const found = model === undefined ? undefined : this.#prices.find(([id]) => model.startsWith(id));
    return found === undefined ? this.#price : found[1];
  }

  /** The ids of the table, for the errors. */
  get models(): string {
    return this.#prices.map(([id]) => id).sort().join(', ');
  }
}

const MAX_TIMER_MS = 2 ** 31 - 1;

function checkBudget(options: BudgetOptions, agent: BudgetAgent | null): CheckedBudget {
  if (typeof options !== 'object' || (options as unknown) === null) throw new TypeError('agent-rx: budget takes an object of limits');
  const known = new Set<string>([...BUDGET_LIMITS, 'per', 'price', 'prices', 'scheduler']);
  for (const key of Object.keys(options)) {
    if (!known.has(key)) throw new TypeError(`agent-rx: budget has no option ${JSON.stringify(key)} (limits: ${BUDGET_LIMITS.join(', ')}; per, price, prices, scheduler)`);
  }
  const per: string = options.per ?? 'total';
  if (per !== 'total' && per !== 'turn') throw new TypeError(`agent-rx: budget.per must be 'total' or 'turn', got ${JSON.stringify(per)}`);
  const limits: Array<readonly [BudgetLimit, number]> = [];
  for (const limit of BUDGET_LIMITS) {
    const value = options[limit];
    if (value === undefined) continue;
    const whole = limit === 'toolCalls' || limit === 'turns';
    const valid = typeof value === 'number' && Number.isFinite(value) && (whole ? Number.isInteger(value) && value >= 0 : value > 0) && (limit !== 'wallMs' || value <= MAX_TIMER_MS);
    if (!valid) throw new TypeError(`agent-rx: budget.${limit} must be ${whole ? 'a whole number >= 0' : limit === 'wallMs' ? `a number of ms > 0 and <= ${MAX_TIMER_MS}` : 'a number > 0'}, got ${String(value)}`);
    limits.push([limit, value]);
  }
  if (limits.length === 0) throw new TypeError(`agent-rx: budget needs at least one limit (${BUDGET_LIMITS.join(', ')})`);
  if (per === 'turn' && options.turns !== undefined) throw new TypeError("agent-rx: budget.turns counts a session's turns: it cannot be a limit per turn");
  const { price, prices } = options;
  if (price !== undefined) checkPrice(price, 'budget.price');
  if (prices !== undefined) {
    if (typeof prices !== 'object' || (prices as unknown) === null || Array.isArray(prices)) throw new TypeError('agent-rx: budget.prices must be an object of prices by model id');
    for (const [model, each] of Object.entries(prices)) checkPrice(each, `budget.prices[${JSON.stringify(model)}]`);
  }
  const pricing = new Pricing(price, prices, agent?.model);
  if (options.costUsd !== undefined && agent?.reportsCost !== true) {
    if (!pricing.priced) {
      throw new TypeError(
        agent === null
          ? 'agent-rx: budget.costUsd needs a price (USD per million tokens) for agents that report no cost: give budget.price or budget.prices'
          : `agent-rx: ${agent.name} reports no cost: budget.costUsd needs budget.price or budget.prices (USD per million tokens)`,
      );
    }
    if (agent?.model !== undefined && pricing.of(agent.model) === undefined) {
      throw new TypeError(`agent-rx: budget.prices has no price for the model ${JSON.stringify(agent.model)} (it has ${pricing.models}) and ${agent.name} reports no cost: add it, or give budget.price for the rest`);
    }
  }
  return { limits, per, pricing, reportsCost: agent?.reportsCost === true, scheduler: options.scheduler ?? asyncScheduler };
}

function checkPrice(price: TokenPrice, where: string): void {
  if (typeof price !== 'object' || (price as unknown) === null) throw new TypeError(`agent-rx: ${where} must be { input, output, cacheRead?, cacheWrite? } in USD per million tokens`);
  for (const key of ['input', 'output', 'cacheRead', 'cacheWrite'] as const) {
    const value = price[key];
    const required = key === 'input' || key === 'output';
    if ((required || value !== undefined) && !(typeof value === 'number' && Number.isFinite(value) && value >= 0)) {
      throw new TypeError(`agent-rx: ${where}.${key} must be a number of USD per million tokens >= 0, got ${String(value)}`);
    }
  }
}

/** What a budget counts, per subscription. */
class Ledger {
  /** Usage the agent reported (this turn's with `per: 'turn'`). */
  reported: Usage | undefined;
  /** Whether every report so far carried a cost. */
  reportedCost = true;
  /** Characters streamed since the last report: what the model wrote, and what it will read. */
  written = 0;
  read = 0;
  toolCalls = 0;
  turns = 0;
  startedAt: number;

  constructor(now: number) {
    this.startedAt = now;
  }

  report(usage: Usage | undefined): void {
    this.written = 0;
    this.read = 0;
    if (usage === undefined) return;
    if (usage.cost === undefined) this.reportedCost = false;
    this.reported =
      this.reported === undefined
        ? usage
        : {
            inputTokens: this.reported.inputTokens + usage.inputTokens,
            outputTokens: this.reported.outputTokens + usage.outputTokens,
            cacheReadTokens: this.reported.cacheReadTokens + usage.cacheReadTokens,
            cacheWriteTokens: this.reported.cacheWriteTokens + usage.cacheWriteTokens,
            totalTokens: this.reported.totalTokens + usage.totalTokens,
            ...(this.reported.cost === undefined && usage.cost === undefined ? {} : { cost: (this.reported.cost ?? 0) + (usage.cost ?? 0) }),
          };
  }

  spent(now: number, price: TokenPrice | undefined, turns: number): BudgetSpent {
    const estimatedTokens = (this.written + this.read) / CHARACTERS_PER_TOKEN;
    const reported = this.reported;
    const tokens = (reported?.totalTokens ?? 0) + estimatedTokens;
    const cost = this.cost(price);
    return {
      tokens,
      ...(cost === undefined ? {} : { costUsd: cost }),
      wallMs: Math.max(0, now - this.startedAt),
      toolCalls: this.toolCalls,
      turns,
      estimatedTokens,
    };
  }

  // The caller's price where given (the estimate too), else the agent's own cost where every report had one.
  private cost(price: TokenPrice | undefined): number | undefined {
    const reported = this.reported;
    if (price === undefined) return this.reportedCost && reported?.cost !== undefined ? reported.cost : undefined;
    const estimate = ((this.written / CHARACTERS_PER_TOKEN) * price.output + (this.read / CHARACTERS_PER_TOKEN) * price.input) / 1e6;
    if (reported === undefined) return estimate;
    const priced =
      reported.inputTokens * price.input +
      reported.outputTokens * price.output +
      reported.cacheReadTokens * (price.cacheRead ?? price.input) +
      reported.cacheWriteTokens * (price.cacheWrite ?? price.input);
    return priced / 1e6 + estimate;
  }
}

function used(limit: BudgetLimit, spent: BudgetSpent): number | undefined {
  switch (limit) {
    case 'tokens':
      return spent.tokens;
    case 'costUsd':
      return spent.costUsd;
    case 'wallMs':
      return spent.wallMs;
    case 'toolCalls':
      return spent.toolCalls;
    case 'turns':
      return spent.turns;
  }
}

function budgeted<T extends SessionMessage>(source: Observable<T>, budget: CheckedBudget): Observable<T> {
  const { limits, per, pricing, reportsCost, scheduler } = budget;
  const wallLimit = limits.find(([limit]) => limit === 'wallMs')?.[1];
  const costLimit = limits.find(([limit]) => limit === 'costUsd')?.[1];
  return new Observable<T>((subscriber) => {
    const scope = new RunScope(currentRunScope());
    let ledger = new Ledger(scheduler.now());
    let turns = 0;
    let inTurn = false;
    let session = false;
    // The crossing being acted on: a run's (once), or the running turn's.
    let crossed: BudgetExceeded | null = null;
    // With `per: 'total'`: the crossing that spent the session's budget; every later turn is aborted.
    let spent: BudgetExceeded | null = null;
    let wallTimer: Subscription | undefined;
    // The source's subscription: closed by `finish` even while it is being made (a source that ends at once).
    const inner = new Subscription();
    let over = false;
    // The model priced: the one the agent says it uses once it said it, else the one the run asked for.
    let model = pricing.requested;
    let started = false;

    const spentNow = (): BudgetSpent => ledger.spent(scheduler.now(), pricing.of(model), turns);
    const exceeded = (figures: BudgetSpent = spentNow()): BudgetExceeded | null => {
      if (costLimit !== undefined && started && pricing.priced && !reportsCost && pricing.of(model) === undefined) {
        // Priced by model, and this one has none: the cost cannot be counted, so it cannot be capped.
        return { limit: 'costUsd', max: costLimit, used: 0, per, spent: figures, unpriced: { model: model ?? null } };
      }
      for (const [limit, max] of limits) {
        const value = used(limit, figures);
        if (value === undefined) continue;
        const over = limit === 'wallMs' ? value >= max : value > max;
        if (over) return { limit, max, used: value, per: limit === 'turns' ? 'total' : per, spent: figures };
      }
      return null;
    };

    const finish = (terminal: SessionMessage[]): void => {
      over = true;
      wallTimer?.unsubscribe();
      inner.unsubscribe();
      for (const message of terminal) subscriber.next(message as T);
      subscriber.complete();
    };

    // Acts on a crossing: a run is stopped, a session's running turn aborted; what cannot be, ended here.
    const act = (crossing: BudgetExceeded): void => {
      if (crossed !== null || over) return;
      crossed = crossing;
      if (per === 'total' || crossing.limit === 'turns') spent ??= crossing;
      const controls = scope.controls();
      // A session process under it (a session, or a run made as a one-prompt session) aborts its
      // running turn; between turns there is nothing to abort (a spent budget aborts the next one).
      const abortable = controls.filter((control) => control.abortTurn !== undefined);
      if (abortable.length > 0) {
        for (const control of abortable) if (control.abortTurn?.(crossing) === true) return;
        return;
      }
      if (session) {
        if (!inTurn) return;
        // Nothing here can abort the turn (a recorded session): the session is ended.
        const message = `${budgetText(crossing)}: the session was ended`;
        finish([{ type: 'turn.failed', turn: turns, reason: 'budget', message, budget: crossing }, terminalFailed('budget', message, { budget: crossing })]);
        return;
      }
      const stoppable = controls.filter((control) => control.stop !== undefined);
      if (stoppable.length > 0) {
        for (const control of stoppable) control.stop?.({ kind: 'budget', exceeded: crossing });
        return;
      }
      finish([terminalFailed('budget', `${budgetText(crossing)}: the run was ended`, { budget: crossing })]);
    };

    const check = (): void => {
      if (crossed !== null || over) return;
      if (session && inTurn && spent !== null) {
        // Spent earlier: this turn is aborted as it starts, with the figures of now.
        const figures = spentNow();
        act({ ...spent, used: used(spent.limit, figures) ?? spent.used, spent: figures });
        return;
      }
      const crossing = exceeded();
      if (crossing !== null) act(crossing);
    };

    const armWall = (): void => {
      wallTimer?.unsubscribe();
      if (wallLimit === undefined) return;
      wallTimer = scheduler.schedule(() => {
        check();
      }, Math.max(0, wallLimit - (scheduler.now() - ledger.startedAt)));
    };

    const see = (message: SessionMessage): void => {
      switch (message.type) {
        case 'session.started':
        case 'session.resumed':
          started = true;
          if (message.model !== undefined) model = message.model;
          return;
        case 'turn.started':
          session = true;
          inTurn = true;
          turns += 1;
          crossed = null;
          if (per === 'turn') ledger = new Ledger(scheduler.now());
          armWall();
          return;
        case 'turn.completed':
        case 'turn.failed':
          inTurn = false;
          ledger.report(message.type === 'turn.completed' ? message.usage : undefined);
          if (per === 'turn') wallTimer?.unsubscribe();
          // What the turn reported may spend the whole budget: the next turn is then aborted.
          if (per === 'total' && spent === null) spent = exceeded();
          return;
        case 'assistant':
        case 'assistant.thought':
          ledger.written += message.text.length;
          return;
        case 'tool.call':
          ledger.toolCalls += 1;
          ledger.written += message.input === undefined || message.input === null ? 0 : JSON.stringify(message.input).length;
          return;
        case 'tool.completed':
        case 'tool.failed':
          ledger.read += message.output.length;
          return;
        case 'terminal.completed':
          if (!session) ledger.report(message.usage);
          return;
        default:
          return;
      }
    };

    armWall();
    inner.add(
      scope.run(() =>
        source.subscribe({
        next: (message) => {
          if (over) return;
          see(message);
          subscriber.next(message);
          if (!session && (message.type === 'terminal.completed' || message.type === 'terminal.failed')) return;
          check();
        },
        error: (error: unknown) => {
          over = true;
          wallTimer?.unsubscribe();
          subscriber.error(error);
        },
        complete: () => {
          over = true;
          wallTimer?.unsubscribe();
          subscriber.complete();
        },
      }),
      ),
    );
    return () => {
      over = true;
      wallTimer?.unsubscribe();
      inner.unsubscribe();
    };
  });
}
