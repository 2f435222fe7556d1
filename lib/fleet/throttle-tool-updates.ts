import { asyncScheduler, Observable, type MonoTypeOperatorFunction, type SchedulerLike, type Subscription } from 'rxjs';
import type { CliMessage } from '../messages.js';

/** Options of {@link throttleToolUpdates}. */
export interface ThrottleToolUpdatesOptions {
  /** How long the first held `tool.update` waits before the held ones are let through. Default 250 (four a second at most). */
  readonly intervalMs?: number;
  /** Where the wait is scheduled. Default `asyncScheduler`; a `TestScheduler` for virtual time. */
  readonly scheduler?: SchedulerLike;
}

/**
 * Holds `tool.update` messages back, the latest per call, and lets the held ones through together
 * `intervalMs` after the first of them (at most four writes a second by default): each carries the
 * whole output so far, so the latest says everything the ones it replaces said. Any other message
 * lets the held ones through first (in the order their calls were first held), so no update is
 * moved past its call's result or the terminal. Completion lets them through too; an error or an
 * unsubscribe drops them. Every other message passes at once, unchanged.
 *
 * State (the held updates, the timer) is per subscription.
 *
 * ```
 * source:  -a-b-c---------d-|      a, b: tool.update of call 1; c: of call 2; d: tool.completed
 * result:  ---------(bc)--d-|      intervalMs: 8 frames after a
 * ```
 *
 * @example
 * // A worker writes every message of a run to Redis; a chatty tool's output costs four writes a second at most.
 * run$.pipe(throttleToolUpdates()).subscribe(write);
 */
export function throttleToolUpdates(options: ThrottleToolUpdatesOptions = {}): MonoTypeOperatorFunction<CliMessage> {
  const intervalMs = options.intervalMs ?? 250;
  const scheduler = options.scheduler ?? asyncScheduler;
  if (typeof intervalMs !== 'number' || !Number.isFinite(intervalMs) || intervalMs < 0) {
    throw new TypeError(`agent-rx: intervalMs must be a finite number of ms >= 0; got ${String(intervalMs)}`);
  }
  return (source) =>
    new Observable<CliMessage>((subscriber) => {
      // Per subscription: the latest update of each call, and the wait for the first of them.
      const held = new Map<string, CliMessage>();
      let timer: Subscription | null = null;
      const drop = (): void => {
        timer?.unsubscribe();
        timer = null;
        held.clear();
      };
      // Emptied before anything is emitted: downstream may re-enter with another update.
      const flush = (): void => {
        const due = [...held.values()];
        drop();
        for (const message of due) subscriber.next(message);
      };
      const subscription = source.subscribe({
        next: (message) => {
          if (message.type === 'tool.update') {
            held.set(message.toolCallId, message);
            timer ??= scheduler.schedule(flush, intervalMs);
            return;
          }
          flush();
          subscriber.next(message);
        },
        error: (error: unknown) => {
          drop();
          subscriber.error(error);
        },
        complete: () => {
          flush();
          subscriber.complete();
        },
      });
      return () => {
        drop();
        subscription.unsubscribe();
      };
    });
}
