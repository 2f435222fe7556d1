import type { StopCause } from './items.js';

export interface TimeLimits {
  /** Output arrived: the idle limit starts over. Cheap enough to call for every chunk. */
  activity(): void;
  /** No limit fires after this. Idempotent. */
  clear(): void;
}

const NONE: TimeLimits = { activity: () => undefined, clear: () => undefined };

/**
 * Starts a run's time limits: `timeoutMs` for the whole run, `idleTimeoutMs` for the longest time
 * without output. `expired` is called at most once, with the limit that ran out. The idle timer is
 * not reset on every chunk: activity only records the time, and the timer, when it fires early,
 * sleeps again for what is left.
 */
export function startTimeLimits(
  limits: { readonly timeoutMs: number | undefined; readonly idleTimeoutMs: number | undefined },
  expired: (cause: Extract<StopCause, { kind: 'timeout' }>) => void,
): TimeLimits {
  const { timeoutMs, idleTimeoutMs } = limits;
  if (timeoutMs === undefined && idleTimeoutMs === undefined) return NONE;
  let runTimer: NodeJS.Timeout | undefined;
  let idleTimer: NodeJS.Timeout | undefined;
  let lastActivity = performance.now();
  let done = false;
  const clear = (): void => {
    done = true;
    clearTimeout(runTimer);
    clearTimeout(idleTimer);
  };
  const fire = (limit: 'run' | 'idle', ms: number): void => {
    if (done) return;
    clear();
    expired({ kind: 'timeout', limit, ms });
  };
  if (timeoutMs !== undefined) {
    runTimer = setTimeout(() => {
      fire('run', timeoutMs);
    }, timeoutMs);
  }
  if (idleTimeoutMs !== undefined) {
    const check = (): void => {
      const silent = performance.now() - lastActivity;
      if (silent >= idleTimeoutMs) fire('idle', idleTimeoutMs);
      else idleTimer = setTimeout(check, Math.ceil(idleTimeoutMs - silent));
    };
    idleTimer = setTimeout(check, idleTimeoutMs);
  }
  return {
    activity: () => {
      lastActivity = performance.now();
    },
    clear,
  };
}
