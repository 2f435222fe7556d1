// A caller's `onError`, called so that nothing it throws can become an uncaught exception: it is
// called from EventEmitter listeners (ioredis's and BullMQ's `error` events) and from promise
// handlers, where a throw would crash the host or reject a promise nobody awaits.
import { asError } from '../process/error-message.js';

/** How a dispatcher or a worker tells its caller what went wrong. It never throws. */
export type ErrorReport = (error: unknown) => void;

/** The code of the warning emitted the first time a caller's `onError` throws. */
export const ON_ERROR_THREW = 'AGENT_RX_ON_ERROR_THREW';

/**
 * The report that calls `onError` (absent: nothing is told). A throw from `onError` is swallowed;
 * the first one is told once on `process.emitWarning` (code {@link ON_ERROR_THREW}), later ones are
 * ignored, and `onError` is still called with every later error. A value that is not a function
 * throws a `TypeError` now, before any connection is made.
 */
export function guardOnError(onError: ((error: Error) => void) | undefined, owner: string): ErrorReport {
  if (onError !== undefined && typeof onError !== 'function') {
    throw new TypeError(`agent-rx: ${owner}'s onError must be a function; got ${typeof onError}`);
  }
  let warned = false;
  return (error) => {
    if (onError === undefined) return;
    try {
      onError(asError(error));
    } catch (thrown) {
      if (warned) return;
      warned = true;
      try {
        process.emitWarning(`agent-rx: ${owner}'s onError threw (${asError(thrown).message}); the fleet goes on, and later throws from it are ignored`, { code: ON_ERROR_THREW });
      } catch {
        // Telling is a courtesy: nothing may come out of a report.
      }
    }
  };
}

