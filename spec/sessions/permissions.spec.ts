import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { defer, EMPTY, NEVER, of, throwError } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import type { PermissionDecision, PermissionRequested, PermissionResolver, SessionMessage, TerminalFailed } from '../../lib/messages.js';
import { presetDecision, type PermissionPolicy } from '../../lib/operators/permission-policy.js';
import { PermissionDesk } from '../../lib/sessions/permission-desk.js';
import { INITIAL_SESSION_STATE, offered, sessionTransition, type SessionEffect, type SessionInputEvent, type SessionState } from '../../lib/sessions/session-machine.js';

// The resolution rules of permission requests, on the pure session machine and on the desk that
// decides them (presets, callbacks, the deadline), with virtual time.

const FAILURE: TerminalFailed = {
  type: 'terminal.failed',
  reason: 'exit',
  message: 'the agent exited with code 1',
  exitCode: 1,
  signal: null,
  stderr: '',
  stderrTruncatedBytes: 0,
  invalidOutputLines: [],
  invalidOutputLinesOmitted: 0,
};

const request = (requestId: string, options: PermissionDecision[] = ['allow', 'allow-always', 'deny']): SessionInputEvent => ({
  type: 'permissionRequested',
  request: { requestId, toolCallId: `call-${requestId}`, tool: 'bash', kind: 'execute', title: 'touch x', input: { command: 'touch x' }, options },
});
const decided = (requestId: string, decision: PermissionDecision, by: PermissionResolver = 'caller'): SessionInputEvent => ({ type: 'permissionDecided', requestId, decision, by });
const command = (requestId: string, decision: PermissionDecision, id?: string): SessionInputEvent => ({
  type: 'command',
  command: { type: 'permission', requestId, decision, ...(id === undefined ? {} : { id }) },
});
const prompt: SessionInputEvent = { type: 'command', command: { type: 'prompt', text: 'p' } };

function walk(inputs: readonly SessionInputEvent[], from: SessionState = INITIAL_SESSION_STATE): { state: SessionState; effects: SessionEffect[]; messages: SessionMessage[] } {
  let state = from;
  const effects: SessionEffect[] = [];
  for (const input of inputs) {
    const next = sessionTransition(state, input);
    state = next.state;
    effects.push(...next.effects);
  }
  return { state, effects, messages: effects.flatMap((effect) => (effect.type === 'emit' ? [effect.message] : [])) };
}

/** The effects in short, from the first permission request on. */
function short(effects: readonly SessionEffect[]): string[] {
  return effects.map((effect) => {
    switch (effect.type) {
      case 'emit': {
        const message = effect.message;
        if (message.type === 'permission.resolved') return `resolved:${message.requestId}:${message.decision}:${message.by}`;
        if (message.type === 'permission.requested') return `requested:${message.requestId}`;
        if (message.type === 'input.accepted' || message.type === 'input.dropped') return `${message.type}:${message.kind}`;
        return message.type;
      }
      case 'answerPermission':
        return `answer:${effect.requestId}:${effect.decision}`;
      case 'decidePermission':
        return `decide:${effect.request.requestId}`;
      case 'watchIdle':
      case 'watchAbort':
        return `${effect.type}:${effect.on ? 'on' : 'off'}`;
      default:
        return effect.type;
    }
  });
}

const busy = walk([prompt]).state;

describe('permission requests in the session machine', () => {
  it('a request in a running turn is said, pauses the idle limit and is decided; its decision is said and answered, and the limit resumes', () => {
    const asked = walk([request('r1')], busy);
    expect(short(asked.effects)).toEqual(['requested:r1', 'watchIdle:off', 'decide:r1']);
    expect(asked.messages[0]).toEqual({ type: 'permission.requested', requestId: 'r1', toolCallId: 'call-r1', tool: 'bash', kind: 'execute', title: 'touch x', input: { command: 'touch x' }, options: ['allow', 'allow-always', 'deny'] });
    expect(short(walk([decided('r1', 'allow')], asked.state).effects)).toEqual(['resolved:r1:allow:caller', 'answer:r1:allow', 'watchIdle:on']);
  });

  it('resolves each request exactly once: a later decision, a repeated request id, a second command change nothing', () => {
    const { effects } = walk([request('r1'), request('r1'), decided('r1', 'allow', 'policy'), decided('r1', 'deny', 'deadline'), command('r1', 'deny', 'late')], busy);
    expect(short(effects)).toEqual(['requested:r1', 'watchIdle:off', 'decide:r1', 'resolved:r1:allow:policy', 'answer:r1:allow', 'watchIdle:on', 'input.dropped:permission']);
    const dropped = walk([command('r1', 'deny', 'late')], busy).messages[0];
    expect(dropped).toEqual({ type: 'input.dropped', kind: 'permission', reason: 'no-request', message: 'no pending permission request r1: unknown, or already resolved', requestId: 'r1', commandId: 'late' });
  });

  it('a permission command answers its request, by the caller; the idle limit resumes only when none waits', () => {
    const { effects, messages } = walk([request('r1'), request('r2'), command('r2', 'deny', 'c'), command('r1', 'allow')], busy);
    expect(short(effects)).toEqual([
      'requested:r1',
      'watchIdle:off',
      'decide:r1',
      'requested:r2',
      'watchIdle:off',
      'decide:r2',
      'input.accepted:permission',
      'resolved:r2:deny:caller',
      'answer:r2:deny',
      'input.accepted:permission',
      'resolved:r1:allow:caller',
      'answer:r1:allow',
      'watchIdle:on',
    ]);
    expect(messages).toContainEqual({ type: 'input.accepted', kind: 'permission', as: 'permission', turn: 1, requestId: 'r2', commandId: 'c' });
  });

  it('an abort settles every pending request, denied, before the agent is asked to abort', () => {
    const { effects } = walk([request('r1'), request('r2'), { type: 'command', command: { type: 'abort' } }], busy);
    expect(short(effects).slice(6)).toEqual([
      'input.accepted:abort',
      'resolved:r1:deny:abort',
      'answer:r1:deny',
      'resolved:r2:deny:abort',
      'answer:r2:deny',
      'watchIdle:off',
      'abort',
      'watchAbort:on',
    ]);
  });

  it('the end of the turn settles its requests (turn-end) before the turn ends', () => {
    const { effects } = walk([request('r1'), { type: 'turnEnded', outcome: { kind: 'completed', stopReason: 'end_turn' } }], busy);
    expect(short(effects).slice(3)).toEqual(['resolved:r1:deny:turn-end', 'answer:r1:deny', 'watchIdle:off', 'watchAbort:off', 'turn.completed']);
  });

  it('the end of the process settles them (run-end) before the turn fails and the session ends', () => {
    const { effects, state } = walk([request('r1'), { type: 'exited', clean: false, failure: FAILURE }], busy);
    expect(short(effects).slice(3)).toEqual(['resolved:r1:deny:run-end', 'answer:r1:deny', 'watchIdle:off', 'watchAbort:off', 'turn.failed', 'terminal.failed', 'complete']);
    expect(state.permissions).toEqual([]);
  });

  it('a protocol that cancelled its prompt by itself (a steer) settles them, by abort', () => {
    expect(short(walk([request('r1'), { type: 'settlePermissions' }], busy).effects).slice(3)).toEqual(['resolved:r1:deny:abort', 'answer:r1:deny']);
  });

  it('a request outside a running turn is denied at once: said while aborting, unsaid between turns (content lies inside turns)', () => {
    const aborting = walk([{ type: 'command', command: { type: 'abort' } }], busy).state;
    expect(short(walk([request('r1')], aborting).effects)).toEqual(['requested:r1', 'resolved:r1:deny:abort', 'answer:r1:deny']);
    expect(short(walk([request('r1')], INITIAL_SESSION_STATE).effects)).toEqual(['answer:r1:deny']);
    const ended = walk([{ type: 'exited', clean: true, failure: FAILURE }]).state;
    expect(walk([request('r1')], ended).effects).toEqual([]);
  });

  it('a decision the agent does not offer is narrowed: always to once, never to an allow it lacks', () => {
    const { messages } = walk([request('r1', ['allow', 'deny']), decided('r1', 'allow-always')], busy);
    expect(messages.at(-1)).toEqual({ type: 'permission.resolved', requestId: 'r1', decision: 'allow', by: 'caller' });
    expect(offered('deny-always', ['allow', 'deny'])).toBe('deny');
    expect(offered('allow', ['deny'])).toBe('deny');
    expect(offered('deny-always', ['allow', 'deny', 'deny-always'])).toBe('deny-always');
  });

  it('refuses a permission command that is not one, in the stream', () => {
    const { messages } = walk([{ type: 'command', command: { type: 'permission', requestId: 'r1', decision: 'maybe' } }], busy);
    expect(messages).toEqual([expect.objectContaining({ type: 'input.dropped', kind: 'permission', reason: 'invalid' })]);
  });
});

describe('presets', () => {
  it("'allow-reads' allows what only reads, and nothing that edits, deletes, moves, executes or fetches", () => {
    expect((['read', 'search', 'think'] as const).map((kind) => presetDecision('allow-reads', { kind }))).toEqual(['allow', 'allow', 'allow']);
    expect((['edit', 'delete', 'move', 'execute', 'fetch', 'other'] as const).map((kind) => presetDecision('allow-reads', { kind }))).toEqual(['deny', 'deny', 'deny', 'deny', 'deny', 'deny']);
    expect(presetDecision('allow-all', { kind: 'execute' })).toBe('allow');
    expect(presetDecision('deny-all', { kind: 'read' })).toBe('deny');
    expect(presetDecision('ask', { kind: 'read' })).toBeUndefined();
  });
});

const REQUEST: PermissionRequested = { type: 'permission.requested', requestId: 'r1', tool: 'bash', kind: 'execute', title: 'touch x', input: {}, options: ['allow', 'deny'] };

/** What a desk reports, in virtual time: `decided` and `failed` with the frame they came at. */
function onDesk(testScheduler: TestScheduler, policy: PermissionPolicy, timeoutMs = 100) {
  const log: string[] = [];
  const errors: unknown[] = [];
  const desk = new PermissionDesk(policy, timeoutMs, testScheduler, {
    decided: (requestId, decision, by) => log.push(`${testScheduler.now()}:${requestId}:${decision}:${by}`),
    fail: (error) => {
      errors.push(error);
      log.push(`${testScheduler.now()}:failed`);
    },
  });
  return { desk, log, errors };
}

const scheduler = (): TestScheduler =>
  new TestScheduler((actual, expected) => {
    expect(actual).toEqual(expected);
  });

describe('the permission desk', () => {
  it('a preset decides at once, by the policy', () => {
    const testScheduler = scheduler();
    testScheduler.run(() => {
      const { desk, log } = onDesk(testScheduler, 'allow-reads');
      desk.decide(REQUEST);
      desk.decide({ ...REQUEST, requestId: 'r2', kind: 'read' });
      expect(log).toEqual(['0:r1:deny:policy', '0:r2:allow:policy']);
    });
  });

  it('a callback decides with a value, a promise or the first value of an Observable, by the caller', async () => {
    const testScheduler = scheduler();
    testScheduler.run(({ cold, flush }) => {
      const { desk, log } = onDesk(testScheduler, (request) => (request.requestId === 'value' ? 'allow' : cold<PermissionDecision>('-----a-d|', { a: 'allow-always', d: 'deny' })));
      desk.decide({ ...REQUEST, requestId: 'value' });
      desk.decide({ ...REQUEST, requestId: 'later' });
      flush();
      expect(log).toEqual(['0:value:allow:caller', '5:later:allow-always:caller']);
    });
    const log: string[] = [];
    const desk = new PermissionDesk(() => Promise.resolve('deny'), 1000, testScheduler, { decided: (id, decision, by) => log.push(`${id}:${decision}:${by}`), fail: () => undefined });
    desk.decide(REQUEST);
    await Promise.resolve();
    await Promise.resolve();
    expect(log).toEqual(['r1:deny:caller']);
  });

  it('the deadline denies what is not answered in time (ask, a silent callback, an Observable that ends without a value), and aborts the callback', () => {
    const testScheduler = scheduler();
    testScheduler.run(({ flush }) => {
      const signals: AbortSignal[] = [];
      const ask = onDesk(testScheduler, 'ask', 50);
      ask.desk.decide(REQUEST);
      const silent = onDesk(testScheduler, (_, signal) => {
        signals.push(signal);
        return NEVER;
      });
      silent.desk.decide(REQUEST);
      const empty = onDesk(testScheduler, () => EMPTY);
      empty.desk.decide(REQUEST);
      flush();
      expect([...ask.log, ...silent.log, ...empty.log]).toEqual(['50:r1:deny:deadline', '100:r1:deny:deadline', '100:r1:deny:deadline']);
      expect(signals[0]?.aborted).toBe(true);
    });
  });

  it('forget stops deciding: no decision comes, the signal aborts, the callback is unsubscribed', () => {
    const testScheduler = scheduler();
    testScheduler.run(({ cold, expectSubscriptions, flush }) => {
      const answer = cold<PermissionDecision>('----a|', { a: 'allow' });
      let signal: AbortSignal | undefined;
      const { desk, log } = onDesk(testScheduler, (_, given) => {
        signal = given;
        return answer;
      });
      desk.decide(REQUEST);
      testScheduler.schedule(() => {
        desk.forget('r1');
      }, 2);
      flush();
      expect(log).toEqual([]);
      expect(signal?.aborted).toBe(true);
      expectSubscriptions(answer.subscriptions).toBe('^-!');
    });
  });

  it('a callback that throws, rejects, errors or gives what is not a decision goes to the error channel', async () => {
    const testScheduler = scheduler();
    const boom = new Error('boom');
    const failures: unknown[] = [];
    const policies: PermissionPolicy[] = [
      () => {
        throw boom;
      },
      () => Promise.reject(boom),
      () => throwError(() => boom),
      () => 'yes' as PermissionDecision,
      () => defer(() => of('maybe' as PermissionDecision)),
    ];
    for (const policy of policies) {
      const desk = new PermissionDesk(policy, 1000, testScheduler, { decided: () => failures.push('decided'), fail: (error) => failures.push(error) });
      desk.decide(REQUEST);
    }
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(failures).toHaveLength(5);
    expect(failures.filter((failure) => failure === boom)).toHaveLength(3);
    expect(failures.filter((failure) => failure instanceof TypeError).map((failure) => failure.message)).toEqual([
      'agent-rx: the permission callback gave "yes" for request r1: not allow, allow-always, deny or deny-always',
      'agent-rx: the permission callback gave "maybe" for request r1: not allow, allow-always, deny or deny-always',
    ]);
  });

  it('two desks share nothing: each decides its own requests, and forgetting in one leaves the other', () => {
    const testScheduler = scheduler();
    testScheduler.run(({ flush }) => {
      const one = onDesk(testScheduler, 'ask', 10);
      const two = onDesk(testScheduler, 'ask', 20);
      one.desk.decide(REQUEST);
      two.desk.decide(REQUEST);
      one.desk.forget('r1');
      flush();
      expect(one.log).toEqual([]);
      expect(two.log).toEqual(['20:r1:deny:deadline']);
    });
  });

  it('clear forgets every request', () => {
    const testScheduler = scheduler();
    testScheduler.run(({ flush }) => {
      const { desk, log } = onDesk(testScheduler, 'ask', 10);
      desk.decide(REQUEST);
      desk.decide({ ...REQUEST, requestId: 'r2' });
      desk.clear();
      flush();
      expect(log).toEqual([]);
    });
  });
});

describe('the invariants of permission requests, over random inputs', () => {
  // Session inputs, and permission requests, decisions and commands for ids 0..4 in any order.
  const anyInput = fc.oneof(
    fc.constantFrom<SessionInputEvent>(
      prompt,
      { type: 'command', command: { type: 'steer', text: 's' } },
      { type: 'command', command: { type: 'abort' } },
      { type: 'content', message: { type: 'assistant', text: 'x' } },
      { type: 'turnEnded', outcome: { kind: 'completed', stopReason: 'end_turn' } },
      { type: 'turnEnded', outcome: { kind: 'failed', reason: 'aborted', message: 'aborted' } },
      { type: 'idleExpired', ms: 500 },
      { type: 'settlePermissions' },
      { type: 'inputsCompleted' },
    ),
    fc.nat(4).map((n) => request(`r${n}`)),
    fc.tuple(fc.nat(4), fc.constantFrom<PermissionDecision>('allow', 'allow-always', 'deny', 'deny-always'), fc.constantFrom<PermissionResolver>('caller', 'policy')).map(([n, decision, by]) => decided(`r${n}`, decision, by)),
    fc.nat(4).map((n) => decided(`r${n}`, 'deny', 'deadline')),
    fc.tuple(fc.nat(5), fc.constantFrom<PermissionDecision>('allow', 'deny')).map(([n, decision]) => command(`r${n}`, decision)),
  );

  it('every request said is resolved exactly once, inside its turn, before that turn ends; every request is answered exactly once; every permission command is answered', () => {
    fc.assert(
      fc.property(fc.array(anyInput, { maxLength: 60 }), fc.boolean(), (inputs, clean) => {
        const { effects } = walk([...inputs, { type: 'exited', clean, failure: FAILURE }]);
        const open = new Set<string>();
        const said = new Map<string, number>();
        const answers = new Map<string, number>();
        let running = false;
        let permissionCommands = 0;
        for (const effect of effects) {
          if (effect.type === 'answerPermission') answers.set(effect.requestId, (answers.get(effect.requestId) ?? 0) + 1);
          if (effect.type !== 'emit') continue;
          const message = effect.message;
          if (message.type === 'turn.started') running = true;
          else if (message.type === 'turn.completed' || message.type === 'turn.failed') {
            expect([...open]).toEqual([]); // resolved before its turn ends
            running = false;
          } else if (message.type === 'permission.requested') {
            expect(running).toBe(true); // said only inside a turn
            expect(open.has(message.requestId)).toBe(false);
            open.add(message.requestId);
            said.set(message.requestId, (said.get(message.requestId) ?? 0) + 1);
          } else if (message.type === 'permission.resolved') {
            expect(open.delete(message.requestId)).toBe(true); // resolves a request that waits, once
            if (!['caller', 'policy'].includes(message.by)) expect(message.decision).toBe('deny');
          } else if ((message.type === 'input.accepted' || message.type === 'input.dropped') && message.kind === 'permission') permissionCommands += 1;
          else if (message.type.startsWith('terminal.')) expect([...open]).toEqual([]);
        }
        expect(open.size).toBe(0);
        // Each request of the agent gets one answer, whether it was said or not (outside a turn, or a repeated id while it waited, is answered once).
        const requests = inputs.filter((input) => input.type === 'permissionRequested');
        const answered = [...answers.values()].reduce((sum, count) => sum + count, 0);
        expect(answered).toBeLessThanOrEqual(requests.length);
        for (const [id, count] of said) expect(answers.get(id)).toBeGreaterThanOrEqual(count);
        expect(permissionCommands).toBe(inputs.filter((input) => input.type === 'command' && (input.command as { type: string }).type === 'permission').length);
      }),
      { numRuns: 1000 },
    );
  });
});
