import { describe, expect, it } from '@jest/globals';
import { TerminalFailedSchema } from '../lib/messages.js';
import { terminalFailed } from '../lib/terminal-failed.js';

describe('terminalFailed', () => {
  it('gives a failure with no process evidence: no exit code, signal, stderr or invalid lines', () => {
    const failed = terminalFailed('lost', 'the worker stopped beating');
    expect(failed).toStrictEqual({
      type: 'terminal.failed',
      reason: 'lost',
      message: 'the worker stopped beating',
      exitCode: null,
      signal: null,
      stderr: '',
      stderrTruncatedBytes: 0,
      invalidOutputLines: [],
      invalidOutputLinesOmitted: 0,
    });
    expect(TerminalFailedSchema.safeParse(failed).success).toBe(true);
  });

  it('takes the evidence it is given, in place of the empty fields and beside them', () => {
    const line = { lineNumber: 2, reason: 'not-json' as const, detail: 'Unexpected token', text: 'oops', bytes: 4, truncated: false };
    expect(
      terminalFailed('exit', 'pi exited with code 1: boom', {
        exitCode: 1,
        stderr: 'boom\n',
        invalidOutputLines: [line],
        invalidOutputLinesOmitted: 3,
        agentError: 'boom',
        timeout: { limit: 'run', ms: 500 },
      }),
    ).toStrictEqual({
      type: 'terminal.failed',
      reason: 'exit',
      message: 'pi exited with code 1: boom',
      exitCode: 1,
      signal: null,
      stderr: 'boom\n',
      stderrTruncatedBytes: 0,
      invalidOutputLines: [line],
      invalidOutputLinesOmitted: 3,
      agentError: 'boom',
      timeout: { limit: 'run', ms: 500 },
    });
  });

  it('leaves out evidence that is undefined: an optional field is absent, a required one keeps its empty value', () => {
    const failed = terminalFailed('agent-error', 'pi reported an error', { agentError: undefined, sessionId: undefined, exitCode: undefined });
    expect(Object.keys(failed)).not.toContain('agentError');
    expect(Object.keys(failed)).not.toContain('sessionId');
    expect(failed.exitCode).toBeNull();
  });

  it('gives a new object each time: a caller that changes one changes no other', () => {
    const first = terminalFailed('lost', 'a');
    first.invalidOutputLines.push({ lineNumber: 1, reason: 'not-json', detail: '', text: '', bytes: 0, truncated: false });
    expect(terminalFailed('lost', 'a').invalidOutputLines).toEqual([]);
  });
});
