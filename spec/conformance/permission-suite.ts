import { afterEach, beforeEach, expect, it } from '@jest/globals';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { NEVER, type Observable, type OperatorFunction, type Subscription } from 'rxjs';
import type { CliMessage, PermissionOptions, PermissionRequested, RunPermissionOptions, SessionCommand, SessionMessage, StopReport } from '../../lib/index.js';
import { describeProcesses, type ProcessTag } from '../helpers/tagged-processes.js';
import { scenarioMarker } from './fake-model-server.js';
import { TOUCH_TOOL_COMMAND } from './scenarios.js';
import { SessionDriver } from './session-driver.js';

/** One agent's sessions with a permission policy, as the shared permission cases need them. */
export interface PermissionAgent {
  readonly name: string;
  /** Carried by every process of the agent's sessions. */
  readonly tag: ProcessTag;
  /** The folder the agent works in: where `touch` makes its file. */
  readonly cwd: string;
  /** The agent's name of its shell tool, as the request says it. */
  readonly tool: string;
  /** A session (default scenario `recall`) with these permission options. */
  session(permission: PermissionOptions, onStopped: (report: StopReport) => void): OperatorFunction<SessionCommand, SessionMessage>;
}

/** Request → the agent's next message after the decision, by case name (ms). */
export type PermissionLatencies = Map<string, number>;

const touch = `${scenarioMarker('touch_tool')}touch a file`;
const TOUCHED = 'touched-by-agent.txt';

/**
 * What every agent does with a tool that changes the file system (`touch`) when the host decides:
 * the request surfaces with the tool, kind and command; a deny leaves no file and the turn goes on
 * to an answer; an allow makes the file; the deadline denies; an abort and an unsubscribe while a
 * request waits settle it and leave no process.
 */
export function permissionConformance(agent: () => PermissionAgent, latencies: PermissionLatencies): void {
  const drivers: SessionDriver[] = [];
  const drive = (permission: PermissionOptions): SessionDriver => {
    const driver = new SessionDriver((onStopped) => agent().session(permission, onStopped));
    drivers.push(driver);
    return driver;
  };
  const touched = (): boolean => existsSync(join(agent().cwd, TOUCHED));

  beforeEach(() => {
    rmSync(join(agent().cwd, TOUCHED), { force: true });
  });

  afterEach(async () => {
    for (const driver of drivers.splice(0)) driver.unsubscribe();
    const left = await agent().tag.waitUntilNone(10_000);
    expect(describeProcesses(left)).toBe('none');
    rmSync(join(agent().cwd, TOUCHED), { force: true });
  });

  /** The request for the touch command, checked for what every agent says of it. */
  const requestOf = async (session: SessionDriver): Promise<PermissionRequested> => {
    const request = await session.nextOf('permission.requested', 60_000);
    expect(request).toMatchObject({ tool: agent().tool, kind: 'execute', title: expect.stringContaining(TOUCH_TOOL_COMMAND) });
    expect(request.options).toEqual(expect.arrayContaining(['allow', 'deny']));
    return request;
  };

  /** How long from the decision to the agent's next message (it resumed). */
  const resumed = async (session: SessionDriver, name: string, decided: number): Promise<void> => {
    const at = session.messages.length;
    await session.next((message) => !message.type.startsWith('permission.') && !message.type.startsWith('input.'), 60_000);
    latencies.set(name, (session.times[Math.max(at, session.messages.length - 1)] ?? performance.now()) - decided);
  };

  it('deny by a command: the request says the tool, its kind and its command; the file is not made; the turn goes on to an answer', async () => {
    const session = drive({ permission: 'ask' });
    session.send({ type: 'prompt', text: touch });
    const request = await requestOf(session);
    expect(touched()).toBe(false);
    const decided = performance.now();
    session.send({ type: 'permission', requestId: request.requestId, decision: 'deny', id: 'no' });
    expect(await session.nextOf('permission.resolved')).toEqual({ type: 'permission.resolved', requestId: request.requestId, decision: 'deny', by: 'caller' });
    await resumed(session, 'deny', decided);
    expect(await session.nextOf('turn.completed', 60_000)).toMatchObject({ turn: 1 });
    expect(session.answer(1)).not.toBe('');
    expect(touched()).toBe(false);
    expect(session.messages).toContainEqual({ type: 'input.accepted', kind: 'permission', as: 'permission', turn: 1, requestId: request.requestId, commandId: 'no' });
    // Answered once: a second answer finds no request.
    session.send({ type: 'permission', requestId: request.requestId, decision: 'allow' });
    expect(await session.nextOf('input.dropped')).toMatchObject({ kind: 'permission', reason: 'no-request', requestId: request.requestId });
    session.end();
    await session.done;
  });

  it('allow by the callback: the file is made', async () => {
    let asked: PermissionRequested | undefined;
    let decided = 0;
    const session = drive({
      permission: (request) => {
        asked = request;
        decided = performance.now();
        return Promise.resolve('allow');
      },
    });
    session.send({ type: 'prompt', text: touch });
    const request = await requestOf(session);
    expect(asked).toEqual(request);
    expect(await session.nextOf('permission.resolved')).toMatchObject({ requestId: request.requestId, decision: 'allow', by: 'caller' });
    await resumed(session, 'allow', decided);
    expect(await session.nextOf('turn.completed', 60_000)).toMatchObject({ turn: 1 });
    expect(touched()).toBe(true);
    session.end();
    await session.done;
  });

  it('no answer within permissionTimeoutMs: denied by the deadline, the turn goes on', async () => {
    const session = drive({ permission: 'ask', permissionTimeoutMs: 1500 });
    session.send({ type: 'prompt', text: touch });
    const request = await requestOf(session);
    expect(await session.nextOf('permission.resolved', 30_000)).toEqual({ type: 'permission.resolved', requestId: request.requestId, decision: 'deny', by: 'deadline' });
    expect(await session.nextOf('turn.completed', 60_000)).toMatchObject({ turn: 1 });
    expect(touched()).toBe(false);
    session.end();
    await session.done;
  });

  it("'allow-reads' denies a command that writes, by the policy", async () => {
    const session = drive({ permission: 'allow-reads' });
    session.send({ type: 'prompt', text: touch });
    const request = await requestOf(session);
    expect(await session.nextOf('permission.resolved')).toMatchObject({ requestId: request.requestId, decision: 'deny', by: 'policy' });
    expect(await session.nextOf('turn.completed', 60_000)).toMatchObject({ turn: 1 });
    expect(touched()).toBe(false);
    session.end();
    await session.done;
  });

  it('an abort while a request waits: the request is denied first, then the turn ends aborted; the session goes on', async () => {
    const session = drive({ permission: 'ask' });
    session.send({ type: 'prompt', text: touch });
    const request = await requestOf(session);
    session.send({ type: 'abort' });
    const resolved = await session.nextOf('permission.resolved');
    expect(resolved).toEqual({ type: 'permission.resolved', requestId: request.requestId, decision: 'deny', by: 'abort' });
    const ended = await session.next((message) => message.type === 'turn.completed' || message.type === 'turn.failed', 60_000);
    expect(ended).toMatchObject({ type: 'turn.failed', reason: 'aborted' });
    expect(session.messages.indexOf(resolved)).toBeLessThan(session.messages.indexOf(ended));
    session.send({ type: 'prompt', text: 'after the abort' });
    expect(await session.nextOf('turn.completed', 60_000)).toMatchObject({ turn: 2 });
    expect(touched()).toBe(false);
    session.end();
    await session.done;
  });

  it('an unsubscribe while a request waits: the agent is stopped, no process is left, the file is not made', async () => {
    const session = drive({ permission: 'ask' });
    session.send({ type: 'prompt', text: touch });
    await requestOf(session);
    session.unsubscribe();
    const report = await session.stopped;
    expect(report.confirmed).toBe(true);
    expect(describeProcesses(await agent().tag.waitUntilNone(10_000))).toBe('none');
    expect(touched()).toBe(false);
  });
}

/** One agent's runs with a permission policy. */
export interface PermissionRunAgent {
  readonly name: string;
  readonly tag: ProcessTag;
  readonly cwd: string;
  readonly tool: string;
  /** A run of `prompt` with these permission options (a TypeError for options it refuses). */
  run(prompt: string, permission: RunPermissionOptions, onStopped: (report: StopReport) => void): Observable<CliMessage>;
}

/**
 * What every agent's run does when the host decides: the requests and their resolutions are in the
 * run's stream; a deny leaves no file and the run completes with an answer; an allow makes the
 * file; the deadline denies; an unsubscribe while a request waits leaves no process.
 */
export function permissionRunConformance(agent: () => PermissionRunAgent): void {
  const subscriptions: Subscription[] = [];
  const touched = (): boolean => existsSync(join(agent().cwd, TOUCHED));
  const run = (permission: RunPermissionOptions, onStopped: (report: StopReport) => void = () => undefined): Promise<CliMessage[]> =>
    new Promise((resolve, reject) => {
      const messages: CliMessage[] = [];
      subscriptions.push(
        agent()
          .run(touch, permission, onStopped)
          .subscribe({
            next: (message) => {
              messages.push(message);
            },
            error: reject,
            complete: () => {
              resolve(messages);
            },
          }),
      );
    });

  beforeEach(() => {
    rmSync(join(agent().cwd, TOUCHED), { force: true });
  });

  afterEach(async () => {
    for (const subscription of subscriptions.splice(0)) subscription.unsubscribe();
    expect(describeProcesses(await agent().tag.waitUntilNone(10_000))).toBe('none');
    rmSync(join(agent().cwd, TOUCHED), { force: true });
  });

  it('a run with a callback that denies: the request and its resolution are in the stream, the file is not made, the run completes', async () => {
    const asked: PermissionRequested[] = [];
    const messages = await run({
      permission: (request) => {
        asked.push(request);
        return 'deny';
      },
    });
    const request = messages.find((message) => message.type === 'permission.requested');
    expect(request).toMatchObject({ tool: agent().tool, kind: 'execute', title: expect.stringContaining(TOUCH_TOOL_COMMAND) });
    expect(asked).toEqual([request]);
    expect(messages).toContainEqual({ type: 'permission.resolved', requestId: request?.type === 'permission.requested' ? request.requestId : '', decision: 'deny', by: 'caller' });
    expect(messages.at(-1)).toEqual(expect.objectContaining({ type: 'terminal.completed' }));
    expect(messages.some((message) => message.type.startsWith('turn.') || message.type.startsWith('input.'))).toBe(false);
    expect(touched()).toBe(false);
  });

  it("a run with 'allow-all': the file is made", async () => {
    const messages = await run({ permission: 'allow-all' });
    expect(messages).toContainEqual(expect.objectContaining({ type: 'permission.resolved', decision: 'allow', by: 'policy' }));
    expect(messages.at(-1)).toEqual(expect.objectContaining({ type: 'terminal.completed' }));
    expect(touched()).toBe(true);
  });

  it('a callback that never answers: denied by the deadline, the run goes on and completes', async () => {
    const messages = await run({ permission: () => NEVER, permissionTimeoutMs: 1500 });
    expect(messages).toContainEqual(expect.objectContaining({ type: 'permission.resolved', decision: 'deny', by: 'deadline' }));
    expect(messages.at(-1)).toEqual(expect.objectContaining({ type: 'terminal.completed' }));
    expect(touched()).toBe(false);
  });

  it('an unsubscribe while a request waits: the agent is stopped, no process is left', async () => {
    let stopped!: (report: StopReport) => void;
    const report = new Promise<StopReport>((resolve) => {
      stopped = resolve;
    });
    const requested = new Promise<void>((resolve) => {
      subscriptions.push(
        agent()
          .run(touch, { permission: () => NEVER }, stopped)
          .subscribe((message) => {
            if (message.type === 'permission.requested') resolve();
          }),
      );
    });
    await requested;
    for (const subscription of subscriptions.splice(0)) subscription.unsubscribe();
    expect((await report).confirmed).toBe(true);
    expect(describeProcesses(await agent().tag.waitUntilNone(10_000))).toBe('none');
    expect(touched()).toBe(false);
  });

  it("refuses 'ask' at call time: a run takes no commands", () => {
    expect(() => agent().run(touch, { permission: 'ask' as 'deny-all' }, () => undefined)).toThrow(TypeError);
  });
}
