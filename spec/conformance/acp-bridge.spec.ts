import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isAlive } from '../helpers/processes.js';
import { createProcessTag, describeProcesses, type ProcessTag } from '../helpers/tagged-processes.js';
import { AcpBridge } from './acp-bridge.js';
import { claudeExecutable, createClaudeEnv } from './claude-env.js';
import { createCodexEnv, CODEX_FAKE_PROVIDER } from './codex-env.js';
import { scenarioBaseUrl, scenarioMarker, startFakeModelServer, type FakeModelServer } from './fake-model-server.js';
import { createGeminiEnv, geminiCommand } from './gemini-env.js';
import { createPiEnv, OPENAI_PROVIDER } from './pi-env.js';
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

beforeAll(async () => {
  server = await startFakeModelServer();
});

afterAll(async () => {
  await server.close();
  process.stdout.write(`\nACP bridge cancel latencies (session/cancel → the prompt's answer, tool gone): ${[...latencies].map(([name, ms]) => `${name} ${ms.toFixed(1)} ms`).join(', ')}\n`);
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

