import { AsyncLocalStorage } from 'node:async_hooks';
import type { BudgetExceeded } from '../messages.js';
import type { StopCause } from './items.js';

/**
 * What a running source lets the operators around its subscription do: a process run can be
 * stopped the graceful way for a cause the stream then reports; a session's running turn can be
 * aborted for a budget.
 */
export interface RunControl {
  /** Runs the stop sequence; the stream goes on to its exit and a terminal that says why. */
  readonly stop?: (cause: StopCause) => void;
  /** Aborts the running turn, which then fails with reason `budget`; `false` when no turn runs. */
  readonly abortTurn?: (exceeded: BudgetExceeded) => boolean;
  /** The process's pid and process group, once it is spawned (`null` before, or when it could not start). */
  readonly process?: () => ProcessFacts | null;
}

/** Where a run's agent process is: its pid and its process group. */
export interface ProcessFacts {
  readonly pid: number;
  readonly processGroup: number;
}

const storage = new AsyncLocalStorage<RunScope>();

/**
 * A subscription's scope: what an operator (a budget, a trace) gives the sources subscribed inside
 * it, and how it reaches them back. Sources look it up when they start (`currentRunScope`): the
 * environment they add to their process, and where they attach their control. Scopes nest: a source
 * attaches to every scope around it; the innermost environment wins.
 */
export class RunScope {
  readonly #parent: RunScope | undefined;
  readonly #env: Readonly<Record<string, string>>;
  readonly #controls = new Set<RunControl>();
  /** The running turn's variables (its trace context), set by a trace around a session. */
  #turnEnv: Readonly<Record<string, string>> | undefined;

  constructor(parent: RunScope | undefined, env: Readonly<Record<string, string>> = {}) {
    this.#parent = parent;
    this.#env = env;
  }

  /** The variables the sources in this scope add to their processes' environment. */
  get env(): Readonly<Record<string, string>> {
    return this.#parent === undefined ? this.#env : { ...this.#parent.env, ...this.#env };
  }

  /**
   * The variables of the running turn (its trace context, while a traced session's turn runs),
   * from the innermost scope that has them; else the scope's own.
   */
  get turnEnv(): Readonly<Record<string, string>> {
    return this.#turnEnv ?? this.#parent?.turnEnv ?? this.env;
  }

  /** Sets the running turn's variables; `undefined` when it ends. */
  setTurnEnv(env: Readonly<Record<string, string>> | undefined): void {
    this.#turnEnv = env;
  }

  /** Makes `control` reachable from this scope and every one around it, until the returned function is called. */
  attach(control: RunControl): () => void {
    const scopes = this.#chain();
    for (const scope of scopes) scope.#controls.add(control);
    return () => {
      for (const scope of scopes) scope.#controls.delete(control);
    };
  }

  /** This scope and every one around it. */
  #chain(): RunScope[] {
    return this.#parent === undefined ? [this] : [this, ...this.#parent.#chain()];
  }

  /** The controls attached now (a copy: a control may detach while the caller walks them). */
  controls(): readonly RunControl[] {
    return [...this.#controls];
  }

  /** Calls `work` inside this scope: what it starts, now or later in its async continuations, sees it. */
  run<T>(work: () => T): T {
    return storage.run(this, work);
  }
}

/** The scope the caller runs in, if any. */
export function currentRunScope(): RunScope | undefined {
  return storage.getStore();
}

/**
 * `work` bound to the scope current now: for a source that subscribes something later, from a
 * context that is not its own (a command's arrival), as if it did so when it was subscribed.
 */
export function bindRunScope<A extends unknown[], R>(work: (...args: A) => R): (...args: A) => R {
  const scope = currentRunScope();
  if (scope === undefined) return (...args) => storage.exit(() => work(...args));
  return (...args) => scope.run(() => work(...args));
}
