import { afterEach, expect, it } from '@jest/globals';
import type { OperatorFunction } from 'rxjs';
import type { SessionCommand, SessionMessage, StopReport } from '../../lib/index.js';
import { isAlive } from '../helpers/processes.js';
import { describeProcesses, type ProcessTag } from '../helpers/tagged-processes.js';
import { scenarioMarker } from './fake-model-server.js';
import { parentOf, SessionDriver } from './session-driver.js';

/** One agent's sessions, as the shared conformance cases need them. */
export interface SessionAgent {
  readonly name: string;
  /** Carried by every process of the agent's sessions (the tests find processes by it). */
  readonly tag: ProcessTag;
  /**
   * A session whose default scenario is `recall` (each answer lists the user texts in context),
   * reporting its stop to `onStopped`. A prompt picks another scenario with `scenarioMarker`.
   */
  session(onStopped: (report: StopReport) => void): OperatorFunction<SessionCommand, SessionMessage>;
  /**
   * How a tool that runs when a steer comes ends: `completed` (the steer waits for it, or the
   * agent lets it finish), or `failed` (the agent stops it: Qwen Code's ACP cancel, by which an
   * ACP steer cuts the running prompt, kills the running tool). Default `completed`.
   */
  readonly toolUnderSteer?: 'completed' | 'failed';
  /** The version its CLI reports of itself (`session.started.agentVersion`), where it reports one. */
  readonly agentVersion?: string;
}

/** Abort latencies measured by the cases (command written → turn.failed), by case name. */
export type AbortLatencies = Map<string, number>;

const slow = `${scenarioMarker('slow_text')}write slowly`;

/** The session's root process: the tagged process whose parent is this test process. */
function rootOf(tag: ProcessTag): number | undefined {
  return tag.processes().find((entry) => parentOf(entry.pid) === process.pid)?.pid;
}

/**
 * The cases every session agent passes against its real CLI and the fake model server: turns in
 * one process, steering, follow-ups, aborts (the process stays, the tool goes), the end of the
 * input mid-turn, and unsubscribing. What differs between agents (how a steer lands) is checked
 * only as far as every agent agrees; the agent's own spec checks the rest.
 */
export function sessionConformance(agent: () => SessionAgent, latencies: AbortLatencies): void {
  const drivers: SessionDriver[] = [];
  const drive = (): SessionDriver => {
    const driver = new SessionDriver((onStopped) => agent().session(onStopped));
    drivers.push(driver);
    return driver;
  };

  afterEach(async () => {
    for (const driver of drivers.splice(0)) driver.unsubscribe();
    const left = await agent().tag.waitUntilNone(10_000);
    expect(describeProcesses(left)).toBe('none');
  });

  it('two prompts in one process: the second turn sees the first', async () => {
    const session = drive();
    session.send({ type: 'prompt', text: 'first question' });
    expect(await session.nextOf('turn.completed')).toMatchObject({ turn: 1, stopReason: 'end_turn' });
    const root = rootOf(agent().tag);
    session.send({ type: 'prompt', text: 'second question', id: 'q2' });
    expect(await session.nextOf('turn.completed')).toMatchObject({ turn: 2 });
    expect(rootOf(agent().tag)).toBe(root);
    expect(session.answer(1)).toBe('User texts in context: 1 ("first question").');
    expect(session.answer(2)).toBe('User texts in context: 2 ("first question" | "second question").');
    session.end();
    const messages = await session.done;
    const sessionId = messages.find((message) => message.type === 'session.started');
    expect(sessionId).toBeDefined();
    expect(messages.filter((message) => message.type.startsWith('input.') || message.type.startsWith('turn.'))).toEqual([
      { type: 'input.accepted', kind: 'prompt', as: 'turn', turn: 1, text: 'first question' },
      { type: 'turn.started', turn: 1, prompt: 'first question' },
      expect.objectContaining({ type: 'turn.completed', turn: 1 }),
      { type: 'input.accepted', kind: 'prompt', as: 'turn', turn: 2, text: 'second question', commandId: 'q2' },
      { type: 'turn.started', turn: 2, prompt: 'second question', commandId: 'q2' },
      expect.objectContaining({ type: 'turn.completed', turn: 2 }),
    ]);
    expect(messages.at(-1)).toMatchObject({ type: 'terminal.completed', sessionId: sessionId?.type === 'session.started' ? sessionId.sessionId : '' });
    expect((await session.stopped).requested).toBe(false);
    // Everything the agent sent in two turns is of a type its dialect knows.
    expect(messages.filter((message) => message.type === 'agent.warning' && message.message.includes('unknown type'))).toEqual([]);
  });

  it('announces its session first, whenever the first commands come: session.started, then the turns', async () => {
    const session = drive();
    // Sent at once, before the agent is even up.
    session.send({ type: 'prompt', text: 'right away', id: 'r1' });
    session.send({ type: 'follow-up', text: 'and then' });
    expect(await session.nextOf('turn.completed')).toMatchObject({ turn: 1 });
    expect(await session.nextOf('turn.completed')).toMatchObject({ turn: 2 });
    session.end();
    const messages = await session.done;
    const started = messages[0];
    const version = agent().agentVersion;
    expect(started).toEqual({ type: 'session.started', pid: expect.any(Number), processGroup: expect.any(Number), sessionId: expect.any(String), ...(version === undefined ? {} : { agentVersion: version }) });
    // The commands in their order, each answered as if it came once the session was open.
    expect(messages.slice(1, 4)).toEqual([
      { type: 'input.accepted', kind: 'prompt', as: 'turn', turn: 1, text: 'right away', commandId: 'r1' },
      { type: 'turn.started', turn: 1, prompt: 'right away', commandId: 'r1' },
      { type: 'input.accepted', kind: 'follow-up', as: 'follow-up', turn: 1, text: 'and then' },
    ]);
    expect(session.answer(2)).toMatch(/"and then"\)\.$/);
    expect(messages.filter((message) => message.type === 'session.started')).toEqual([started]);
    expect(messages.at(-1)).toMatchObject({ type: 'terminal.completed', sessionId: started?.type === 'session.started' ? started.sessionId : '' });
  });

  it('a steer while the answer streams goes into the running turn', async () => {
    const session = drive();
    session.send({ type: 'prompt', text: slow });
    await session.nextOf('assistant');
    session.send({ type: 'steer', text: `${scenarioMarker('recall')}steer now` });
    expect(await session.nextOf('input.accepted')).toMatchObject({ kind: 'steer', as: 'steer', turn: 1 });
    expect(await session.nextOf('turn.completed')).toMatchObject({ turn: 1 });
    expect(session.answer(1)).toMatch(/User texts in context: \d \(.*"steer now"\)\.$/);
    expect(session.messages.filter((message) => message.type === 'turn.started')).toHaveLength(1);
  });

  it('a steer while a tool runs goes into the running turn, after the tool', async () => {
    const session = drive();
    session.send({ type: 'prompt', text: `${scenarioMarker('nap_tool')}take a nap` });
    await session.nextOf('tool.call');
    session.send({ type: 'steer', text: `${scenarioMarker('recall')}steer during the nap` });
    expect(await session.nextOf('turn.completed')).toMatchObject({ turn: 1 });
    const turn = session.turn(1);
    expect(turn.some((message) => message.type === `tool.${agent().toolUnderSteer ?? 'completed'}`)).toBe(true);
    expect(session.answer(1)).toContain('steer during the nap');
    expect(session.messages.filter((message) => message.type === 'turn.started')).toHaveLength(1);
  });

  it('a follow-up sent during a turn is queued, then runs as the next turn', async () => {
    const session = drive();
    session.send({ type: 'prompt', text: slow });
    await session.nextOf('assistant');
    session.send({ type: 'follow-up', text: 'and then this', id: 'f1' });
    expect(await session.nextOf('input.accepted')).toEqual({ type: 'input.accepted', kind: 'follow-up', as: 'follow-up', turn: 1, text: 'and then this', commandId: 'f1' });
    expect(await session.nextOf('turn.completed')).toMatchObject({ turn: 1 });
    expect(await session.nextOf('turn.started')).toEqual({ type: 'turn.started', turn: 2, prompt: 'and then this', commandId: 'f1' });
    expect(await session.nextOf('turn.completed')).toMatchObject({ turn: 2 });
    expect(session.answer(2)).toMatch(/"and then this"\)\.$/);
  });

  it('an abort mid-stream ends the turn as aborted; the process stays and the next prompt works', async () => {
    const session = drive();
    session.send({ type: 'prompt', text: slow });
    await session.nextOf('assistant');
    const root = rootOf(agent().tag);
    const sent = performance.now();
    session.send({ type: 'abort', id: 'stop!' });
    expect(await session.nextOf('input.accepted')).toEqual({ type: 'input.accepted', kind: 'abort', as: 'abort', turn: 1, commandId: 'stop!' });
    const failed = await session.nextOf('turn.failed');
    latencies.set('mid-stream', session.times[session.messages.indexOf(failed)] as number - sent);
    expect(failed).toMatchObject({ turn: 1, reason: 'aborted' });
    expect(root !== undefined && isAlive(root)).toBe(true);
    session.send({ type: 'prompt', text: 'after the abort' });
    expect(await session.nextOf('turn.completed')).toMatchObject({ turn: 2 });
    // Claude Code puts its interrupt note before the next prompt, in the same user message.
    expect(session.answer(2)).toMatch(/after the abort"\)\.$/);
    expect(rootOf(agent().tag)).toBe(root);
  });

  it('an abort during `sleep 30` ends the turn, the sleep is gone by pid, the process stays', async () => {
    const session = drive();
    session.send({ type: 'prompt', text: `${scenarioMarker('sleep_tool')}sleep for a while` });
    await session.nextOf('tool.call');
    const sleep = await agent().tag.waitFor('sleep');
    const root = rootOf(agent().tag);
    const sent = performance.now();
    session.send({ type: 'abort' });
    const failed = await session.nextOf('turn.failed');
    latencies.set('during a tool', session.times[session.messages.indexOf(failed)] as number - sent);
    expect(failed).toMatchObject({ turn: 1, reason: 'aborted' });
    // Gone when the turn ends: whatever the agent does with its tool, the turn's processes are over.
    expect(isAlive(sleep)).toBe(false);
    expect(root !== undefined && isAlive(root)).toBe(true);
    session.send({ type: 'prompt', text: 'awake again' });
    expect(await session.nextOf('turn.completed')).toMatchObject({ turn: 2 });
    expect(session.answer(2)).toMatch(/awake again"\)\.$/);
  });

  it('an abort drops the queued follow-ups, each with input.dropped', async () => {
    const session = drive();
    session.send({ type: 'prompt', text: slow });
    await session.nextOf('assistant');
    session.send({ type: 'follow-up', text: 'never runs', id: 'f' });
    session.send({ type: 'prompt', text: 'nor this' });
    session.send({ type: 'abort' });
    await session.nextOf('turn.failed');
    expect(session.messages.filter((message) => message.type === 'input.dropped')).toEqual([
      { type: 'input.dropped', kind: 'follow-up', reason: 'aborted', message: 'dropped by the abort of turn 1', text: 'never runs', commandId: 'f' },
      { type: 'input.dropped', kind: 'prompt', reason: 'aborted', message: 'dropped by the abort of turn 1', text: 'nor this' },
    ]);
    session.end();
    const messages = await session.done;
    expect(messages.filter((message) => message.type === 'turn.started')).toHaveLength(1);
    expect(messages.at(-1)?.type).toBe('terminal.completed');
  });

  it('completing the commands mid-turn lets the turn finish, then the session ends cleanly', async () => {
    const session = drive();
    session.send({ type: 'prompt', text: slow });
    await session.nextOf('assistant');
    session.end();
    const messages = await session.done;
    expect(messages.filter((message) => message.type === 'turn.completed')).toHaveLength(1);
    expect(session.answer(1)).toMatch(/^slow00 slow01 .* slow39 $/);
    expect(messages.at(-1)).toMatchObject({ type: 'terminal.completed', stopReason: 'end_turn' });
    const report = await session.stopped;
    expect(report).toMatchObject({ requested: false, confirmed: true, survivors: [] });
  });

  it('unsubscribing mid-turn stops the whole tree, the tool included', async () => {
    const session = drive();
    session.send({ type: 'prompt', text: `${scenarioMarker('sleep_tool')}sleep for a while` });
    await session.nextOf('tool.call');
    const sleep = await agent().tag.waitFor('sleep');
    const root = rootOf(agent().tag) as number;
    session.unsubscribe();
    const report = await session.stopped;
    expect(report).toMatchObject({ requested: true, cause: 'unsubscribe', confirmed: true, survivors: [] });
    expect(isAlive(sleep)).toBe(false);
    expect(isAlive(root)).toBe(false);
    const messages = session.messages.length;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(session.messages).toHaveLength(messages);
  });
}
