import { describe, expect, it } from '@jest/globals';
import type { MessageMapping } from '../../lib/index.js';
import { sessionExitFailure, terminalAtExit } from '../../lib/operators/terminal-at-exit.js';
import { runExit } from '../helpers/items.js';

// A dialect that would conclude a completed run from its events, and knows the session and the agent's last error.
const toy: MessageMapping<null> = {
  name: 'toy',
  createState: () => null,
  map: () => [],
  conclude: () => ({ kind: 'completed', stopReason: 'end_turn' }),
  lastError: () => 'model on fire',
  sessionId: () => 'S1',
};
const OPEN = 'toy exited while the session was open';
const invalidLine = { lineNumber: 3, reason: 'not-json' as const, detail: 'Unexpected token', text: 'oops', bytes: 4, truncated: false };

describe('sessionExitFailure', () => {
  it('fails an exit the turns did not explain, whatever the events would conclude for a run', () => {
    expect(terminalAtExit(toy, null, runExit())).toMatchObject({ type: 'terminal.completed' });
    expect(sessionExitFailure(toy, null, runExit(), OPEN)).toEqual({
      type: 'terminal.failed',
      reason: 'missing-terminal',
      message: OPEN,
      exitCode: 0,
      signal: null,
      stderr: '',
      stderrTruncatedBytes: 0,
      invalidOutputLines: [],
      invalidOutputLinesOmitted: 0,
      agentError: 'model on fire',
      sessionId: 'S1',
    });
  });

  it('says when invalid output lines explain the exit', () => {
    const failure = sessionExitFailure(toy, null, runExit({ invalidOutput: { lines: [invalidLine], omitted: 2 } }), OPEN);
    expect(failure).toMatchObject({ reason: 'invalid-output', invalidOutputLines: [invalidLine], invalidOutputLinesOmitted: 2 });
    expect(failure.message).toBe(`${OPEN}; 3 line(s) of output were not understood (line 3: not-json, Unexpected token)`);
  });

  it('fails with exit for a non-zero code or a signal, with the meaningful stderr line and the agent error', () => {
    expect(sessionExitFailure(toy, null, runExit({ exitCode: 3, stderr: 'boom\n' }), OPEN)).toMatchObject({
      reason: 'exit',
      message: 'toy exited with code 3: boom | model on fire',
      exitCode: 3,
      stderr: 'boom\n',
    });
    expect(sessionExitFailure(toy, null, runExit({ exitCode: null, signal: 'SIGKILL' }), OPEN)).toMatchObject({ reason: 'exit', message: 'toy was killed by SIGKILL: model on fire' });
  });

  it('puts a start failure and a stop by the library first, as for a run', () => {
    const spawn = runExit({ exitCode: null, pid: null, startError: { stage: 'spawn', code: 'ENOENT', message: 'spawn toy ENOENT' } });
    expect(sessionExitFailure(toy, null, spawn, OPEN)).toEqual(terminalAtExit(toy, null, spawn));
    expect(sessionExitFailure(toy, null, spawn, OPEN)).toMatchObject({ reason: 'spawn' });
    const stopped = runExit({ exitCode: null, signal: 'SIGKILL', stoppedBy: { kind: 'timeout', limit: 'end', ms: 300 } });
    expect(sessionExitFailure(toy, null, stopped, OPEN)).toMatchObject({
      reason: 'timeout',
      message: 'toy did not exit within 300 ms of the end of the session (gracePeriodMs); it was stopped',
      timeout: { limit: 'end', ms: 300 },
    });
    expect(sessionExitFailure(toy, null, runExit({ stoppedBy: { kind: 'host' } }), OPEN)).toMatchObject({ reason: 'stopped' });
  });

  it("never asks the dialect's conclusion: the session's turns took what the events said", () => {
    const strict: MessageMapping<null> = {
      ...toy,
      conclude: () => {
        throw new Error('conclude is for runs');
      },
    };
    expect(sessionExitFailure(strict, null, runExit({ exitCode: 1 }), OPEN)).toMatchObject({ reason: 'exit' });
    expect(sessionExitFailure(strict, null, runExit(), OPEN)).toMatchObject({ reason: 'missing-terminal' });
  });
});
