import { describe, expect, it } from '@jest/globals';
import { sessionToRun, type SessionMessage, type TerminalFailed } from '../../lib/index.js';
import { scheduler } from '../helpers/items.js';

const usage = { inputTokens: 100, outputTokens: 7, cacheReadTokens: 0, cacheWriteTokens: 0, totalTokens: 107 };
const failedExit: TerminalFailed = {
  type: 'terminal.failed',
  reason: 'exit',
  message: 'Codex exited with code 1',
  exitCode: 1,
  signal: null,
  stderr: 'boom',
  stderrTruncatedBytes: 0,
  invalidOutputLines: [],
  invalidOutputLinesOmitted: 0,
  sessionId: 's1',
};
const m = {
  i: { type: 'input.accepted', kind: 'prompt', as: 'turn', turn: 1, text: 'hi' },
  s: { type: 'turn.started', turn: 1, prompt: 'hi' },
  h: { type: 'session.started', sessionId: 's1' },
  a: { type: 'assistant', text: 'Hello' },
  c: { type: 'turn.completed', turn: 1, stopReason: 'end_turn', agentStopReason: 'completed', usage },
  f: { type: 'turn.failed', turn: 1, reason: 'agent-error', message: 'Codex reported an error: 500', httpStatus: 500 },
  t: { type: 'terminal.completed', stopReason: 'end_turn', usage: { ...usage, totalTokens: 999 }, sessionId: 's1' },
  x: failedExit,
} satisfies Record<string, SessionMessage>;

describe('sessionToRun', () => {
  it('leaves out the turn and input messages and ends with the turn\'s own stop reason and usage', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<SessionMessage>('-i-s-h-a-c-(t|)', m).pipe(sessionToRun())).toBe('-----h-a---(T|)', {
        h: m.h,
        a: m.a,
        T: { type: 'terminal.completed', stopReason: 'end_turn', agentStopReason: 'completed', usage, sessionId: 's1' },
      });
    });
  });

  it('makes a failed turn the run\'s failure, with the exit fields of a clean session', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<SessionMessage>('-s-f-(t|)', m).pipe(sessionToRun())).toBe('-----(T|)', {
        T: {
          type: 'terminal.failed',
          reason: 'agent-error',
          message: 'Codex reported an error: 500',
          httpStatus: 500,
          exitCode: 0,
          signal: null,
          stderr: '',
          stderrTruncatedBytes: 0,
          invalidOutputLines: [],
          invalidOutputLinesOmitted: 0,
          sessionId: 's1',
        },
      });
    });
  });

  it('keeps the process\'s fields when the session failed with the turn', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const turn = { type: 'turn.failed', turn: 1, reason: 'exit', message: 'Codex exited with code 1' } satisfies SessionMessage;
      expectObservable(cold<SessionMessage>('-s-f-(x|)', { s: m.s, f: turn, x: m.x }).pipe(sessionToRun())).toBe('-----(X|)', { X: failedExit });
    });
  });

  it('keeps the session\'s failure when no turn ended (the agent could not start), and after a completed turn', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<SessionMessage>('-i-(x|)', m).pipe(sessionToRun())).toBe('---(x|)', { x: failedExit });
      expectObservable(cold<SessionMessage>('-c-(x|)', m).pipe(sessionToRun())).toBe('---(x|)', { x: failedExit });
    });
  });

  it('completes at the terminal, ignoring anything after it', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold<SessionMessage>('-c-t-a-|', m);
      expectObservable(source.pipe(sessionToRun())).toBe('---(T|)', { T: expect.objectContaining({ type: 'terminal.completed' }) });
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });

  it('completes empty, stays silent on never, forwards errors, and stops at an early unsubscribe', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      expectObservable(cold<SessionMessage>('|').pipe(sessionToRun())).toBe('|');
      expectObservable(cold<SessionMessage>('-').pipe(sessionToRun())).toBe('-');
      expectObservable(cold<SessionMessage>('-a-#', m).pipe(sessionToRun())).toBe('-a-#', { a: m.a });
      const source = cold<SessionMessage>('-a-a-a|', m);
      expectObservable(source.pipe(sessionToRun()), '^-!').toBe('-a-', { a: m.a });
      expectSubscriptions(source.subscriptions).toBe('^-!');
    });
  });

  it('keeps the last turn of each subscription apart', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const run = cold<SessionMessage>('-c-(t|)', m).pipe(sessionToRun());
      const expected = { T: expect.objectContaining({ type: 'terminal.completed', usage }) };
      expectObservable(run).toBe('---(T|)', expected);
      expectObservable(run).toBe('---(T|)', expected);
    });
  });
});
