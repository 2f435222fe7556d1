import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { AGENTS, createAgentPool, codexSession, collectRunResult, runCodex, stopAllRuns, type CliMessage, type CodexSessionOptions, type ConversationOptions, type RunCodexOptions, type StopReport } from '../../lib/index.js';
import { answerOf } from '../helpers/pi-transcripts.js';
import { createProcessTag } from '../helpers/tagged-processes.js';
import { executableOptions } from './cli-under-test.js';
import { CODEX_MODEL, createCodexEnv, type CodexEnv } from './codex-env.js';
import { expectedText, scenarioMarker, startFakeModelServer, type FakeModelServer } from './fake-model-server.js';
import { SessionDriver } from './session-driver.js';
import { permissionConformance, permissionRunConformance, type PermissionLatencies } from './permission-suite.js';
import { callToolText, JSON_OK_VALUE, TOUCH_TOOL_COMMAND } from './scenarios.js';
import * as z from 'zod';
import { tool } from '../../lib/tools/host-tool.js';
import { Answer, promptConformance } from './prompt-suite.js';
import { toolConformance } from './tools-suite.js';
import { sessionConformance, type AbortLatencies } from './session-suite.js';
import { poolConformance } from './pool-suite.js';
import { conversationConformance } from './conversation-suite.js';
import { pinnedVersion } from './suite.js';
import { ScenarioTimings } from './timings.js';

/** codexSession against the real Codex CLI (`codex app-server`) and the fake model server on 127.0.0.1. */

const TAG = createProcessTag('AGENT_RX_CODEX_SESSION');

let server: FakeModelServer;
let env: CodexEnv;
const latencies: AbortLatencies = new Map();
const permissionLatencies: PermissionLatencies = new Map();
const timings = new ScenarioTimings();

beforeAll(async () => {
  server = await startFakeModelServer();
  env = createCodexEnv({ baseUrl: server.baseUrl, requestMaxRetries: 0, streamMaxRetries: 0 });
});

afterAll(async () => {
  await stopAllRuns();
  await server.close();
  await env.cleanup();
  process.stdout.write(
    `\nCodex session abort latencies: ${[...latencies].map(([name, ms]) => `${name} ${ms.toFixed(1)} ms`).join(', ')}; permission (decision → agent resumed): ${[...permissionLatencies].map(([name, ms]) => `${name} ${ms.toFixed(1)} ms`).join(', ')}\n`,
  );
  timings.print('Codex one-shot runs, exec and app-server');
});

function options(onStopped: (report: StopReport) => void, extra: Partial<CodexSessionOptions> = {}): CodexSessionOptions {
  return {
    ...executableOptions('codex'),
    cwd: env.cwd,
    env: { ...env.env, ...TAG.env },
    extraArgs: ['-c', env.baseUrlOverride('recall')],
    onStopped,
    ...extra,
  };
}

describe('codexSession on the real Codex', () => {
  sessionConformance(() => ({ name: 'Codex', tag: TAG, agentVersion: pinnedVersion('@openai/codex'), session: (onStopped) => codexSession(options(onStopped)) }), latencies);

  describe('from a pool', () => {
    poolConformance(() => ({ name: 'Codex', tag: TAG, server: server, pool: (size) => createAgentPool({ agent: AGENTS.codex, options: options(() => undefined), size }) }));
  });

  describe('whose conversation outlives its process', () => {
    conversationConformance(() => ({
      name: 'Codex',
      tag: TAG,
      here: () => ({ cwd: env.cwd, session: (conversation) => codexSession(options(() => undefined, conversation)), cleanup: () => Promise.resolve() }),
      elsewhere: () => {
        const elsewhere = createCodexEnv({ baseUrl: server.baseUrl, requestMaxRetries: 0, streamMaxRetries: 0 });
        const cwd = join(elsewhere.root, 'another', 'working folder');
        mkdirSync(cwd, { recursive: true });
        const session = (conversation: ConversationOptions): ReturnType<typeof codexSession> =>
          codexSession(options(() => undefined, { cwd, env: { ...elsewhere.env, ...TAG.env }, extraArgs: ['-c', elsewhere.baseUrlOverride('recall')], ...conversation }));
        return Promise.resolve({ cwd, session, cleanup: () => elsewhere.cleanup() });
      },
    }));
  });

  it('announces the thread as the session, and resumes it in a new process with the context', async () => {
    const first = new SessionDriver((onStopped) => codexSession(options(onStopped)));
    first.send({ type: 'prompt', text: 'remember this' });
    const started = await first.nextOf('session.started');
    await first.nextOf('turn.completed');
    first.end();
    await first.done;
    const second = new SessionDriver((onStopped) => codexSession(options(onStopped, { session: { resume: started.sessionId } })));
    second.send({ type: 'prompt', text: 'and this' });
    expect(started.agentVersion).toBe(pinnedVersion('@openai/codex'));
    expect(await second.nextOf('session.resumed')).toEqual({ type: 'session.resumed', pid: expect.any(Number), processGroup: expect.any(Number), sessionId: started.sessionId, agentVersion: pinnedVersion('@openai/codex') });
    await second.nextOf('turn.completed');
    expect(second.answer(1)).toBe('User texts in context: 2 ("remember this" | "and this").');
    second.end();
    await second.done;
  });

  it('a thread that cannot be resumed fails the turn and the session, with Codex\'s reason', async () => {
    const session = new SessionDriver((onStopped) => codexSession(options(onStopped, { session: { resume: '01a23522-0000-7000-8000-000000000000' } })));
    session.send({ type: 'prompt', text: 'hello?' });
    const messages = await session.done;
    expect(messages.find((message) => message.type === 'turn.failed')).toMatchObject({ reason: 'agent-error', message: expect.stringContaining('Codex could not resume the thread') });
    expect(messages.at(-1)).toMatchObject({ type: 'terminal.failed', agentError: expect.stringContaining('no rollout found') });
  });

  it('a model error fails the turn (agent-error) and the thread goes on', async () => {
    const session = new SessionDriver((onStopped) => codexSession(options(onStopped)));
    session.send({ type: 'prompt', text: `${scenarioMarker('http500')}fail` });
    expect(await session.nextOf('turn.failed')).toMatchObject({ turn: 1, reason: 'agent-error', message: expect.stringContaining('Codex reported an error') });
    session.send({ type: 'prompt', text: 'again' });
    expect(await session.nextOf('turn.completed')).toMatchObject({ turn: 2 });
    session.end();
    expect((await session.done).at(-1)?.type).toBe('terminal.completed');
  });

  it('a steer mid-stream cuts the answer in flight: its text stays in the stream, the answer to the steer follows', async () => {
    const session = new SessionDriver((onStopped) => codexSession(options(onStopped)));
    session.send({ type: 'prompt', text: `${scenarioMarker('slow_text')}write slowly` });
    await session.nextOf('assistant');
    session.send({ type: 'steer', text: `${scenarioMarker('recall')}steer now` });
    await session.nextOf('turn.completed');
    const answer = session.answer(1);
    expect(answer).toMatch(/^slow00 .*User texts in context: 2 \("write slowly" \| "steer now"\)\.$/);
    expect(answer).not.toContain('slow39');
    session.end();
    await session.done;
  });

  it('without permission, an approval request is denied by the default policy, in the stream: the command does not run, the turn goes on', async () => {
    const session = new SessionDriver((onStopped) => codexSession(options(onStopped, { approvalPolicy: 'untrusted', sandbox: 'workspace-write' })));
    session.send({ type: 'prompt', text: `${scenarioMarker('touch_tool')}touch a file` });
    const request = await session.nextOf('permission.requested');
    expect(request).toMatchObject({ tool: 'command_execution', kind: 'execute', title: TOUCH_TOOL_COMMAND, input: { command: TOUCH_TOOL_COMMAND, cwd: env.cwd } });
    expect(request.options).toEqual(expect.arrayContaining(['allow', 'deny']));
    expect(await session.nextOf('permission.resolved')).toEqual({ type: 'permission.resolved', requestId: request.requestId, decision: 'deny', by: 'policy' });
    expect(await session.nextOf('turn.completed')).toMatchObject({ turn: 1 });
    // The request names the tool call it is for, as the stream names it.
    const call = session.turn(1).find((message) => message.type === 'tool.call');
    expect(call).toMatchObject({ name: request.tool, toolCallId: request.toolCallId, input: { command: TOUCH_TOOL_COMMAND } });
    expect(session.turn(1).find((message) => message.type === 'tool.failed')).toMatchObject({ name: 'command_execution', toolCallId: request.toolCallId });
    expect(session.messages.some((message) => message.type === 'agent.warning')).toBe(false);
    expect(existsSync(join(env.cwd, 'touched-by-agent.txt'))).toBe(false);
    session.end();
    await session.done;
  });

  it('the turn\'s usage is its own, not the thread\'s total', async () => {
    const session = new SessionDriver((onStopped) => codexSession(options(onStopped)));
    session.send({ type: 'prompt', text: 'one' });
    expect(await session.nextOf('turn.completed')).toMatchObject({ usage: { inputTokens: 100 } });
    session.send({ type: 'prompt', text: 'two' });
    expect(await session.nextOf('turn.completed')).toMatchObject({ usage: { inputTokens: 100 } });
    session.end();
    expect((await session.done).at(-1)).toMatchObject({ type: 'terminal.completed', usage: { inputTokens: 200 } });
  });
});

describe('codexSession permissions on the real Codex (item/commandExecution/requestApproval)', () => {
  permissionConformance(
    () => ({
      name: 'Codex',
      tag: TAG,
      cwd: env.cwd,
      tool: 'command_execution',
      // No approvalPolicy: with permission the session's is untrusted, and touch asks (Codex's configuration here says never).
      session: (permission, onStopped) => codexSession(options(onStopped, permission)),
    }),
    permissionLatencies,
  );

  const touch = `${scenarioMarker('touch_tool')}touch a file`;
  const touchedFile = (): string => join(env.cwd, 'touched-by-agent.txt');

  it('allow-always where Codex offers no acceptForSession (untrusted): accepted once, the next touch asks again', async () => {
    const session = new SessionDriver((onStopped) => codexSession(options(onStopped, { permission: 'ask' })));
    session.send({ type: 'prompt', text: touch });
    const first = await session.nextOf('permission.requested', 60_000);
    expect(first.options).toEqual(['allow', 'deny']);
    session.send({ type: 'permission', requestId: first.requestId, decision: 'allow-always' });
    // Not offered: narrowed to allow.
    expect(await session.nextOf('permission.resolved')).toMatchObject({ requestId: first.requestId, decision: 'allow', by: 'caller' });
    await session.nextOf('turn.completed', 60_000);
    expect(existsSync(touchedFile())).toBe(true);
    expect(session.turn(1).find((message) => message.type === 'tool.completed')).toMatchObject({ name: 'command_execution', toolCallId: first.toolCallId });
    session.send({ type: 'prompt', text: touch });
    const second = await session.nextOf('permission.requested', 60_000);
    session.send({ type: 'permission', requestId: second.requestId, decision: 'deny' });
    expect(await session.nextOf('turn.completed', 60_000)).toMatchObject({ turn: 2 });
    session.end();
    await session.done;
    rmSync(touchedFile(), { force: true });
  });

  it('a resumed thread asks too: thread/resume carries the approval policy', async () => {
    const first = new SessionDriver((onStopped) => codexSession(options(onStopped)));
    first.send({ type: 'prompt', text: 'remember this' });
    const started = await first.nextOf('session.started');
    first.end();
    await first.done;
    const second = new SessionDriver((onStopped) => codexSession(options(onStopped, { session: { resume: started.sessionId }, permission: 'deny-all' })));
    second.send({ type: 'prompt', text: touch });
    expect(await second.nextOf('permission.requested', 60_000)).toMatchObject({ tool: 'command_execution', title: TOUCH_TOOL_COMMAND });
    expect(await second.nextOf('permission.resolved')).toMatchObject({ decision: 'deny', by: 'policy' });
    await second.nextOf('turn.completed', 60_000);
    expect(existsSync(touchedFile())).toBe(false);
    second.end();
    await second.done;
  });
});

describe("runCodex with transport 'app-server'", () => {
  const run = (name: string, scenario: string, transport: 'exec' | 'app-server'): Promise<CliMessage[]> =>
    timings.run(`${name} (${transport})`, runCodex({ ...executableOptions('codex'), prompt: `${scenarioMarker(scenario)}go`, model: CODEX_MODEL, cwd: env.cwd, env: { ...env.env, ...TAG.env }, extraArgs: ['-c', env.baseUrlOverride('recall')], transport }));

  it('streams the text as deltas where exec gives one whole message, and ends with the same answer', async () => {
    const exec = await run('slow text', 'slow_text', 'exec');
    const appServer = await run('slow text', 'slow_text', 'app-server');
    expect(answerOf(exec)).toBe(expectedText('slow_text'));
    expect(answerOf(appServer)).toBe(expectedText('slow_text'));
    expect(exec.filter((message) => message.type === 'assistant')).toHaveLength(1);
    expect(appServer.filter((message) => message.type === 'assistant').length).toBeGreaterThanOrEqual(20);
    expect(appServer[0]).toMatchObject({ type: 'session.started' });
    expect(appServer.at(-1)).toMatchObject({ type: 'terminal.completed', stopReason: 'end_turn', usage: { inputTokens: 100, outputTokens: 40 } });
    expect(appServer.some((message) => message.type.startsWith('turn.') || message.type.startsWith('input.'))).toBe(false);
  });

  it('runs a tool and fails a model error like exec does', async () => {
    const tool = await run('bash tool', 'bash_tool', 'app-server');
    expect(tool.filter((message) => message.type.startsWith('tool.')).map((message) => message.type)).toEqual(['tool.call', 'tool.completed']);
    expect(tool.find((message) => message.type === 'tool.completed')).toMatchObject({ name: 'command_execution', output: 'hello\n' });
    const failed = await run('http500', 'http500', 'app-server');
    expect(failed.at(-1)).toMatchObject({ type: 'terminal.failed', reason: 'agent-error', exitCode: 0 });
  });
});

describe('runCodex with permission: a one-prompt app-server session, where Codex asks', () => {
  permissionRunConformance(() => ({
    name: 'Codex',
    tag: TAG,
    cwd: env.cwd,
    tool: 'command_execution',
    run: (prompt, permission, onStopped) => runCodex({ ...(options(onStopped) as Omit<CodexSessionOptions, 'permission' | 'session'>), prompt, ...permission }),
  }));
});

describe('prompt parts and typed answers on the real Codex', () => {
  const runOptions = (): Omit<CodexSessionOptions, 'permission' | 'session'> => options(() => undefined);
  // Runs go over exec (the default transport) unless they hold an image, which goes over app-server.
  promptConformance(() => ({
    name: 'Codex',
    tag: TAG,
    cwd: env.cwd,
    server,
    run: (prompt, outputSchema) => runCodex({ ...runOptions(), prompt, ...(outputSchema === undefined ? {} : { outputSchema }) }),
    session: (onStopped) => codexSession(options(onStopped)),
  }));

  it('a schema goes natively, exec (a new thread and a resumed one) and app-server alike: the model request carries it as a strict json_schema format', async () => {
    let thread: string | undefined;
    for (const transport of ['exec', 'exec resume', 'app-server'] as const) {
      const from = server.requests.length;
      const how = transport === 'exec resume' ? { transport: 'exec' as const, session: { resume: thread ?? 'none' } } : { transport };
      const result = await collectRunResult(runCodex({ ...runOptions(), prompt: `${scenarioMarker('json_ok')}Answer as JSON.`, outputSchema: Answer, ...how }));
      if (!result.ok) throw new Error(`the ${transport} run failed: ${result.terminal?.message ?? 'incomplete'}`);
      expect(result.output).toEqual(JSON_OK_VALUE);
      thread ??= result.sessionId;
      const bodies = server.requests.slice(from).filter((request) => request.method === 'POST').map((request) => request.body as { text?: { format?: Record<string, unknown> } });
      expect(bodies.map((body) => body.text?.format)).toContainEqual(expect.objectContaining({ type: 'json_schema', strict: true, schema: expect.objectContaining({ required: ['answer', 'n'] }) }));
      // The instruction an agent without native schemas gets is not in the prompt.
      expect(bodies.some((body) => JSON.stringify(body).includes('Answer with a single JSON value'))).toBe(false);
    }
  });
});

describe('MCP servers and host tools on the real Codex', () => {
  const calls: string[] = [];
  const lookup = tool({
    name: 'lookup',
    description: 'Looks up the value of a key',
    input: z.object({ key: z.string() }),
    run: ({ key }) => {
      calls.push(key);
      return `value of ${key}`;
    },
  });
  const ask = (key: string): string => `${scenarioMarker('call_tool')}${callToolText('lookup', { key })}`;

  toolConformance(() => ({
    name: 'Codex',
    tag: TAG,
    server,
    // Runs go over exec unless they have a permission, which goes over app-server.
    // A run's permission is never 'ask' (a run takes no commands): the suite gives runs none.
    run: (prompt, tools) => {
      const base: Omit<CodexSessionOptions, 'permission' | 'session'> = options(() => undefined);
      return runCodex({ ...base, prompt, ...(tools as Pick<RunCodexOptions, 'tools' | 'mcpServers' | 'permission'>) });
    },
    session: (tools, onStopped) => codexSession(options(onStopped, tools)),
  }));

  it('with permission, each MCP tool call asks (mcpServer/elicitation/request) as mcp__host__lookup: a deny fails the call, an allow runs it', async () => {
    calls.length = 0;
    // With permission every call asks (mcpServer/elicitation/request): one denied by a command, one allowed.
    const asking = new SessionDriver((onStopped) => codexSession(options(onStopped, { tools: [lookup], permission: 'ask' })));
    asking.send({ type: 'prompt', text: ask('k2') });
    const denied = await asking.nextOf('permission.requested');
    expect(denied).toMatchObject({ tool: 'mcp__host__lookup', kind: 'other', input: { key: 'k2' }, options: ['allow', 'deny'] });
    asking.send({ type: 'permission', requestId: denied.requestId, decision: 'deny' });
    await asking.nextOf('turn.completed');
    expect(asking.turn(1).find((message) => message.type === 'tool.failed')).toMatchObject({ name: 'mcp__host__lookup' });
    asking.send({ type: 'prompt', text: ask('k3') });
    const allowed = await asking.nextOf('permission.requested');
    asking.send({ type: 'permission', requestId: allowed.requestId, decision: 'allow' });
    await asking.nextOf('turn.completed');
    expect(asking.turn(2).find((message) => message.type === 'tool.completed')).toMatchObject({ name: 'mcp__host__lookup', output: expect.stringContaining('value of k3') });
    expect(calls).toEqual(['k3']);
    expect(asking.messages.some((message) => message.type === 'agent.warning')).toBe(false);
    asking.end();
    await asking.done;
  });
});
