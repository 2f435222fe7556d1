import { describe } from './process-table.js';

/**
 * The only module that sends signals. Every call is safe: a vanished process (ESRCH) or any other
 * failure is returned as text for diagnostics, never thrown.
 */
export function sendSignal(pid: number, signal: NodeJS.Signals | 0): string | null {
  try {
    process.kill(pid, signal);
    return null;
  } catch (error) {
    return `kill ${signal} ${pid}: ${describe(error)}`;
  }
}

/** Signals a whole process group (`pgid` is its leader's pid). */
export function signalGroup(pgid: number, signal: NodeJS.Signals): string | null {
  return sendSignal(-pgid, signal);
}
