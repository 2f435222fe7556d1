import { describe, expect, it } from '@jest/globals';
import { NEVER, of, Subject } from 'rxjs';
import { CallerAsks } from '../../lib/fleet/caller-asks.js';
import { parseAnswerMessage } from '../../lib/fleet/permission-answers.js';
import { checkRunSpec } from '../../lib/fleet/run-spec.js';
import type { PermissionDecision, PermissionRequested } from '../../lib/index.js';

const request = (requestId: string): PermissionRequested => ({ type: 'permission.requested', requestId, tool: 'bash', kind: 'execute', title: 'touch x', input: { command: 'touch x' }, options: ['allow', 'deny'] });

function asks(callback: ConstructorParameters<typeof CallerAsks>[0]): { asks: CallerAsks; answers: [string, PermissionDecision][]; failures: unknown[] } {
  const answers: [string, PermissionDecision][] = [];
  const failures: unknown[] = [];
  return {
    asks: new CallerAsks(callback, {
      answer: (id, decision) => answers.push([id, decision]),
      fail: (error) => failures.push(error),
    }),
    answers,
    failures,
  };
}

describe("a fleet caller's asking (permission: 'ask')", () => {
  it('answers each request once with the callback\u2019s decision: a value, or an Observable\u2019s first value', () => {
    const { asks: desk, answers } = asks((asked) => (asked.requestId === 'a' ? 'deny' : of('allow' as const, 'deny' as const)));
    desk.see(request('a'));
    desk.see(request('a'));
    desk.see(request('b'));
    expect(answers).toEqual([
      ['a', 'deny'],
      ['b', 'allow'],
    ]);
  });

  it('aborts the callback\u2019s signal when the request is resolved otherwise, and drops its late decision', () => {
    const decisions = new Subject<PermissionDecision>();
    let signal: AbortSignal | undefined;
    const { asks: desk, answers } = asks((_asked, given) => {
      signal = given;
      return decisions;
    });
    desk.see(request('a'));
    desk.see({ type: 'permission.resolved', requestId: 'a', decision: 'deny', by: 'deadline' });
    expect(signal?.aborted).toBe(true);
    decisions.next('allow');
    expect(answers).toEqual([]);
  });

  it('close aborts every waiting callback and asks nothing more', () => {
    const signals: AbortSignal[] = [];
    const { asks: desk, answers } = asks((_asked, given) => {
      signals.push(given);
      return NEVER;
    });
    desk.see(request('a'));
    desk.see(request('b'));
    desk.close();
    desk.see(request('c'));
    expect(signals.map((signal) => signal.aborted)).toEqual([true, true]);
    expect(answers).toEqual([]);
  });

  it('a callback that throws, errors, or gives what is not a decision fails (the stream errors)', async () => {
    const thrown = asks(() => {
      throw new Error('boom');
    });
    thrown.asks.see(request('a'));
    expect(thrown.failures).toEqual([new Error('boom')]);
    const rejected = asks(() => Promise.reject(new Error('later')));
    rejected.asks.see(request('a'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(rejected.failures).toEqual([new Error('later')]);
    const wrong = asks(() => 'yes' as PermissionDecision);
    wrong.asks.see(request('a'));
    expect(String(wrong.failures[0])).toBe('TypeError: agent-rx: the permission callback gave "yes" for request a: not allow, allow-always, deny or deny-always');
    expect(wrong.answers).toEqual([]);
  });
});

describe('the permission channel and the spec', () => {
  it('takes only answers that are ones', () => {
    expect(parseAnswerMessage(JSON.stringify({ runId: 'r', requestId: 'q', decision: 'allow-always' }))).toEqual({ runId: 'r', requestId: 'q', decision: 'allow-always' });
    for (const text of ['', 'r', JSON.stringify({ runId: 'r', requestId: 'q', decision: 'maybe' }), JSON.stringify({ runId: 'r', decision: 'allow' }), 'null']) {
      expect(parseAnswerMessage(text)).toBeNull();
    }
  });

  it('a spec takes permission and its deadline, checked, outside the options', () => {
    expect(checkRunSpec({ agent: 'pi', options: { prompt: 'hi' }, permission: 'ask', permissionTimeoutMs: 1000 })).toEqual({ agent: 'pi', options: { prompt: 'hi' }, permission: 'ask', permissionTimeoutMs: 1000 });
    expect(checkRunSpec({ agent: 'claude', options: { prompt: 'hi' }, permission: 'allow-reads' })).toMatchObject({ permission: 'allow-reads' });
    expect(() => checkRunSpec({ agent: 'pi', options: { prompt: 'hi' }, permission: 'sometimes' })).toThrow('not a run spec: permission must be one of allow-all, allow-reads, deny-all, ask; got "sometimes"');
    expect(() => checkRunSpec({ agent: 'pi', options: { prompt: 'hi', permission: 'ask' } })).toThrow('options has no option "permission"');
    expect(() => checkRunSpec({ agent: 'codex', options: { prompt: 'hi' }, permissionTimeoutMs: -1 })).toThrow(TypeError);
  });
});
