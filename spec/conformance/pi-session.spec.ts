import { afterAll, describe, expect, it } from '@jest/globals';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { lastValueFrom, toArray } from 'rxjs';
import * as z from 'zod';
import { join } from 'node:path';
import { AGENTS, createAgentPool, piSession, runPi, tool, type PermissionRequested, type PiSessionOptions, type RunPiOptions, type StopReport } from '../../lib/index.js';
import { createProcessTag } from '../helpers/tagged-processes.js';
import { callToolText, scenarioMarker, TOUCH_TOOL_COMMAND } from './fake-model-server.js';
import { createPiEnv, OPENAI_PROVIDER, piCommand, type PiEnv } from './pi-env.js';
import { piWorld } from './pi-world.js';
import { SessionDriver } from './session-driver.js';
import { sessionConformance, type AbortLatencies } from './session-suite.js';
import { poolConformance } from './pool-suite.js';
import { permissionConformance, permissionRunConformance, type PermissionLatencies } from './permission-suite.js';
import { promptConformance } from './prompt-suite.js';
import { toolConformance } from './tools-suite.js';
import { conversationConformance } from './conversation-suite.js';

/** piSession against the real pi CLI (`--mode rpc`) and the fake model server on 127.0.0.1. */

const PI = piCommand();
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
    executable: PI.command,
    executableArgs: PI.args,
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

  describe('from a pool', () => {
    poolConformance(() => ({ name: 'pi', tag: TAG, server: world.server, pool: (size) => createAgentPool({ agent: AGENTS.pi, options: options(() => undefined), size }) }));
  });

  describe('whose conversation outlives its process', () => {
    conversationConformance(() => ({
      name: 'pi',
      tag: TAG,
      here: () => ({ cwd: world.env.cwd, session: (conversation) => piSession(options(() => undefined, { session: 'new', ...conversation })), cleanup: () => Promise.resolve() }),
      elsewhere: async () => {
        const env = await createPiEnv({ baseUrl: world.server.baseUrl });
        const cwd = join(env.root, 'another', 'working folder');
        mkdirSync(cwd, { recursive: true });
        return { cwd, session: (conversation) => piSession(options(() => undefined, { session: 'new', cwd, ...conversation }, env)), cleanup: () => env.cleanup() };
      },
    }));
  });

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
    expect(started).toEqual({ type: 'session.started', pid: expect.any(Number), processGroup: expect.any(Number), sessionId: expect.any(String) });
    const id = started?.type === 'session.started' ? started.sessionId : '';
    const resumed = new SessionDriver((onStopped) => piSession(options(onStopped, { session: { id } })));
    resumed.send({ type: 'prompt', text: 'resumed' });
    resumed.end();
    const messages = await resumed.done;
    expect(messages[0]).toEqual({ type: 'session.resumed', pid: expect.any(Number), processGroup: expect.any(Number), sessionId: id });
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

describe('host tools and MCP servers on the real pi (agent-rx\'s MCP extension)', () => {
  toolConformance(() => ({
    name: 'pi',
    tag: TAG,
    server: world.server,
    run: (prompt, tools) => runPi({ ...(options(() => undefined) as Omit<PiSessionOptions, 'permission'>), prompt, ...tools } as RunPiOptions),
    session: (tools, onStopped) => piSession(options(onStopped, tools)),
  }));

  it('a run keeps the pi tools it names and adds the MCP tools; with permission each call is asked for as mcp__<server>__<tool>, kind other', async () => {
    const lookup = tool({ name: 'lookup', description: 'Looks up an order', input: z.object({ id: z.number() }), run: ({ id }) => `order ${String(id)} shipped` });
    const asked: PermissionRequested[] = [];
    const from = world.server.requests.length;
    const messages = await lastValueFrom(
      runPi({
        ...(options(() => undefined) as Omit<PiSessionOptions, 'permission'>),
        prompt: `${scenarioMarker('call_tool')}${callToolText('lookup', { id: 3 })}`,
        tools: ['read', lookup],
        permission: (request) => {
          asked.push(request);
          return 'allow';
        },
      }).pipe(toArray()),
    );
    expect(messages.at(-1)).toMatchObject({ type: 'terminal.completed' });
    const call = messages.find((message) => message.type === 'tool.call');
    expect(call).toMatchObject({ name: 'mcp__host__lookup', input: { id: 3 }, kind: 'other' });
    expect(messages.filter((message) => message.type === 'tool.completed')).toEqual([expect.objectContaining({ name: 'mcp__host__lookup', output: 'order 3 shipped' })]);
    expect(asked).toEqual([expect.objectContaining({ toolCallId: call?.type === 'tool.call' ? call.toolCallId : '', tool: 'mcp__host__lookup', kind: 'other', input: { id: 3 } })]);
    expect(world.server.requests.slice(from).find((request) => request.scenario === 'call_tool')?.toolNames).toEqual(['read', 'mcp__host__lookup']);
  });
});
