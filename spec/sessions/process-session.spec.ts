import { afterEach, describe, expect, it } from '@jest/globals';
import { from, lastValueFrom, NEVER, Subject, throwError, toArray, type OperatorFunction } from 'rxjs';
import { knownTypes, stopAllRuns, type SessionCommand, type SessionMessage, type SessionProtocol, type StopReport } from '../../lib/index.js';
import { SessionDriver } from '../conformance/session-driver.js';
import { eventually } from '../conformance/suite.js';
import { fixtureDialect, fixtureProtocol, fixtureSession, type FixtureSessionOptions } from '../helpers/fixture-session.js';
import { isAlive } from '../helpers/processes.js';
import { createProcessTag, describeProcesses } from '../helpers/tagged-processes.js';

// The session shell on a real child process: a tiny agent (spec/fixtures/session-agent.mjs) with a
// protocol and dialect of the specs' own (spec/helpers/fixture-session.ts). What the shell adds to the machine is checked: lines to and
// from the process, the idle, abort and end limits, failures of the process, and teardown.

const TAG = createProcessTag('AGENT_RX_SESSION_SHELL');

function session(onStopped: (report: StopReport) => void, options: Omit<FixtureSessionOptions, 'tag'> = {}): OperatorFunction<SessionCommand, SessionMessage> {
  return fixtureSession(onStopped, { ...options, tag: TAG });
}

const drivers: SessionDriver[] = [];
function drive(options: Omit<FixtureSessionOptions, 'tag'> = {}): SessionDriver {
  const driver = new SessionDriver((onStopped) => session(onStopped, options));
  drivers.push(driver);
  return driver;
}

afterEach(async () => {
  for (const driver of drivers.splice(0)) driver.unsubscribe();
  await stopAllRuns();
  expect(describeProcesses(await TAG.waitUntilNone(5000))).toBe('none');
});

// The fixture protocol as one of an agent that reports its session before the first prompt.
const announcing: SessionProtocol<{ ready: boolean }> = {
  ...fixtureProtocol,
  announcesSession: () => true,
  read: (state, event) => {
    const reaction = fixtureProtocol.read(state, event);
    return event.type === 'ready' ? { facts: [...(reaction.facts ?? []), { type: 'opened' }] } : reaction;
  },
};

describe('processSession on a real process', () => {
  it('writes the commands as lines, reads the turns back, and ends when the commands complete', async () => {
    const messages = await lastValueFrom(
      from<SessionCommand[]>([{ type: 'prompt', text: 'echo:one' }, { type: 'prompt', text: 'echo:two' }]).pipe(
        session(() => undefined),
        toArray(),
      ),
    );
    expect(messages.map((message) => message.type)).toEqual([
      'input.accepted',
      'turn.started',
      'input.accepted',
      'session.started',
      'assistant',
      'turn.completed',
      'turn.started',
      'assistant',
      'turn.completed',
      'terminal.completed',
    ]);
    expect(messages.filter((message) => message.type === 'assistant')).toEqual([
      { type: 'assistant', text: 'one|' },
      { type: 'assistant', text: 'two|' },
    ]);
    expect(messages.at(-1)).toEqual({ type: 'terminal.completed', stopReason: 'end_turn', sessionId: expect.stringMatching(/^fixture-\d+$/) });
  });

  it('holds the commands of an agent that announces its session until it has: session.started comes first', async () => {
    const messages = await lastValueFrom(
      from<SessionCommand[]>([{ type: 'prompt', text: 'echo:one' }, { type: 'prompt', text: 'echo:two' }]).pipe(
        session(() => undefined, { protocol: announcing }),
        toArray(),
      ),
    );
    expect(messages.map((message) => message.type)).toEqual([
      'session.started',
      'input.accepted',
      'turn.started',
      'input.accepted',
      'assistant',
      'turn.completed',
      'turn.started',
      'assistant',
      'turn.completed',
      'terminal.completed',
    ]);
  });

  it('says each event type the dialect does not know once per session, one seen between turns at the start of the next', async () => {
    // The dialect knows what the fixture agent says in turns; its `ready` line, printed before any turn, is unknown to it.
    const driver = drive({ dialect: { ...fixtureDialect, unknownType: knownTypes(['say', 'done', 'ask']) } });
    await driver.nextOf('session.started');
    driver.send({ type: 'prompt', text: 'emit:odd' });
    await driver.nextOf('turn.completed');
    driver.send({ type: 'prompt', text: 'emit:odd' });
    driver.send({ type: 'prompt', text: 'emit:stranger' });
    await driver.next((message) => message.type === 'turn.completed' && message.turn === 3);
    const warning = (type: string) => ({ type: 'agent.warning', message: `fixture sent an event of unknown type "${type}"; it was ignored` });
    const turn = (n: number) => driver.turn(n).filter((message) => !message.type.startsWith('input.'));
    expect(turn(1)).toEqual([expect.objectContaining({ type: 'turn.started' }), warning('ready'), warning('odd'), expect.objectContaining({ type: 'turn.completed' })]);
    expect(turn(2).map((message) => message.type)).toEqual(['turn.started', 'turn.completed']);
    expect(turn(3)).toEqual([expect.objectContaining({ type: 'turn.started' }), warning('stranger'), expect.objectContaining({ type: 'turn.completed' })]);
    expect(driver.messages.filter((message) => message.type === 'agent.warning')).toHaveLength(3);
  });

  it('steers into the running turn', async () => {
    const driver = drive();
    driver.send({ type: 'prompt', text: 'hang' });
    await driver.nextOf('assistant');
    driver.send({ type: 'steer', text: 'this way' });
    expect(await driver.nextOf('assistant')).toEqual({ type: 'assistant', text: 'steered: this way|' });
  });

  it('aborts a turn that went silent for idleTimeoutMs (turn.failed timeout) and goes on', async () => {
    const driver = drive({ idleTimeoutMs: 300 });
    driver.send({ type: 'prompt', text: 'hang' });
    expect(await driver.nextOf('turn.failed')).toMatchObject({ turn: 1, reason: 'timeout', timeout: { limit: 'idle', ms: 300 } });
    driver.send({ type: 'prompt', text: 'echo:after' });
    expect(await driver.nextOf('turn.completed')).toMatchObject({ turn: 2 });
  });

  it('does not count the silence between turns', async () => {
    const driver = drive({ idleTimeoutMs: 200 });
    driver.send({ type: 'prompt', text: 'echo:first' });
    await driver.nextOf('turn.completed');
    // Idle for longer than the limit: nothing happens.
    await new Promise((resolve) => setTimeout(resolve, 500));
    driver.send({ type: 'prompt', text: 'echo:second' });
    expect(await driver.nextOf('turn.completed')).toMatchObject({ turn: 2 });
    expect(driver.messages.some((message) => message.type === 'turn.failed')).toBe(false);
  });

  it('stops the session when an abort is not honoured within gracePeriodMs', async () => {
    const driver = drive({ gracePeriodMs: 300 });
    driver.send({ type: 'prompt', text: 'deaf' });
    await driver.nextOf('assistant');
    driver.send({ type: 'abort' });
    const messages = await driver.done;
    expect(messages.slice(-2)).toEqual([
      expect.objectContaining({ type: 'turn.failed', turn: 1, reason: 'timeout', timeout: { limit: 'abort', ms: 300 } }),
      expect.objectContaining({ type: 'terminal.failed', reason: 'timeout', message: 'fixture did not end its turn within 300 ms of the abort (gracePeriodMs); it was stopped' }),
    ]);
    expect(await driver.stopped).toMatchObject({ requested: true, cause: 'timeout', confirmed: true });
  });

  it('stops an agent that does not exit within gracePeriodMs of the end of its input', async () => {
    const driver = drive({ gracePeriodMs: 300, env: { STUBBORN: '1' } });
    driver.send({ type: 'prompt', text: 'echo:hi' });
    driver.end();
    const messages = await driver.done;
    expect(messages.at(-1)).toMatchObject({ type: 'terminal.failed', reason: 'timeout', timeout: { limit: 'end', ms: 300 } });
    expect(messages.filter((message) => message.type === 'turn.completed')).toHaveLength(1);
  });

  it('kills the tools an abort leaves running, and keeps the agent', async () => {
    const driver = drive();
    driver.send({ type: 'prompt', text: 'tool' });
    const said = await driver.nextOf('assistant');
    const sleep = Number(/tool (\d+)/.exec(said.text)?.[1]);
    expect(isAlive(sleep)).toBe(true);
    driver.send({ type: 'abort' });
    await driver.nextOf('turn.failed');
    await eventually(() => !isAlive(sleep), 3000);
    driver.send({ type: 'prompt', text: 'echo:still here' });
    expect(await driver.nextOf('assistant')).toEqual({ type: 'assistant', text: 'still here|' });
  });

  it('fails the running turn, drops the queue, and ends with the exit when the agent dies', async () => {
    const driver = drive();
    driver.send({ type: 'prompt', text: 'crash' });
    driver.send({ type: 'follow-up', text: 'echo:later' });
    const messages = await driver.done;
    expect(messages.slice(-3)).toEqual([
      { type: 'turn.failed', turn: 1, reason: 'exit', message: 'fixture exited with code 3: boom' },
      { type: 'input.dropped', kind: 'follow-up', reason: 'session-ended', message: 'the session ended before it could run', text: 'echo:later' },
      expect.objectContaining({ type: 'terminal.failed', reason: 'exit', exitCode: 3, stderr: 'boom\n' }),
    ]);
  });

  it('reports an agent that cannot start in the stream: the turn fails with spawn, then the session', async () => {
    const driver = drive({ command: '/nonexistent/agent-rx-agent' });
    driver.send({ type: 'prompt', text: 'echo:x' });
    const messages = await driver.done;
    expect(messages.map((message) => message.type)).toEqual(['input.accepted', 'turn.started', 'turn.failed', 'terminal.failed']);
    expect(messages.at(-1)).toMatchObject({ reason: 'spawn' });
  });

  it('drops what it held for an announcing agent that cannot start, then fails with spawn', async () => {
    const driver = drive({ command: '/nonexistent/agent-rx-agent', protocol: announcing });
    driver.send({ type: 'prompt', text: 'echo:x', id: 'p1' });
    const messages = await driver.done;
    expect(messages).toEqual([
      { type: 'input.dropped', kind: 'prompt', reason: 'session-ended', message: 'the session ended before it could run', text: 'echo:x', commandId: 'p1' },
      expect.objectContaining({ type: 'terminal.failed', reason: 'spawn' }),
    ]);
  });

  it('handles a command sent from inside a message handler after the message, in order', async () => {
    const commands = new Subject<SessionCommand>();
    const seen: string[] = [];
    const done = new Promise<void>((resolve) => {
      commands.pipe(session(() => undefined)).subscribe({
        next: (message) => {
          seen.push(message.type === 'turn.started' ? `turn.started ${String(message.turn)}` : message.type);
          if (message.type === 'turn.completed' && message.turn === 1) {
            commands.next({ type: 'prompt', text: 'echo:two' });
            commands.complete();
          }
        },
        complete: resolve,
      });
    });
    commands.next({ type: 'prompt', text: 'echo:one' });
    await done;
    expect(seen).toEqual([
      'input.accepted',
      'turn.started 1',
      'session.started',
      'assistant',
      'turn.completed',
      'input.accepted',
      'turn.started 2',
      'assistant',
      'turn.completed',
      'terminal.completed',
    ]);
  });

  it('gives each subscription its own process and state', async () => {
    const operator = session(() => undefined);
    const [a, b] = await Promise.all([
      lastValueFrom(from<SessionCommand[]>([{ type: 'prompt', text: 'echo:a' }]).pipe(operator, toArray())),
      lastValueFrom(from<SessionCommand[]>([{ type: 'prompt', text: 'echo:b' }, { type: 'prompt', text: 'echo:c' }]).pipe(operator, toArray())),
    ]);
    const ids = [a, b].map((messages) => messages.find((message) => message.type === 'session.started'));
    expect(ids[0]).not.toEqual(ids[1]);
    expect(a.filter((message) => message.type === 'turn.completed')).toHaveLength(1);
    expect(b.filter((message) => message.type === 'turn.completed')).toHaveLength(2);
  });

  it('errors the stream when the protocol throws, and stops the agent', async () => {
    const broken: SessionProtocol<{ ready: boolean }> = {
      ...fixtureProtocol,
      read: () => {
        throw new Error('protocol bug');
      },
    };
    await expect(lastValueFrom(NEVER.pipe(session(() => undefined, { protocol: broken })))).rejects.toThrow('protocol bug');
  });

  it('errors the stream when the commands error, and stops the agent', async () => {
    await expect(lastValueFrom(throwError(() => new Error('caller bug')).pipe(session(() => undefined)))).rejects.toThrow('caller bug');
  });
});
