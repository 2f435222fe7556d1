import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import * as acp from '@agentclientprotocol/sdk';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough, Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { piSession, serveAcp, type AcpServer } from '../../lib/index.js';
import { isAlive } from '../helpers/processes.js';
import { createProcessTag, describeProcesses, type ProcessTag } from '../helpers/tagged-processes.js';
import { AcpBridge, choose, type PermissionAnswerer } from './acp-bridge.js';
import { claudeExecutable, createClaudeEnv } from './claude-env.js';
import { createCodexEnv, CODEX_FAKE_PROVIDER } from './codex-env.js';
import { scenarioBaseUrl, scenarioMarker, startFakeModelServer, type FakeModelServer } from './fake-model-server.js';
import { createGeminiEnv, geminiCommand } from './gemini-env.js';
import { createPiEnv, OPENAI_PROVIDER, type PiEnv } from './pi-env.js';
import { TOUCH_TOOL_COMMAND } from './scenarios.js';
import { eventually } from './suite.js';

/**
 * `agent-rx acp --agent …` (serveAcp) driven by the ACP SDK's client over stdio, as an editor
 * drives it, with the real pi, Claude Code, Codex and Gemini CLI behind it and the fake model server
 * on 127.0.0.1.
 */

interface BridgedAgent {
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  cleanup(): Promise<void>;
}

const PI = fileURLToPath(new URL('../../node_modules/.bin/pi', import.meta.url));
let server: FakeModelServer;
const latencies = new Map<string, number>();
const permissionLatencies = new Map<string, number>();

beforeAll(async () => {
  server = await startFakeModelServer();
});

afterAll(async () => {
  await server.close();
  process.stdout.write(`\nACP bridge cancel latencies (session/cancel → the prompt's answer, tool gone): ${[...latencies].map(([name, ms]) => `${name} ${ms.toFixed(1)} ms`).join(', ')}\n`);
  process.stdout.write(`ACP permission latencies (the editor's answer → the agent's next update): ${[...permissionLatencies].map(([name, ms]) => `${name} ${ms.toFixed(1)} ms`).join(', ')}\n`);
});

const agents: Record<string, () => BridgedAgent | Promise<BridgedAgent>> = {
  pi: async () => {
    const env = await createPiEnv({ baseUrl: server.baseUrl });
    return { args: ['--agent', 'pi', '--executable', PI, '--provider', OPENAI_PROVIDER, '--model', 'recall'], env: env.env, cwd: env.cwd, cleanup: () => env.cleanup() };
  },
  claude: () => {
    const env = createClaudeEnv({ baseUrl: server.baseUrl });
    const claude = claudeExecutable();
    return { args: ['--agent', 'claude', '--executable', claude.command, '--model', 'recall', '--allowed-tools', 'Bash'], env: env.env, cwd: env.cwd, cleanup: () => env.cleanup() };
  },
  codex: () => {
    const env = createCodexEnv({ baseUrl: server.baseUrl, requestMaxRetries: 0, streamMaxRetries: 0 });
    // The bridge passes no `-c` of its own: the provider's address goes into the configuration.
    const config = join(env.codexHome, 'config.toml');
    const base = `base_url = ${JSON.stringify(scenarioBaseUrl(server.baseUrl, 'recall'))}`;
    writeFileSync(config, readFileSync(config, 'utf8').replace(`[model_providers.${CODEX_FAKE_PROVIDER}]\n`, `[model_providers.${CODEX_FAKE_PROVIDER}]\n${base}\n`));
    return { args: ['--agent', 'codex'], env: env.env, cwd: env.cwd, cleanup: () => env.cleanup() };
  },
  gemini: () => {
    const env = createGeminiEnv({ baseUrl: server.baseUrl, scenario: 'recall', maxAttempts: 1 });
    // The bundle is executable (`#!/usr/bin/env node`).
    return { args: ['--agent', 'gemini', '--executable', geminiCommand().args[0] ?? '', '--approval-mode', 'yolo'], env: env.env, cwd: env.cwd, cleanup: () => env.cleanup() };
  },
};

describe.each(Object.keys(agents))('agent-rx acp --agent %s, driven by the ACP SDK client', (name) => {
  let agent: BridgedAgent;
  let tag: ProcessTag;
  const bridges: AcpBridge[] = [];
  const bridge = (): AcpBridge => {
    const started = new AcpBridge(agent.args, { ...agent.env, ...tag.env });
    bridges.push(started);
    return started;
  };

  beforeAll(async () => {
    agent = await (agents[name] as () => BridgedAgent | Promise<BridgedAgent>)();
    tag = createProcessTag(`AGENT_RX_ACP_${name.toUpperCase()}`);
  });

  afterEach(async () => {
    for (const started of bridges.splice(0)) {
      started.disconnect();
      await started.exited;
    }
    expect(describeProcesses(await tag.waitUntilNone(10_000))).toBe('none');
  });

  afterAll(async () => {
    await agent.cleanup();
  });

  it('initialize, a session, a prompt: the text streams as chunks before the answer (end_turn, with the usage)', async () => {
    const acp = bridge();
    const sessionId = await acp.open(agent.cwd);
    const answer = await acp.prompt(sessionId, 'first question');
    expect(answer.stopReason).toBe('end_turn');
    expect(answer._meta).toMatchObject({ 'agent-rx': { usage: expect.objectContaining({ inputTokens: expect.any(Number), outputTokens: expect.any(Number) }) } });
    const updates = acp.updatesBefore(acp.lastAnswerId());
    expect(updates.filter((update) => update['sessionUpdate'] === 'agent_message_chunk').length).toBeGreaterThan(1);
    expect(AcpBridge.text(updates)).toBe('User texts in context: 1 ("first question").');
  });

  it('a cancel during `sleep 30`: the prompt answers cancelled, the sleep is gone, the next prompt works in the same session', async () => {
    const acp = bridge();
    const sessionId = await acp.open(agent.cwd);
    const running = acp.prompt(sessionId, `${scenarioMarker('sleep_tool')}sleep for a while`);
    await eventually(() => acp.wire.some((line) => (line.message['params'] as { update?: { sessionUpdate?: string } } | undefined)?.update?.sessionUpdate === 'tool_call'), 20_000);
    const sleep = await tag.waitFor('sleep');
    const sent = performance.now();
    await acp.agent.notify('session/cancel', { sessionId });
    expect(await running).toMatchObject({ stopReason: 'cancelled' });
    latencies.set(name, performance.now() - sent);
    expect(isAlive(sleep)).toBe(false);
    const from = acp.wire.length;
    expect(await acp.prompt(sessionId, 'awake again')).toMatchObject({ stopReason: 'end_turn' });
    expect(AcpBridge.text(acp.updatesBefore(acp.lastAnswerId(), from))).toMatch(/awake again"\)\.$/);
    const calls = acp.wire.filter((line) => (line.message['params'] as { update?: { sessionUpdate?: string } } | undefined)?.update?.sessionUpdate === 'tool_call');
    expect(calls).toHaveLength(1);
  });

  it('the editor quitting mid-turn stops every process: the bridge, the agent and its tool', async () => {
    const acp = bridge();
    const sessionId = await acp.open(agent.cwd);
    void acp.prompt(sessionId, `${scenarioMarker('sleep_tool')}sleep for a while`).catch(() => undefined);
    const sleep = await tag.waitFor('sleep');
    acp.disconnect();
    expect(await acp.exited).toBe(0);
    expect(describeProcesses(await tag.waitUntilNone(10_000))).toBe('none');
    expect(isAlive(sleep)).toBe(false);
  });

  it('_agent-rx/steer during an answer goes into the running turn; _agent-rx/follow-up is queued after it', async () => {
    const acp = bridge();
    const sessionId = await acp.open(agent.cwd);
    const running = acp.prompt(sessionId, `${scenarioMarker('slow_text')}write slowly`);
    await eventually(() => acp.wire.some((line) => (line.message['params'] as { update?: { sessionUpdate?: string } } | undefined)?.update?.sessionUpdate === 'agent_message_chunk'), 20_000);
    expect(await acp.agent.request('_agent-rx/steer', { sessionId, text: `${scenarioMarker('recall')}steer now` })).toEqual({ accepted: { as: 'steer', turn: 1 } });
    expect(await acp.agent.request('_agent-rx/follow-up', { sessionId, text: 'then this' })).toEqual({ accepted: { as: 'follow-up', turn: 1 } });
    expect(await running).toMatchObject({ stopReason: 'end_turn' });
    expect(AcpBridge.text(acp.updatesBefore(acp.lastAnswerId()))).toMatch(/"steer now"\)\.$/);
  });
});


const TOUCHED = 'touched-by-agent.txt';
const touchPrompt = `${scenarioMarker('touch_tool')}touch a file`;

/**
 * serveAcp in this process over real pi sessions (`permission` from the factory's request), its
 * client the ACP SDK's: the editor decides each tool call the agent asks about.
 */
describe('serveAcp over real pi sessions: the editor decides the tool calls (session/request_permission)', () => {
  let env: PiEnv;
  const tag = createProcessTag('AGENT_RX_ACP_PERMISSION');
  const opened: { readonly server: AcpServer; readonly end: () => void }[] = [];
  const touched = (): boolean => existsSync(join(env.cwd, TOUCHED));

  /** A server whose sessions are pi's with the request's permission, and a client that answers with `answer`. */
  const serve = (answer: PermissionAnswerer, permissionTimeoutMs?: number) => {
    const toServer = new PassThrough();
    const toClient = new PassThrough();
    const server = serveAcp(
      ({ cwd, permission }) =>
        piSession({ executable: PI, provider: OPENAI_PROVIDER, model: 'recall', session: 'none', cwd, env: { ...env.env, ...tag.env }, permission, ...(permissionTimeoutMs === undefined ? {} : { permissionTimeoutMs }) }),
      { input: toServer, output: toClient },
    );
    opened.push({ server, end: () => toServer.end() });
    const asked: acp.RequestPermissionRequest[] = [];
    const updates: { readonly at: number; readonly update: acp.SessionUpdate }[] = [];
    let answeredAt = 0;
    const connection = acp
      .client({ name: 'spec-editor' })
      .onNotification(acp.methods.client.session.update, ({ params }) => {
        updates.push({ at: performance.now(), update: params.update });
      })
      .onRequest(acp.methods.client.session.requestPermission, async ({ params, signal }) => {
        asked.push(params);
        const response = await answer(params, signal);
        answeredAt = performance.now();
        return response;
      })
      .connect(acp.ndJsonStream(Writable.toWeb(toServer) as WritableStream<Uint8Array>, Readable.toWeb(toClient) as ReadableStream<Uint8Array>));
    const client = connection.agent;
    return {
      asked,
      updates,
      open: async (): Promise<string> => {
        await client.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
        return (await client.request(acp.methods.agent.session.new, { cwd: env.cwd, mcpServers: [] })).sessionId;
      },
      prompt: (sessionId: string, text: string): Promise<acp.PromptResponse> => client.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text }] }),
      /** From the editor's answer to the first update after it: the agent resumed. */
      resumedAfter: (): number => (updates.find(({ at }) => at > answeredAt)?.at ?? Number.NaN) - answeredAt,
    };
  };

  /** What every request for the touch command says. */
  const expectTouchRequest = (request: acp.RequestPermissionRequest | undefined, sessionId: string): void => {
    expect(request).toMatchObject({ sessionId, toolCall: { title: `bash: ${TOUCH_TOOL_COMMAND}`, kind: 'execute', rawInput: { command: TOUCH_TOOL_COMMAND } } });
    expect(request?.options.map((option) => option.kind)).toEqual(['allow_once', 'reject_once']);
  };

  beforeAll(async () => {
    env = await createPiEnv({ baseUrl: server.baseUrl });
  });

  beforeEach(() => {
    rmSync(join(env.cwd, TOUCHED), { force: true });
  });

  afterEach(async () => {
    for (const { server: served, end } of opened.splice(0)) {
      end();
      await served.closed;
    }
    expect(describeProcesses(await tag.waitUntilNone(10_000))).toBe('none');
  });

  afterAll(async () => {
    await env.cleanup();
  });

  it('reject_once: the editor is asked for the tool call pi announced (its title and kind); the file is not made; the prompt ends end_turn', async () => {
    const editor = serve((request) => choose(request, 'reject_once'));
    const sessionId = await editor.open();
    expect(await editor.prompt(sessionId, touchPrompt)).toMatchObject({ stopReason: 'end_turn' });
    expect(editor.asked).toHaveLength(1);
    expectTouchRequest(editor.asked[0], sessionId);
    // The request is for the call the editor was told of.
    const call = editor.updates.find(({ update }) => update.sessionUpdate === 'tool_call')?.update;
    expect(call).toMatchObject({ toolCallId: editor.asked[0]?.toolCall.toolCallId });
    expect(editor.updates.some(({ update }) => update.sessionUpdate === 'tool_call_update' && update.status === 'failed')).toBe(true);
    expect(touched()).toBe(false);
    permissionLatencies.set('pi reject_once', editor.resumedAfter());
  });

  it('allow_once: the file is made; the prompt ends end_turn', async () => {
    const editor = serve((request) => choose(request, 'allow_once'));
    const sessionId = await editor.open();
    expect(await editor.prompt(sessionId, touchPrompt)).toMatchObject({ stopReason: 'end_turn' });
    expectTouchRequest(editor.asked[0], sessionId);
    expect(touched()).toBe(true);
    permissionLatencies.set('pi allow_once', editor.resumedAfter());
  });

  it("an answer after the session's deadline: the request is withdrawn and denied, the late allow is dropped, the session goes on", async () => {
    let withdrawn = false;
    const editor = serve(async (request, signal) => {
      // The editor's user decides after the deadline: the server withdrew the request by then.
      if (!signal.aborted) await new Promise((resolve) => { signal.addEventListener('abort', resolve, { once: true }); });
      withdrawn = true;
      return choose(request, 'allow_once');
    }, 1500);
    const sessionId = await editor.open();
    expect(await editor.prompt(sessionId, touchPrompt)).toMatchObject({ stopReason: 'end_turn' });
    await eventually(() => withdrawn, 10_000);
    expect(touched()).toBe(false);
    expect(editor.updates.some(({ update }) => update.sessionUpdate === 'notice')).toBe(false);
    expect(await editor.prompt(sessionId, 'awake again')).toMatchObject({ stopReason: 'end_turn' });
    expect(touched()).toBe(false);
  });
});

describe('agent-rx acp --agent pi: permission requests go to the editor unless --approve says otherwise', () => {
  let env: PiEnv;
  const tag = createProcessTag('AGENT_RX_ACP_APPROVE');
  const bridges: AcpBridge[] = [];
  const bridge = (...extra: string[]): AcpBridge => {
    const started = new AcpBridge(['--agent', 'pi', '--executable', PI, '--provider', OPENAI_PROVIDER, '--model', 'recall', ...extra], { ...env.env, ...tag.env });
    bridges.push(started);
    return started;
  };
  const touched = (): boolean => existsSync(join(env.cwd, TOUCHED));

  beforeAll(async () => {
    env = await createPiEnv({ baseUrl: server.baseUrl });
  });

  beforeEach(() => {
    rmSync(join(env.cwd, TOUCHED), { force: true });
  });

  afterEach(async () => {
    for (const started of bridges.splice(0)) {
      started.disconnect();
      await started.exited;
    }
    expect(describeProcesses(await tag.waitUntilNone(10_000))).toBe('none');
  });

  afterAll(async () => {
    await env.cleanup();
  });

  it('by default the editor is asked: its reject_once leaves no file', async () => {
    const acpBridge = bridge();
    acpBridge.answerPermission = (request) => choose(request, 'reject_once');
    const sessionId = await acpBridge.open(env.cwd);
    expect(await acpBridge.prompt(sessionId, touchPrompt)).toMatchObject({ stopReason: 'end_turn' });
    expect(acpBridge.permissions).toHaveLength(1);
    expect(acpBridge.permissions[0]).toMatchObject({ sessionId, toolCall: { kind: 'execute', title: `bash: ${TOUCH_TOOL_COMMAND}` } });
    expect(touched()).toBe(false);
  });

  it('--approve none: the editor is never asked, the tool is denied', async () => {
    const acpBridge = bridge('--approve', 'none');
    const sessionId = await acpBridge.open(env.cwd);
    expect(await acpBridge.prompt(sessionId, touchPrompt)).toMatchObject({ stopReason: 'end_turn' });
    expect(acpBridge.permissions).toEqual([]);
    expect(touched()).toBe(false);
  });

  it('--approve all: the editor is never asked, the tool runs', async () => {
    const acpBridge = bridge('--approve', 'all');
    const sessionId = await acpBridge.open(env.cwd);
    expect(await acpBridge.prompt(sessionId, touchPrompt)).toMatchObject({ stopReason: 'end_turn' });
    expect(acpBridge.permissions).toEqual([]);
    expect(touched()).toBe(true);
  });
});

/** Claude Code and Gemini CLI where they ask before a shell command: `agent-rx acp` forwards to the editor by default too. */
const asking: Record<string, () => BridgedAgent> = {
  claude: () => {
    const env = createClaudeEnv({ baseUrl: server.baseUrl });
    return { args: ['--agent', 'claude', '--executable', claudeExecutable().command, '--model', 'recall'], env: env.env, cwd: env.cwd, cleanup: () => env.cleanup() };
  },
  gemini: () => {
    const env = createGeminiEnv({ baseUrl: server.baseUrl, scenario: 'recall', maxAttempts: 1 });
    return { args: ['--agent', 'gemini', '--executable', geminiCommand().args[0] ?? '', '--approval-mode', 'default'], env: env.env, cwd: env.cwd, cleanup: () => env.cleanup() };
  },
};

describe.each(Object.keys(asking))('agent-rx acp --agent %s: the editor decides the shell command', (name) => {
  let agent: BridgedAgent;
  const tag = createProcessTag(`AGENT_RX_ACP_ASK_${name.toUpperCase()}`);
  const bridges: AcpBridge[] = [];

  beforeAll(() => {
    agent = (asking[name] as () => BridgedAgent)();
  });

  afterEach(async () => {
    for (const started of bridges.splice(0)) {
      started.disconnect();
      await started.exited;
    }
    expect(describeProcesses(await tag.waitUntilNone(10_000))).toBe('none');
    rmSync(join(agent.cwd, TOUCHED), { force: true });
  });

  afterAll(async () => {
    await agent.cleanup();
  });

  it.each<[acp.PermissionOptionKind, boolean]>([
    ['reject_once', false],
    ['allow_once', true],
  ])('%s: asked with the command and its kind; the file is made only when allowed; end_turn', async (kind, made) => {
    rmSync(join(agent.cwd, TOUCHED), { force: true });
    const acpBridge = new AcpBridge(agent.args, { ...agent.env, ...tag.env });
    bridges.push(acpBridge);
    acpBridge.answerPermission = (request) => choose(request, kind);
    const sessionId = await acpBridge.open(agent.cwd);
    expect(await acpBridge.prompt(sessionId, touchPrompt)).toMatchObject({ stopReason: 'end_turn' });
    expect(acpBridge.permissions).toHaveLength(1);
    expect(acpBridge.permissions[0]).toMatchObject({ sessionId, toolCall: { kind: 'execute', title: expect.stringContaining(TOUCH_TOOL_COMMAND) } });
    expect(acpBridge.permissions[0]?.options.map((option) => option.kind)).toEqual(expect.arrayContaining(['allow_once', 'reject_once']));
    expect(existsSync(join(agent.cwd, TOUCHED))).toBe(made);
  });
});
