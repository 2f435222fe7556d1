import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { SessionMessage, TerminalFailed } from '../../lib/messages.js';
import {
  INITIAL_SESSION_STATE,
  OPENING_SESSION_STATE,
  sessionTransition,
  type SessionEffect,
  type SessionInputEvent,
  type SessionPhase,
  type SessionState,
} from '../../lib/sessions/session-machine.js';

// The session machine is pure: every case is an input in a state, and the effects it gives.

const FAILURE: TerminalFailed = {
  type: 'terminal.failed',
  reason: 'exit',
  message: 'pi exited with code 1',
  exitCode: 1,
  signal: null,
  stderr: '',
  stderrTruncatedBytes: 0,
  invalidOutputLines: [],
  invalidOutputLinesOmitted: 0,
};

const inputs = {
  prompt: { type: 'command', command: { type: 'prompt', text: 'p' } },
  steer: { type: 'command', command: { type: 'steer', text: 's' } },
  followUp: { type: 'command', command: { type: 'follow-up', text: 'f' } },
  abort: { type: 'command', command: { type: 'abort' } },
  bogus: { type: 'command', command: { type: 'prompt', text: '' } },
  done: { type: 'inputsCompleted' },
  text: { type: 'content', message: { type: 'assistant', text: 'x' } },
  session: { type: 'content', message: { type: 'session.started', sessionId: 'id' } },
  opened: { type: 'opened' },
  completed: { type: 'turnEnded', outcome: { kind: 'completed', stopReason: 'end_turn' } },
  aborted: { type: 'turnEnded', outcome: { kind: 'failed', reason: 'aborted', message: 'aborted' } },
  idle: { type: 'idleExpired', ms: 500 },
  cleanExit: { type: 'exited', clean: true, failure: FAILURE },
  crash: { type: 'exited', clean: false, failure: FAILURE },
} as const satisfies Record<string, SessionInputEvent>;
type InputName = keyof typeof inputs;

/** An effect in short: `emit:turn.started`, `start`, `watchIdle:on`, … */
function short(effect: SessionEffect): string {
  switch (effect.type) {
    case 'emit':
      return effect.message.type === 'input.accepted' ? `accepted:${effect.message.as}` : effect.message.type === 'input.dropped' ? `dropped:${effect.message.reason}` : effect.message.type;
    case 'watchIdle':
    case 'watchAbort':
      return `${effect.type}:${effect.on ? 'on' : 'off'}`;
    default:
      return effect.type;
  }
}

const inPhase = (phase: SessionPhase, change: Partial<SessionState> = {}): SessionState => ({
  ...INITIAL_SESSION_STATE,
  phase,
  turn: phase === 'idle' ? 0 : 1,
  ...change,
});
const QUEUED: Partial<SessionState> = { followUps: [{ kind: 'follow-up', text: 'queued' }] };
const HELD: Partial<SessionState> = { held: [{ type: 'prompt', text: 'held' }] };
const DONE: Partial<SessionState> = { inputsDone: true };

type Row = [string, SessionState, InputName, SessionPhase, string[]];
const table: Row[] = [
  ['idle', inPhase('idle'), 'prompt', 'busy', ['accepted:turn', 'turn.started', 'start', 'watchIdle:on']],
  ['idle', inPhase('idle'), 'steer', 'busy', ['accepted:turn', 'turn.started', 'start', 'watchIdle:on']],
  ['idle', inPhase('idle'), 'followUp', 'busy', ['accepted:turn', 'turn.started', 'start', 'watchIdle:on']],
  ['idle', inPhase('idle'), 'abort', 'idle', ['dropped:no-turn']],
  ['idle', inPhase('idle'), 'bogus', 'idle', ['dropped:invalid']],
  ['idle', inPhase('idle'), 'done', 'ending', ['end', 'watchEnd']],
  ['idle', inPhase('idle'), 'text', 'idle', []],
  ['idle', inPhase('idle'), 'session', 'idle', ['session.started']],
  ['idle', inPhase('idle'), 'completed', 'idle', []],
  ['idle', inPhase('idle'), 'idle', 'idle', []],
  ['idle', inPhase('idle'), 'crash', 'ended', ['watchIdle:off', 'watchAbort:off', 'terminal.failed', 'complete']],
  ['idle', inPhase('idle'), 'cleanExit', 'ended', ['watchIdle:off', 'watchAbort:off', 'terminal.failed', 'complete']],
  ['busy', inPhase('busy'), 'prompt', 'busy', ['accepted:follow-up']],
  ['busy', inPhase('busy'), 'followUp', 'busy', ['accepted:follow-up']],
  ['busy', inPhase('busy'), 'steer', 'busy', ['accepted:steer', 'steer']],
  ['busy', inPhase('busy'), 'abort', 'aborting', ['accepted:abort', 'watchIdle:off', 'abort', 'watchAbort:on']],
  ['busy with a follow-up', inPhase('busy', QUEUED), 'abort', 'aborting', ['accepted:abort', 'dropped:aborted', 'watchIdle:off', 'abort', 'watchAbort:on']],
  ['busy', inPhase('busy'), 'text', 'busy', ['assistant']],
  ['busy', inPhase('busy'), 'completed', 'idle', ['watchIdle:off', 'watchAbort:off', 'turn.completed']],
  ['busy with a follow-up', inPhase('busy', QUEUED), 'completed', 'busy', ['watchIdle:off', 'watchAbort:off', 'turn.completed', 'turn.started', 'start', 'watchIdle:on']],
  ['busy, inputs done', inPhase('busy', DONE), 'completed', 'ending', ['watchIdle:off', 'watchAbort:off', 'turn.completed', 'end', 'watchEnd']],
  ['busy', inPhase('busy'), 'done', 'busy', []],
  ['busy', inPhase('busy'), 'idle', 'aborting', ['watchIdle:off', 'abort', 'watchAbort:on']],
  ['busy', inPhase('busy'), 'crash', 'ended', ['watchIdle:off', 'watchAbort:off', 'turn.failed', 'terminal.failed', 'complete']],
  ['busy with a follow-up', inPhase('busy', QUEUED), 'crash', 'ended', ['watchIdle:off', 'watchAbort:off', 'turn.failed', 'dropped:session-ended', 'terminal.failed', 'complete']],
  ['aborting', inPhase('aborting', { aborting: { reason: 'aborted' } }), 'abort', 'aborting', ['dropped:no-turn']],
  ['aborting', inPhase('aborting', { aborting: { reason: 'aborted' } }), 'steer', 'aborting', ['accepted:follow-up']],
  ['aborting', inPhase('aborting', { aborting: { reason: 'aborted' } }), 'prompt', 'aborting', ['accepted:follow-up']],
  ['aborting', inPhase('aborting', { aborting: { reason: 'aborted' } }), 'text', 'aborting', ['assistant']],
  ['aborting', inPhase('aborting', { aborting: { reason: 'aborted' } }), 'aborted', 'idle', ['watchIdle:off', 'watchAbort:off', 'turn.failed']],
  ['aborting', inPhase('aborting', { aborting: { reason: 'aborted' } }), 'completed', 'idle', ['watchIdle:off', 'watchAbort:off', 'turn.completed']],
  ['aborting', inPhase('aborting', { aborting: { reason: 'aborted' } }), 'idle', 'aborting', []],
  ['ending', inPhase('ending', DONE), 'cleanExit', 'ended', ['watchIdle:off', 'watchAbort:off', 'terminal.completed', 'complete']],
  ['ending', inPhase('ending', DONE), 'crash', 'ended', ['watchIdle:off', 'watchAbort:off', 'terminal.failed', 'complete']],
  ['ending', inPhase('ending', DONE), 'text', 'ending', []],
  ['opening', inPhase('opening'), 'prompt', 'opening', []],
  ['opening', inPhase('opening'), 'abort', 'opening', []],
  ['opening', inPhase('opening'), 'bogus', 'opening', []],
  ['opening', inPhase('opening'), 'session', 'opening', ['session.started']],
  ['opening', inPhase('opening'), 'text', 'opening', []],
  ['opening', inPhase('opening'), 'completed', 'opening', []],
  ['opening', inPhase('opening'), 'idle', 'opening', []],
  ['opening', inPhase('opening'), 'opened', 'idle', []],
  ['opening', inPhase('opening'), 'done', 'ending', ['end', 'watchEnd']],
  ['opening with a command held', inPhase('opening', HELD), 'done', 'opening', []],
  ['opening with a command held', inPhase('opening', HELD), 'opened', 'busy', ['accepted:turn', 'turn.started', 'start', 'watchIdle:on']],
  ['opening with a command held', inPhase('opening', HELD), 'crash', 'ended', ['watchIdle:off', 'watchAbort:off', 'dropped:session-ended', 'terminal.failed', 'complete']],
  ['opening', inPhase('opening'), 'crash', 'ended', ['watchIdle:off', 'watchAbort:off', 'terminal.failed', 'complete']],
  ['idle', inPhase('idle'), 'opened', 'idle', []],
  ['busy', inPhase('busy'), 'opened', 'busy', []],
  ['ended', inPhase('ended'), 'prompt', 'ended', []],
  ['ended', inPhase('ended'), 'crash', 'ended', []],
];

function walk(names: readonly (InputName | SessionInputEvent)[], from: SessionState = INITIAL_SESSION_STATE): { state: SessionState; messages: SessionMessage[]; effects: SessionEffect[] } {
  let state = from;
  const effects: SessionEffect[] = [];
  for (const name of names) {
    const result = sessionTransition(state, typeof name === 'string' ? inputs[name] : name);
    state = result.state;
    effects.push(...result.effects);
  }
  const messages = effects.flatMap((effect) => (effect.type === 'emit' ? [effect.message] : []));
  return { state, messages, effects };
}

describe('session machine', () => {
  it.each(table)('%s, on %s: goes to the next phase with its effects', (_, from, input, to, effects) => {
    const next = sessionTransition(from, inputs[input]);
    expect(next.state.phase).toBe(to);
    expect(next.effects.map(short)).toEqual(effects);
  });

  it('numbers turns from 1 and gives the prompt, the command id and the turn it concerns', () => {
    const { messages } = walk([{ type: 'command', command: { type: 'prompt', text: 'first', id: 'c1' } }, 'completed', { type: 'command', command: { type: 'steer', text: 'second', id: 'c2' } }]);
    expect(messages).toEqual([
      { type: 'input.accepted', kind: 'prompt', as: 'turn', turn: 1, text: 'first', commandId: 'c1' },
      { type: 'turn.started', turn: 1, prompt: 'first', commandId: 'c1' },
      { type: 'turn.completed', turn: 1, stopReason: 'end_turn' },
      { type: 'input.accepted', kind: 'steer', as: 'turn', turn: 2, text: 'second', commandId: 'c2' },
      { type: 'turn.started', turn: 2, prompt: 'second', commandId: 'c2' },
    ]);
  });

  it('runs queued follow-ups in order, one turn each, then ends when the inputs are done', () => {
    const { messages, effects } = walk(['session', 'prompt', 'followUp', 'prompt', 'done', 'completed', 'completed', 'completed', 'cleanExit']);
    expect(messages.flatMap((message) => (message.type === 'turn.started' ? [[message.turn, message.prompt]] : []))).toEqual([
      [1, 'p'],
      [2, 'f'],
      [3, 'p'],
    ]);
    expect(effects.map(short).filter((effect) => effect === 'start' || effect === 'end')).toEqual(['start', 'start', 'start', 'end']);
    expect(messages.at(-1)).toEqual({ type: 'terminal.completed', stopReason: 'end_turn', sessionId: 'id' });
  });

  it('sums the turns\' usage into the session terminal', () => {
    const usage = { inputTokens: 10, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0, totalTokens: 12 };
    const turn: SessionInputEvent = { type: 'turnEnded', outcome: { kind: 'completed', stopReason: 'max_tokens', usage } };
    const { messages } = walk(['session', 'prompt', turn, 'prompt', turn, 'done', 'cleanExit']);
    expect(messages.at(-1)).toEqual({
      type: 'terminal.completed',
      stopReason: 'max_tokens',
      usage: { inputTokens: 20, outputTokens: 4, cacheReadTokens: 0, cacheWriteTokens: 0, totalTokens: 24 },
      sessionId: 'id',
    });
  });

  it('fails a turn that went silent with reason timeout, and keeps its follow-ups', () => {
    const { messages, state } = walk(['prompt', 'followUp', 'idle', 'aborted']);
    expect(messages.find((message) => message.type === 'turn.failed')).toEqual({
      type: 'turn.failed',
      turn: 1,
      reason: 'timeout',
      message: 'no output for idleTimeoutMs (500 ms): the turn was aborted',
      timeout: { limit: 'idle', ms: 500 },
    });
    expect(state.phase).toBe('busy');
    expect(state.turn).toBe(2);
  });

  it('gives a running turn the failure of the process, then the session terminal with the session id', () => {
    const { messages } = walk(['prompt', 'session', 'crash']);
    expect(messages.slice(-2)).toEqual([{ type: 'turn.failed', turn: 1, reason: 'exit', message: 'pi exited with code 1' }, { ...FAILURE, sessionId: 'id' }]);
  });

  it('opening, holds the commands unanswered until opened, then reads them in order as if they came then', () => {
    const { messages, state } = walk(
      [
        { type: 'command', command: { type: 'prompt', text: 'first', id: 'c1' } },
        'followUp',
        { type: 'command', command: { type: 'abort', id: 'c3' } },
        'bogus',
        'done',
        'session',
        'opened',
      ],
      OPENING_SESSION_STATE,
    );
    expect(messages).toEqual([
      { type: 'session.started', sessionId: 'id' },
      { type: 'input.accepted', kind: 'prompt', as: 'turn', turn: 1, text: 'first', commandId: 'c1' },
      { type: 'turn.started', turn: 1, prompt: 'first', commandId: 'c1' },
      { type: 'input.accepted', kind: 'follow-up', as: 'follow-up', turn: 1, text: 'f' },
      { type: 'input.accepted', kind: 'abort', as: 'abort', turn: 1, commandId: 'c3' },
      { type: 'input.dropped', kind: 'follow-up', reason: 'aborted', message: 'dropped by the abort of turn 1', text: 'f' },
      { type: 'input.dropped', kind: 'prompt', reason: 'invalid', message: 'not a session command (text: Too small: expected string to have >=1 characters)', text: '' },
    ]);
    // The inputs are done: the session ends once the aborted turn does.
    expect(state).toMatchObject({ phase: 'aborting', inputsDone: true, held: [] });
    expect(walk(['aborted'], state).effects.map(short)).toEqual(['watchIdle:off', 'watchAbort:off', 'turn.failed', 'end', 'watchEnd']);
  });

  it('opening, ends at once when the commands complete with none held, and when it opens with the inputs done and nothing to run', () => {
    expect(walk(['done'], OPENING_SESSION_STATE).effects.map(short)).toEqual(['end', 'watchEnd']);
    expect(walk(['abort', 'done', 'opened'], OPENING_SESSION_STATE).effects.map(short)).toEqual(['dropped:no-turn', 'end', 'watchEnd']);
  });

  it('opening, drops what it held when the agent ends before it opened: session-ended, an invalid command as invalid', () => {
    const { messages } = walk([{ type: 'command', command: { type: 'prompt', text: 'p', id: 'c1' } }, 'abort', 'bogus', 'crash'], OPENING_SESSION_STATE);
    expect(messages).toEqual([
      { type: 'input.dropped', kind: 'prompt', reason: 'session-ended', message: 'the session ended before it could run', text: 'p', commandId: 'c1' },
      { type: 'input.dropped', kind: 'abort', reason: 'session-ended', message: 'the session ended before it could run' },
      expect.objectContaining({ type: 'input.dropped', kind: 'prompt', reason: 'invalid', text: '' }),
      FAILURE,
    ]);
  });

  it('announces the session once, however often the agent repeats it', () => {
    const { messages } = walk(['session', 'prompt', 'session', 'completed', 'session']);
    expect(messages.filter((message) => message.type === 'session.started')).toHaveLength(1);
  });

  it('drops a steer the agent refused, with the agent\'s reason', () => {
    const { messages } = walk(['prompt', { type: 'inputRejected', input: { kind: 'steer', text: 's', commandId: 'c9' }, message: 'no active turn' }]);
    expect(messages.at(-1)).toEqual({ type: 'input.dropped', kind: 'steer', reason: 'rejected', message: 'no active turn', text: 's', commandId: 'c9' });
  });

  it('drops values that are not commands, saying what is wrong', () => {
    const { messages } = walk([
      { type: 'command', command: null },
      { type: 'command', command: { type: 'shout', text: 'x' } },
      { type: 'command', command: { type: 'prompt' } },
    ]);
    expect(messages.map((message) => message.type === 'input.dropped' && [message.kind, message.reason])).toEqual([
      ['invalid', 'invalid'],
      ['invalid', 'invalid'],
      ['prompt', 'invalid'],
    ]);
  });

  // The invariants of a session, over random inputs in any order.
  const anyInput = fc.constantFrom<InputName>('prompt', 'steer', 'followUp', 'abort', 'bogus', 'done', 'text', 'session', 'completed', 'aborted', 'idle');
  const anyEnd = fc.constantFrom<InputName>('cleanExit', 'crash');

  it('opening, announces the session before anything else, and keeps every invariant, whenever the commands come', () => {
    fc.assert(
      fc.property(fc.array(anyInput, { maxLength: 40 }), fc.option(fc.nat(40), { nil: undefined }), anyEnd, (names, at, end) => {
        // No command comes after the command stream completed. The protocol announces the session,
        // then says opened; or the agent ends before it could.
        const done = names.indexOf('done');
        const inputs: InputName[] = (done === -1 ? names : names.slice(0, done + 1)).filter((name) => name !== 'session');
        if (at !== undefined) inputs.splice(Math.min(at, inputs.length), 0, 'session', 'opened');
        const { messages } = walk([...inputs, end], OPENING_SESSION_STATE);
        const first = messages.findIndex((message) => message.type !== 'session.started');
        if (at !== undefined) expect(messages[0]?.type).toBe('session.started');
        expect(messages.slice(first).some((message) => message.type === 'session.started')).toBe(false);
        const commands = inputs.filter((name) => ['prompt', 'steer', 'followUp', 'abort', 'bogus'].includes(name)).length;
        // Every command answered once: accepted, dropped, or (never opened) dropped as the session ended.
        const answered = messages.filter(
          (message) =>
            message.type === 'input.accepted' ||
            (message.type === 'input.dropped' && (!['aborted', 'session-ended'].includes(message.reason) || (at === undefined && message.reason === 'session-ended'))),
        ).length;
        expect(answered).toBe(commands);
        expect(messages.filter((message) => message.type.startsWith('terminal.'))).toHaveLength(1);
        expect(messages.at(-1)?.type.startsWith('terminal.')).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('keeps its invariants whatever the order of inputs', () => {
    fc.assert(
      fc.property(fc.array(anyInput, { maxLength: 40 }), anyEnd, (names, end) => {
        const { messages } = walk([...names, end]);
        let running: number | null = null;
        let last = 0;
        let terminals = 0;
        const commands = names.filter((name) => ['prompt', 'steer', 'followUp', 'abort', 'bogus'].includes(name)).length;
        let answered = 0;
        for (const message of messages) {
          if (message.type === 'turn.started') {
            expect(running).toBeNull(); // turns never overlap
            expect(message.turn).toBe(last + 1);
            running = message.turn;
            last = message.turn;
          } else if (message.type === 'turn.completed' || message.type === 'turn.failed') {
            expect(message.turn).toBe(running); // each ends once, the one running
            running = null;
          } else if (message.type === 'input.accepted' || message.type === 'input.dropped') {
            // A queued follow-up dropped later was answered when it was accepted.
            if (message.type === 'input.accepted' || (message.reason !== 'aborted' && message.reason !== 'session-ended')) answered += 1;
          } else if (message.type === 'terminal.completed' || message.type === 'terminal.failed') {
            terminals += 1;
            expect(running).toBeNull(); // a running turn ended before the terminal
          } else if (message.type !== 'session.started') {
            expect(running).not.toBeNull(); // content only inside a turn
          }
        }
        expect(answered).toBe(commands); // every command answered once, at once
        expect(terminals).toBe(1);
        expect(messages.at(-1)?.type.startsWith('terminal.')).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});
