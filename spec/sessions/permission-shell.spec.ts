import { afterEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NEVER } from 'rxjs';
import { stopAllRuns, type PermissionDecision } from '../../lib/index.js';
import { eventually } from '../conformance/suite.js';
import { SessionDriver } from '../conformance/session-driver.js';
import { fixtureSession, type FixtureSessionOptions } from '../helpers/fixture-session.js';
import { createProcessTag, describeProcesses } from '../helpers/tagged-processes.js';

// The permission channel of the session shell on a real child process: the fixture agent asks
// (`ask:C`), waits for the answer on stdin, and says what it did. What is checked is what the
// agent received, not only what the stream says.

const TAG = createProcessTag('AGENT_RX_PERMISSION_SHELL');
const drivers: SessionDriver[] = [];
const folders: string[] = [];

function drive(options: Omit<FixtureSessionOptions, 'tag'> = {}): { session: SessionDriver; answers: () => { id: number; allow: boolean }[] } {
  const folder = mkdtempSync(join(tmpdir(), 'agent-rx-permissions-'));
  folders.push(folder);
  const log = join(folder, 'answers.jsonl');
  const session = new SessionDriver((onStopped) => fixtureSession(onStopped, { ...options, tag: TAG, env: { ANSWERS_LOG: log, ...options.env } }));
  drivers.push(session);
  const answers = (): { id: number; allow: boolean }[] => {
    try {
      return readFileSync(log, 'utf8')
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as { id: number; allow: boolean });
    } catch {
      return [];
    }
  };
  return { session, answers };
}

afterEach(async () => {
  for (const driver of drivers.splice(0)) driver.unsubscribe();
  await stopAllRuns();
  expect(describeProcesses(await TAG.waitUntilNone(5000))).toBe('none');
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

describe('permission requests on a real process', () => {
  it('a callback allows: the agent is answered allow and goes on; a deny: it refuses', async () => {
    const decisions: PermissionDecision[] = ['allow', 'deny'];
    const { session, answers } = drive({ permission: () => decisions.shift() ?? 'deny' });
    session.send({ type: 'prompt', text: 'ask:touch a' });
    session.send({ type: 'prompt', text: 'ask:touch b' });
    await session.nextOf('turn.completed');
    await session.nextOf('turn.completed');
    expect(session.answer(1)).toBe('ran touch a|');
    expect(session.answer(2)).toBe('refused touch b|');
    expect(answers().map((answer) => answer.allow)).toEqual([true, false]);
    const [first, second] = session.messages.filter((message) => message.type === 'permission.requested');
    expect(first).toMatchObject({ tool: 'bash', kind: 'execute', title: 'touch a', input: { command: 'touch a' }, options: ['allow', 'deny'] });
    expect(first?.type === 'permission.requested' && second?.type === 'permission.requested' && first.requestId !== second.requestId).toBe(true);
    session.end();
    await session.done;
  });

  it('without a policy, every request is denied at once by the default (deny-all)', async () => {
    const { session, answers } = drive();
    session.send({ type: 'prompt', text: 'ask:rm -rf build' });
    expect(await session.nextOf('permission.resolved')).toMatchObject({ decision: 'deny', by: 'policy' });
    await session.nextOf('turn.completed');
    expect(session.answer(1)).toBe('refused rm -rf build|');
    expect(answers()).toHaveLength(1);
    session.end();
    await session.done;
  });

  it("'ask' waits for a permission command; the idle limit does not run while a request waits", async () => {
    // The limit is long enough for the request to come on a loaded machine, and the wait twice it.
    const { session } = drive({ permission: 'ask', idleTimeoutMs: 2000 });
    session.send({ type: 'prompt', text: 'ask:touch c' });
    const request = await session.nextOf('permission.requested');
    // Longer than the idle limit: the turn is not aborted while the host decides.
    await new Promise((resolve) => setTimeout(resolve, 4000));
    expect(session.messages.some((message) => message.type === 'turn.failed')).toBe(false);
    session.send({ type: 'permission', requestId: request.requestId, decision: 'allow' });
    expect(await session.nextOf('turn.completed')).toMatchObject({ turn: 1 });
    expect(session.answer(1)).toBe('ran touch c|');
    session.end();
    await session.done;
  });

  it('an unsubscribe while a request waits: the agent is answered deny before it is stopped, and no process is left', async () => {
    const { session, answers } = drive({ permission: () => NEVER });
    session.send({ type: 'prompt', text: 'ask:touch d' });
    await session.nextOf('permission.requested');
    session.unsubscribe();
    await session.stopped;
    expect(answers().map((answer) => answer.allow)).toEqual([false]);
  });

  it('stopAllRuns while a request waits: it is resolved (run-end) before the turn and the session end', async () => {
    const { session, answers } = drive({ permission: 'ask' });
    session.send({ type: 'prompt', text: 'ask:touch e' });
    const request = await session.nextOf('permission.requested');
    await stopAllRuns();
    const messages = await session.done;
    const resolved = messages.findIndex((message) => message.type === 'permission.resolved');
    expect(messages[resolved]).toEqual({ type: 'permission.resolved', requestId: request.requestId, decision: 'deny', by: 'run-end' });
    // The turn ends after it (the agent may even finish it, answered, before the signal lands).
    expect(resolved).toBeLessThan(messages.findIndex((message) => message.type === 'turn.failed' || message.type === 'turn.completed'));
    expect(messages.at(-1)).toMatchObject({ type: 'terminal.failed' });
    await eventually(() => answers().length === 1);
    expect(answers()[0]?.allow).toBe(false);
  });

  it('a callback that throws errors the stream and stops the agent', async () => {
    const { session } = drive({
      permission: () => {
        throw new Error('policy bug');
      },
    });
    session.send({ type: 'prompt', text: 'ask:touch f' });
    await expect(session.done).rejects.toThrow('policy bug');
    await session.stopped;
  });
});
