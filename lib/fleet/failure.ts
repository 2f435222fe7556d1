import type { TerminalFailed } from '../messages.js';
import { terminalFailed } from '../terminal-failed.js';

/**
 * A `terminal.failed` the fleet gives: `lost`, or another reason. (No BullMQ here: the CLI uses it before loading the fleet.)
 *
 * @example
 * const failed: TerminalFailed = fleetFailure('lost', 'the worker stopped beating');
 */
export function fleetFailure(reason: 'lost' | 'aborted' | 'setup' | 'stopped', message: string): TerminalFailed {
  return terminalFailed(reason, message);
}
