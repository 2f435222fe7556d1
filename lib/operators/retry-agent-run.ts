import { asyncScheduler, Observable, timer, type MonoTypeOperatorFunction, type SchedulerLike, type Subscription } from 'rxjs';
import type { CliMessage, RunRetrying, TerminalFailed } from '../messages.js';
import { isRetryableFailure } from './is-retryable-failure.js';
import { isObject, property, shown } from './validate.js';

/** The first retry waits up to this long (full jitter); each further retry doubles it. */
export const RETRY_BASE_DELAY_MS = 1000;
/** No retry waits longer than this, a retry-after hint included. */
export const RETRY_MAX_DELAY_MS = 30_000;

/** Options of {@link retryAgentRun}. */
export interface RetryAgentRunOptions {
  /** Attempts in total, the first included: an integer >= 1, or `Infinity`. Default 3. */
  readonly maxAttempts?: number;
  /**
   * How long to wait before attempt `attempt` (2 for the first retry), in ms: a number, or a
   * function of the attempt and the failure it retries. Default: the failure's `retryAfterMs`
   * when it has one, else exponential backoff with full jitter: a uniform draw from
   * `[0, min(30 s, 1 s × 2^(attempt − 2))]`, so windows of 1 s, 2 s, 4 s, … 30 s; both capped at
   * 30 s ({@link RETRY_BASE_DELAY_MS}, {@link RETRY_MAX_DELAY_MS}).
   */
  readonly delay?: number | ((attempt: number, failure: TerminalFailed) => number);
  /** Whether a failure is worth another attempt. Default `isRetryableFailure`. */
  readonly isRetryable?: (failure: TerminalFailed) => boolean;
  /**
   * Retry an attempt in which the agent already used a tool (any `tool.*` message: pi announces a
   * call just before running it, and a run killed mid-tool has no result). Default `false`: a
   * retry would run the tools again (writes, commands, pushes), so such a failure is forwarded.
   */
  readonly retryAfterToolUse?: boolean;
  /** Where the waits are scheduled (a `SchedulerLike`). Default `asyncScheduler`; a `TestScheduler` for virtual time. */
  readonly scheduler?: SchedulerLike;
  /** The jitter's source of randomness, returning [0, 1). Default `Math.random`. */
  readonly random?: () => number;
}

/**
 * Retries a cold agent run on a retryable `terminal.failed`: swallows that terminal, emits
 * `run.retrying` (the attempt about to start, the wait, the swallowed failure) so UIs can reset,
 * waits, and subscribes to the source again. Any other terminal, or a failure when no attempt is
 * left, is forwarded and the stream completes with it: the result still ends with exactly one
 * terminal message.
 *
 * An attempt in which the agent used a tool (any `tool.*` message) is not retried unless
 * `retryAfterToolUse` is set. Errors are forwarded, never retried (sources do not error for what
 * the agent or the OS did). Unsubscribing during a wait cancels it; no attempt starts after.
 * A wait holds no process and no global state: a host that shuts down ends the waits it owns by
 * unsubscribing (e.g. `takeUntil(shutdown$)`). A run that the host stopped (`stopAllRuns()`) ends
 * with `terminal.failed` reason `stopped`, which the default classifier never retries.
 *
 * A throw from `isRetryable`, `delay` or `random` errors the stream with what was thrown; a
 * `delay` or `random` result out of range errors it with a `TypeError`. Nothing is emitted after.
 *
 * - Invalid options (`maxAttempts` below 1 or not an integer, a negative or non-finite `delay`, a
 *   `scheduler` without `now()`/`schedule()`, a non-function `isRetryable` or `random`) throw a
 *   `TypeError` when `retryAgentRun` is called.
 * - State is per subscription: two subscribers count their own attempts.
 * - Attempts never overlap: the previous attempt is unsubscribed before the next one starts.
 * - Unsubscribing mid-attempt unsubscribes the running attempt, which stops its process. A
 *   cancelled run is never retried (after an unsubscribe nothing is emitted).
 * - It uses no Node API: it is in `agent-rx/browser` too, and works the same on both sides of a
 *   wire.
 * - A source that completes without a terminal message completes the result (no terminal is
 *   invented). Messages a source emits after its terminal are dropped.
 * - `run.retrying` is the boundary UIs reset at: text, tool progress and token counts of the
 *   failed attempt end there.
 * - A plain retry resubscribes the **same** cold run: for `runPi`, a new session with the same
 *   prompt. To continue the conversation instead, build each attempt with `defer` and resume the
 *   failed attempt's session (second example).
 *
 * When you retry on your side, pass `agentRetry: false` to the source (pi and Claude Code retry
 * some errors on their own, shown as `agent.retry` messages), so that only one layer retries.
 *
 * ```
 * source:  -s-(f|)                       f = terminal.failed (429), c = terminal.completed
 *          -s-a-(c|)                     (second subscription)
 * result:  -s-r 499ms -s-a-(c|)          r = run.retrying { attempt: 2, delayMs: 500, failure: f }
 * ```
 *
 * @example
 * runPi({ prompt: 'Fix the failing test' })
 *   .pipe(retryAgentRun({ maxAttempts: 4 }))
 *   .subscribe((message) => {
 *     if (message.type === 'run.retrying') console.log(`attempt ${message.attempt} in ${message.delayMs} ms`);
 *   });
 *
 * // Your own rules on top of the default ones:
 * retryAgentRun({ isRetryable: (failure) => isRetryableFailure(failure) || failure.reason === 'missing-terminal' });
 *
 * @example
 * // Each attempt resumes the session of the one that failed.
 * const run$ = defer(() => {
 *   let sessionId: string | undefined; // per subscription
 *   return defer(() => runPi(sessionId === undefined ? { prompt } : { prompt: 'Continue where you left off.', session: { id: sessionId } })).pipe(
 *     // upstream of retryAgentRun, so it also sees the failures it swallows
 *     tap((message) => {
 *       if (message.type === 'terminal.failed' && message.agentError !== undefined) sessionId = message.sessionId ?? sessionId;
 *     }),
 *     retryAgentRun(),
 *   );
 * });
 */
export function retryAgentRun(options: RetryAgentRunOptions = {}): MonoTypeOperatorFunction<CliMessage> {
  if (!isObject(options)) throw new TypeError(`agent-rx: retryAgentRun takes an options object; got ${shown(options)}`);
  const maxAttempts = options.maxAttempts ?? 3;
  const delay = options.delay;
  const isRetryable = options.isRetryable ?? isRetryableFailure;
  const retryAfterToolUse = options.retryAfterToolUse ?? false;
  const scheduler = options.scheduler ?? asyncScheduler;
  const random = options.random ?? Math.random;
  if (!(maxAttempts === Number.POSITIVE_INFINITY || (Number.isInteger(maxAttempts) && maxAttempts >= 1))) {
    throw new TypeError(`agent-rx: maxAttempts must be an integer >= 1 or Infinity; got ${String(maxAttempts)}`);
  }
  if (typeof delay === 'number') checkDelay(delay, 'delay');
  else if (delay !== undefined && typeof delay !== 'function') throw new TypeError('agent-rx: delay must be a number of ms or a function');
  if (typeof isRetryable !== 'function') throw new TypeError('agent-rx: isRetryable must be a function');
  if (typeof retryAfterToolUse !== 'boolean') throw new TypeError('agent-rx: retryAfterToolUse must be a boolean');
  if (typeof random !== 'function') throw new TypeError('agent-rx: random must be a function');
  if (!isSchedulerLike(scheduler)) throw new TypeError(`agent-rx: scheduler must be a SchedulerLike (with now() and schedule()); got ${shown(scheduler)}`);

  const delayBefore = (attempt: number, failure: TerminalFailed): number => {
    if (typeof delay === 'number') return delay;
    if (delay !== undefined) return checkDelay(delay(attempt, failure), 'delay()');
    return backoffDelay(attempt, failure, random);
  };

  return (source) =>
    new Observable<CliMessage>((subscriber) => {
      // State lives in the subscription: every subscriber counts its own attempts.
      let running: Subscription | undefined;
      let waiting: Subscription | undefined;
      const endWait = (): void => {
        waiting?.unsubscribe();
        waiting = undefined;
      };
      // While a synchronous source runs inside subscribe(), a due attempt is queued, not nested.
      let subscribing = false;
      let queued: number | undefined;

      // Subscribes to one attempt; returns its subscription (still running, or already settled).
      const subscribeAttempt = (attempt: number): Subscription => {
        // `settled`: this attempt's terminal (or end) was handled; later messages are dropped.
        const state = { settled: false, usedTools: false };
        // True when a retry was scheduled for the failure.
        const retryAfter = (failure: TerminalFailed): boolean => {
          if (attempt >= maxAttempts || (state.usedTools && !retryAfterToolUse) || !isRetryable(failure)) return false;
          const next = attempt + 1;
          const delayMs = delayBefore(next, failure);
          subscriber.next({ type: 'run.retrying', attempt: next, delayMs, failure } satisfies RunRetrying);
          // The subscriber may have left on `run.retrying`: then no wait and no attempt.
          if (subscriber.closed) return true;
          waiting = timer(delayMs, scheduler).subscribe(() => {
            endWait();
            launch(next);
          });
          return true;
        };
        const subscription = source.subscribe({
          next: (message) => {
            if (state.settled) return;
            if (message.type.startsWith('tool.')) state.usedTools = true;
            if (message.type === 'terminal.failed') {
              state.settled = true;
              let retrying: boolean;
              try {
                retrying = retryAfter(message);
              } catch (error: unknown) {
                subscriber.error(error);
                return;
              }
              if (retrying) return;
            } else if (message.type === 'terminal.completed') {
              state.settled = true;
            }
            subscriber.next(message);
            if (state.settled) subscriber.complete();
          },
          error: (error: unknown) => {
            if (!state.settled) subscriber.error(error);
          },
          complete: () => {
            if (!state.settled) subscriber.complete();
          },
        });
        if (state.settled) subscription.unsubscribe();
        return subscription;
      };

      // Starts attempts one after the other: the previous one is unsubscribed before the next begins.
      const launch = (attempt: number): void => {
        if (subscribing) {
          queued = attempt;
          return;
        }
        let next: number | undefined = attempt;
        while (next !== undefined && !subscriber.closed) {
          running?.unsubscribe();
          subscribing = true;
          running = subscribeAttempt(next);
          subscribing = false;
          next = queued;
          queued = undefined;
        }
        if (subscriber.closed) running?.unsubscribe();
      };

      launch(1);
      return () => {
        endWait();
        running?.unsubscribe();
      };
    });
}

// Full jitter: uniform in [0, min(cap, base * 2^(attempt - 2))]; a retry-after hint is taken as is, capped.
function backoffDelay(attempt: number, failure: TerminalFailed, random: () => number): number {
  if (failure.retryAfterMs !== undefined) return Math.min(RETRY_MAX_DELAY_MS, failure.retryAfterMs);
  const ceiling = Math.min(RETRY_MAX_DELAY_MS, RETRY_BASE_DELAY_MS * 2 ** (attempt - 2));
  const draw = random();
  if (!(typeof draw === 'number' && draw >= 0 && draw <= 1)) throw new TypeError(`agent-rx: random() must return a number from 0 to 1; got ${String(draw)}`);
  return Math.round(draw * ceiling);
}

function isSchedulerLike(value: unknown): value is SchedulerLike {
  return isObject(value) && typeof property(value, 'now') === 'function' && typeof property(value, 'schedule') === 'function';
}

function checkDelay(value: unknown, name: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new TypeError(`agent-rx: ${name} must be a finite number of ms >= 0; got ${String(value)}`);
  }
  return value;
}
