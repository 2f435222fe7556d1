/**
 * Spawning is synchronous in Node: fork and exec block the event loop for a few milliseconds per
 * child, more in a large host. A burst of subscriptions would spawn every child in the same turn
 * and freeze the host for the sum. The pacer lets spawns take at most `budgetMs` of one
 * event-loop turn; the rest wait, in order, for the next turns, so I/O (the output of the runs
 * already started, the host's own requests) is served in between. A lone run, and the first few
 * of a burst, still spawn synchronously on subscribe.
 */
export class SpawnPacer {
  readonly #budgetMs: number;
  readonly #now: () => number;
  readonly #nextTurn: (turn: () => void) => void;
  readonly #waiting = new Set<() => void>();
  #spentMs = 0;
  #turnScheduled = false;

  /**
   * @param budgetMs how long spawns may block one turn before the next ones wait for a later turn
   * @param now the clock
   * @param nextTurn schedules a callback for the next event-loop turn (after its I/O)
   */
  constructor(budgetMs: number, now: () => number = () => performance.now(), nextTurn: (turn: () => void) => void = setImmediate) {
    this.#budgetMs = budgetMs;
    this.#now = now;
    this.#nextTurn = nextTurn;
  }

  /**
   * Runs `spawn` now when this turn's budget allows and nothing waits before it (and returns
   * `null`), otherwise in a later turn (and returns a function that withdraws it while it still
   * waits). `spawn` must not throw.
   */
  pace(spawn: () => void): (() => void) | null {
    if (this.#waiting.size === 0 && this.#spentMs < this.#budgetMs) {
      this.#timed(spawn);
      return null;
    }
    this.#waiting.add(spawn);
    this.#scheduleTurn();
    return () => {
      this.#waiting.delete(spawn);
    };
  }

  /** How many spawns wait for a later turn. */
  get waiting(): number {
    return this.#waiting.size;
  }

  #timed(spawn: () => void): void {
    const started = this.#now();
    try {
      spawn();
    } finally {
      this.#spentMs += this.#now() - started;
      // The budget is per turn: the next turn starts it again.
      this.#scheduleTurn();
    }
  }

  #scheduleTurn(): void {
    if (this.#turnScheduled) return;
    this.#turnScheduled = true;
    this.#nextTurn(() => {
      this.#turn();
    });
  }

  #turn(): void {
    this.#turnScheduled = false;
    this.#spentMs = 0;
    for (const spawn of this.#waiting) {
      if (this.#spentMs >= this.#budgetMs) break;
      this.#waiting.delete(spawn);
      this.#timed(spawn);
    }
    if (this.#waiting.size > 0) this.#scheduleTurn();
  }
}

/** How long the spawns of a burst may block one event-loop turn (ms). */
export const TURN_BUDGET_MS = 8;

/** The host's pacer: every run's spawn goes through it. */
export const spawnPacer = new SpawnPacer(TURN_BUDGET_MS);
