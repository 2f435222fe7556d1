import type { FailureReason, TerminalFailed } from './messages.js';

/** What a `terminal.failed` carries besides its reason and message: the process's evidence and what the agent said. */
export type FailureEvidence = { readonly [K in Exclude<keyof TerminalFailed, 'type' | 'reason' | 'message'>]?: TerminalFailed[K] | undefined };

/**
 * A `terminal.failed` with `reason` and `message`, and whatever `evidence` gives; the rest is
 * empty: no exit code or signal (no process, or none that ended), no stderr, no invalid lines.
 * Evidence that is `undefined` is left out, so an optional field is absent rather than undefined.
 *
 * @example
 * terminalFailed('lost', 'the worker stopped beating');
 * terminalFailed('exit', 'pi exited with code 1: boom', { exitCode: 1, stderr: 'boom\n' });
 */
export function terminalFailed(reason: FailureReason, message: string, evidence: FailureEvidence = {}): TerminalFailed {
  const failed: TerminalFailed = {
    type: 'terminal.failed',
    reason,
    message,
    exitCode: null,
    signal: null,
    stderr: '',
    stderrTruncatedBytes: 0,
    invalidOutputLines: [],
    invalidOutputLinesOmitted: 0,
  };
  const fields = failed as unknown as Record<string, unknown>;
  for (const [key, value] of Object.entries(evidence)) if (value !== undefined) fields[key] = value;
  return failed;
}
