import { afterAll, describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as z from 'zod';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { piSession, runPi, tool, type CliMessage, type HostTool, type PermissionRequested, type PiSessionOptions, type StopReport } from '../../lib/index.js';
import { isAlive } from '../helpers/processes.js';
import { createProcessTag } from '../helpers/tagged-processes.js';
import { calledToolAnswer, callToolText, scenarioMarker, TOUCH_TOOL_COMMAND } from './fake-model-server.js';
import { createPiEnv, OPENAI_PROVIDER, type PiEnv } from './pi-env.js';
import { piWorld } from './pi-world.js';
import { SessionDriver } from './session-driver.js';
import { sessionConformance, type AbortLatencies } from './session-suite.js';
import { permissionConformance, permissionRunConformance, type PermissionLatencies } from './permission-suite.js';
import { promptConformance } from './prompt-suite.js';

/** piSession against the real pi CLI (`--mode rpc`) and the fake model server on 127.0.0.1. */

const PI = fileURLToPath(new URL('../../node_modules/.bin/pi', import.meta.url));
const TAG = createProcessTag('AGENT_RX_PI_SESSION');

const world = piWorld();
const TOUCHED = 'touched-by-agent.txt';
const latencies: AbortLatencies = new Map();
const permissionLatencies: PermissionLatencies = new Map();

afterAll(() => {
  process.stdout.write(
    `\npi session abort latencies: ${[...latencies].map(([name, ms]) => `${name} ${ms.toFixed(1)} ms`).join(', ')}; permission (decision → agent resumed): ${[...permissionLatencies].map(([name, ms]) => `${name} ${ms.toFixed(1)} ms`).join(', ')}\n`,
  );
});

function options(onStopped: (report: StopReport) => void, extra: Partial<PiSessionOptions> = {}, piEnv: PiEnv = world.env): PiSessionOptions {
  return {
    executable: PI,
    provider: OPENAI_PROVIDER,
    model: 'recall',
    session: 'none',
    cwd: piEnv.cwd,
    env: { ...piEnv.env, ...TAG.env },
    onStopped,
    ...extra,
  };
}

describe('piSession on the real pi', () => {
  sessionConformance(() => ({ name: 'pi', tag: TAG, session: (onStopped) => piSession(options(onStopped)) }), latencies);

  it('reports the session id before the first answer, from pi\'s state', async () => {
    const session = new SessionDriver((onStopped) => piSession(options(onStopped)));
    session.send({ type: 'prompt', text: 'hello' });
    const started = await session.nextOf('session.started');
    expect(started.sessionId).toMatch(/^[0-9a-f-]{20,}$/);
    await session.nextOf('turn.completed');
    session.end();
    expect((await session.done).at(-1)).toMatchObject({ type: 'terminal.completed', sessionId: started.sessionId });
  });

  it('announces a resumed session first too, as session.resumed with the id pi had given it', async () => {
    const first = new SessionDriver((onStopped) => piSession(options(onStopped, { session: 'new' })));
    first.send({ type: 'prompt', text: 'remember me' });
    first.end();
    const started = (await first.done)[0];
    expect(started).toEqual({ type: 'session.started', sessionId: expect.any(String) });
    const id = started?.type === 'session.started' ? started.sessionId : '';
    const resumed = new SessionDriver((onStopped) => piSession(options(onStopped, { session: { id } })));
    resumed.send({ type: 'prompt', text: 'resumed' });
    resumed.end();
    const messages = await resumed.done;
    expect(messages[0]).toEqual({ type: 'session.resumed', sessionId: id });
    expect(resumed.answer(1)).toBe('User texts in context: 2 ("remember me" | "resumed").');
  });

  it('with pi\'s auto-retry on, a 500 then a success is one turn: the retry is inside it (the get_state barrier)', async () => {
    const retrying = await createPiEnv({ baseUrl: world.server.baseUrl, retry: { agentRetries: 2, baseDelayMs: 100, sdkRetries: 0 } });
    try {
      world.server.reset();
      const session = new SessionDriver((onStopped) => piSession(options(onStopped, {}, retrying)));
      session.send({ type: 'prompt', text: `${scenarioMarker('flaky500')}try hard` });
      const ended = await session.next((message) => message.type === 'turn.completed' || message.type === 'turn.failed');
      expect(ended).toMatchObject({ type: 'turn.completed', turn: 1 });
      expect(session.turn(1).filter((message) => message.type === 'agent.retry')).toHaveLength(1);
      expect(session.answer(1)).toBe('Recovered after a server error.');
      session.send({ type: 'prompt', text: 'and now' });
      expect(await session.nextOf('turn.completed')).toMatchObject({ turn: 2 });
      session.end();
      await session.done;
    } finally {
      await retrying.cleanup();
    }
  });

  it('with retries off, a 500 fails the turn with pi\'s error and its HTTP status; the session goes on', async () => {
    const session = new SessionDriver((onStopped) => piSession(options(onStopped)));
    session.send({ type: 'prompt', text: `${scenarioMarker('http500')}fail` });
    expect(await session.nextOf('turn.failed')).toMatchObject({ turn: 1, reason: 'agent-error', httpStatus: 500, agentError: '500 fake internal server error' });
    session.send({ type: 'prompt', text: 'fine now' });
    expect(await session.nextOf('turn.completed')).toMatchObject({ turn: 2 });
    session.end();
    expect((await session.done).at(-1)?.type).toBe('terminal.completed');
  });

  it('agentRetry: false gives the session a settings overlay without retries: a 500 fails at once', async () => {
    const retrying = await createPiEnv({ baseUrl: world.server.baseUrl, retry: 'pi-defaults' });
    try {
      world.server.reset();
      const session = new SessionDriver((onStopped) => piSession(options(onStopped, { agentRetry: false }, retrying)));
      session.send({ type: 'prompt', text: `${scenarioMarker('http500')}fail once` });
      expect(await session.nextOf('turn.failed')).toMatchObject({ reason: 'agent-error', httpStatus: 500 });
      expect(session.turn(1).some((message) => message.type === 'agent.retry')).toBe(false);
      session.end();
      await session.done;
    } finally {
      await retrying.cleanup();
    }
  });
});

describe('piSession: a steer the aborted turn had not reached', () => {
  it('is kept by pi for the next prompt, and the aborted turn says so', async () => {
    const session = new SessionDriver((onStopped) => piSession(options(onStopped)));
    session.send({ type: 'prompt', text: `${scenarioMarker('slow_text')}write slowly` });
    await session.nextOf('assistant');
    session.send({ type: 'steer', text: 'a late steer' });
    session.send({ type: 'abort' });
    const warning = await session.nextOf('agent.warning');
    expect(warning.message).toMatch(/^pi keeps a steer that the aborted turn had not reached/);
    expect(await session.nextOf('turn.failed')).toMatchObject({ turn: 1, reason: 'aborted' });
    session.send({ type: 'prompt', text: 'next prompt' });
    expect(await session.nextOf('turn.completed')).toMatchObject({ turn: 2 });
    expect(session.answer(2)).toBe('User texts in context: 3 ("write slowly" | "next prompt" | "a late steer").');
    session.end();
    expect((await session.done).at(-1)?.type).toBe('terminal.completed');
  });
});

describe('piSession permissions on the real pi (its permission extension, extension_ui_request)', () => {
  permissionConformance(
    () => ({
      name: 'pi',
      tag: TAG,
      cwd: world.env.cwd,
      tool: 'bash',
      session: (permission, onStopped) => piSession(options(onStopped, permission)),
    }),
    permissionLatencies,
  );

  const touched = (): boolean => existsSync(join(world.env.cwd, TOUCHED));

  it("the request is for the tool call the session told (pi's id), and a deny is the call's failed result", async () => {
    rmSync(join(world.env.cwd, TOUCHED), { force: true });
    const session = new SessionDriver((onStopped) => piSession(options(onStopped, { permission: 'deny-all' })));
    session.send({ type: 'prompt', text: `${scenarioMarker('touch_tool')}touch a file` });
    const call = await session.nextOf('tool.call');
    const request = await session.nextOf('permission.requested');
    expect(request).toEqual({
      type: 'permission.requested',
      requestId: expect.any(String),
      toolCallId: call.toolCallId,
      tool: 'bash',
      kind: 'execute',
      title: TOUCH_TOOL_COMMAND,
      input: { command: TOUCH_TOOL_COMMAND },
      options: ['allow', 'deny'],
    });
    expect(await session.nextOf('tool.failed')).toEqual({ type: 'tool.failed', toolCallId: call.toolCallId, name: 'bash', output: expect.stringMatching(/^Permission denied/) });
    expect(await session.nextOf('turn.completed')).toMatchObject({ turn: 1 });
    expect(touched()).toBe(false);
    session.end();
    await session.done;
  });

  it('without permission pi runs the tool, as on its own: nothing is asked', async () => {
    rmSync(join(world.env.cwd, TOUCHED), { force: true });
    const session = new SessionDriver((onStopped) => piSession(options(onStopped)));
    session.send({ type: 'prompt', text: `${scenarioMarker('touch_tool')}touch a file` });
    expect(await session.nextOf('tool.completed')).toMatchObject({ name: 'bash' });
    expect(await session.nextOf('turn.completed')).toMatchObject({ turn: 1 });
    expect(session.messages.some((message) => message.type.startsWith('permission.'))).toBe(false);
    expect(touched()).toBe(true);
    rmSync(join(world.env.cwd, TOUCHED), { force: true });
    session.end();
    await session.done;
  });
});

describe('runPi with permission: a one-prompt session, where the agent asks', () => {
  permissionRunConformance(() => ({
    name: 'pi',
    tag: TAG,
    cwd: world.env.cwd,
    tool: 'bash',
    run: (prompt, permission, onStopped) => runPi({ ...(options(onStopped, { }) as Omit<PiSessionOptions, 'permission'>), prompt, ...permission }),
  }));
});

describe('prompt parts and typed answers on the real pi', () => {
  promptConformance(() => ({
    name: 'pi',
    tag: TAG,
    cwd: world.env.cwd,
    server: world.server,
    run: (prompt, outputSchema) => runPi({ ...(options(() => undefined) as Omit<PiSessionOptions, 'permission'>), prompt, ...(outputSchema === undefined ? {} : { outputSchema }) }),
    session: (onStopped) => piSession(options(onStopped)),
  }));
});

describe('pi with MCP servers and host tools (agent-rx\'s MCP extension)', () => {
  const STDIO_SERVER = fileURLToPath(new URL('../fixtures/mcp-stdio-server.mjs', import.meta.url));
  const call = (name: string, input: Record<string, unknown>): string => `${scenarioMarker('call_tool')}${callToolText(name, input)}`;
  // `tools` takes `HostTool<never>`, which a typed tool is not assignable to (its zod schema is covariant).
  const hosted = (made: HostTool<never> | object): HostTool<never> => made as HostTool<never>;

  it('a session calls host tools and a stdio server as mcp__<server>__<tool>, asks for each with permission, fails, cancels, and ends the server with pi', async () => {
    const lookups: unknown[] = [];
    let slowSignal: AbortSignal | undefined;
    const lookup = tool({ name: 'lookup', description: 'Looks up an order', input: z.object({ id: z.number() }), run: ({ id }) => { lookups.push(id); return `order ${String(id)} shipped`; } });
    const broken = tool({ name: 'broken', description: 'Always fails', input: z.object({}), run: () => { throw new Error('the order system is down'); } });
    const slow = tool({
      name: 'slow',
      description: 'Never answers',
      input: z.object({}),
      run: (_input, { signal }) => new Promise<string>((_resolve, reject) => { slowSignal = signal; signal.addEventListener('abort', () => { reject(new Error('cancelled')); }); }),
    });
    const pidFile = join(tmpdir(), `agent-rx-mcp-fixture-${String(process.pid)}.pid`);
    const asked: PermissionRequested[] = [];
    const session = new SessionDriver((onStopped) =>
      piSession(options(onStopped, {
        tools: [lookup, broken, slow].map(hosted),
        mcpServers: { fixture: { command: process.execPath, args: [STDIO_SERVER], env: { MCP_FIXTURE_PID_FILE: pidFile } } },
        permission: (request) => { asked.push(request); return 'allow'; },
      })),
    );
    world.server.reset();
    session.send({ type: 'prompt', text: call('lookup', { id: 7 }) });
    const called = await session.nextOf('tool.call');
    expect(called).toMatchObject({ name: 'mcp__host__lookup', input: { id: 7 }, kind: 'other' });
    expect(await session.nextOf('tool.completed')).toMatchObject({ toolCallId: called.toolCallId, name: 'mcp__host__lookup', output: 'order 7 shipped' });
    expect(await session.nextOf('turn.completed')).toMatchObject({ turn: 1 });
    expect(session.answer(1)).toBe(calledToolAnswer('order 7 shipped'));
    expect(lookups).toEqual([7]);
    expect(asked).toEqual([expect.objectContaining({ toolCallId: called.toolCallId, tool: 'mcp__host__lookup', kind: 'other', input: { id: 7 } })]);
    const requests = world.server.requests.filter((request) => request.scenario === 'call_tool');
    expect(requests.at(-1)).toMatchObject({ lastIsToolResult: true, lastToolResultText: 'order 7 shipped' });
    expect(requests[0]?.toolNames).toEqual(expect.arrayContaining(['read', 'bash', 'mcp__host__lookup', 'mcp__host__broken', 'mcp__host__slow', 'mcp__fixture__echo']));

    session.send({ type: 'prompt', text: call('echo', { text: 'hi' }) });
    expect(await session.nextOf('tool.completed')).toMatchObject({ name: 'mcp__fixture__echo', output: 'echo: hi' });
    expect(await session.nextOf('turn.completed')).toMatchObject({ turn: 2 });

    session.send({ type: 'prompt', text: call('broken', {}) });
    expect(await session.nextOf('tool.failed')).toMatchObject({ name: 'mcp__host__broken', output: expect.stringContaining('the order system is down') });
    expect(await session.nextOf('turn.completed')).toMatchObject({ turn: 3 });

    session.send({ type: 'prompt', text: call('slow', {}) });
    expect(await session.nextOf('tool.call')).toMatchObject({ name: 'mcp__host__slow' });
    await session.next((message) => message.type === 'permission.resolved');
    // The call reaches the host's server; the abort cancels it there.
    for (let i = 0; i < 100 && slowSignal === undefined; i += 1) await new Promise((resolve) => setTimeout(resolve, 50));
    session.send({ type: 'abort' });
    expect(await session.nextOf('turn.failed')).toMatchObject({ turn: 4, reason: 'aborted' });
    expect(slowSignal?.aborted).toBe(true);

    const pid = Number(readFileSync(pidFile, 'utf8'));
    expect(isAlive(pid)).toBe(true);
    session.end();
    expect((await session.done).at(-1)?.type).toBe('terminal.completed');
    for (let i = 0; i < 100 && isAlive(pid); i += 1) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(isAlive(pid)).toBe(false);
    rmSync(pidFile, { force: true });
  });

  it('a run keeps only the pi tools it names, and offers the host tools besides; nothing asks without permission', async () => {
    const lookup = tool({ name: 'lookup', description: 'Looks up an order', input: z.object({ id: z.number() }), run: ({ id }) => `order ${String(id)} shipped` });
    world.server.reset();
    const messages: CliMessage[] = [];
    await new Promise<void>((resolve, reject) => {
      runPi({ ...(options(() => undefined) as Omit<PiSessionOptions, 'permission'>), prompt: call('lookup', { id: 3 }), tools: ['read', hosted(lookup)] }).subscribe({
        next: (message) => messages.push(message),
        error: reject,
        complete: resolve,
      });
    });
    expect(messages.at(-1)).toMatchObject({ type: 'terminal.completed' });
    expect(messages.filter((message) => message.type === 'tool.completed')).toEqual([expect.objectContaining({ name: 'mcp__host__lookup', output: 'order 3 shipped' })]);
    expect(world.server.requests.find((request) => request.scenario === 'call_tool')?.toolNames).toEqual(['read', 'mcp__host__lookup']);
  });
});
