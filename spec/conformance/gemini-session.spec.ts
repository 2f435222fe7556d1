import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { acpSession, AGENTS, createAgentPool, geminiSession, runGemini, stopAllRuns, type GeminiSessionOptions, type StopReport } from '../../lib/index.js';
import { createProcessTag } from '../helpers/tagged-processes.js';
import { scenarioMarker, startFakeModelServer, type FakeModelServer } from './fake-model-server.js';
import { createGeminiEnv, geminiCommand, type GeminiEnv } from './gemini-env.js';
import { SessionDriver } from './session-driver.js';
import { sessionConformance, type AbortLatencies } from './session-suite.js';
import { poolConformance } from './pool-suite.js';
import { pinnedVersion } from './suite.js';
import { permissionConformance, permissionRunConformance, type PermissionLatencies } from './permission-suite.js';
import { acpFilePartConformance, promptConformance, type PromptAgent } from './prompt-suite.js';
import { toolConformance } from './tools-suite.js';

/**
 * geminiSession (acpSession over `gemini --acp`) against the real Gemini CLI and the fake model
 * server on 127.0.0.1: the Agent Client Protocol through its SDK.
 */

const GEMINI = geminiCommand();
const TAG = createProcessTag('AGENT_RX_GEMINI_SESSION');

let server: FakeModelServer;
let env: GeminiEnv;
const latencies: AbortLatencies = new Map();
const permissionLatencies: PermissionLatencies = new Map();

beforeAll(async () => {
  server = await startFakeModelServer();
  env = createGeminiEnv({ baseUrl: server.baseUrl, scenario: 'recall', maxAttempts: 1 });
});

afterAll(async () => {
  await stopAllRuns();
  await server.close();
  await env.cleanup();
  process.stdout.write(`\nGemini CLI (ACP) session abort latencies: ${[...latencies].map(([name, ms]) => `${name} ${ms.toFixed(1)} ms`).join(', ')}; permission (decision → agent resumed): ${[...permissionLatencies].map(([name, ms]) => `${name} ${ms.toFixed(1)} ms`).join(', ')}\n`);
});

function options(onStopped: (report: StopReport) => void, extra: Partial<GeminiSessionOptions> = {}): GeminiSessionOptions {
  return {
    executable: GEMINI.command,
    executableArgs: GEMINI.args,
    approvalMode: 'yolo',
    cwd: env.cwd,
    env: { ...env.env, ...TAG.env },
    onStopped,
    ...extra,
  };
}

describe('geminiSession on the real Gemini CLI (ACP)', () => {
  sessionConformance(() => ({ name: 'Gemini CLI', tag: TAG, agentVersion: pinnedVersion('@google/gemini-cli'), session: (onStopped) => geminiSession(options(onStopped)) }), latencies);

  describe('from a pool', () => {
    poolConformance(() => ({ name: 'Gemini CLI', tag: TAG, server: server, pool: (size) => createAgentPool({ agent: AGENTS.gemini, options: options(() => undefined), size }) }));
  });

  it("announces the ACP session id from session/new, with the CLI's version from initialize, before the first answer", async () => {
    const session = new SessionDriver((onStopped) => geminiSession(options(onStopped)));
    session.send({ type: 'prompt', text: 'hello' });
    const started = await session.nextOf('session.started');
    expect(started.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(started.agentVersion).toBe(pinnedVersion('@google/gemini-cli'));
    await session.nextOf('turn.completed');
    expect(session.messages.findIndex((message) => message.type === 'assistant')).toBeGreaterThan(session.messages.indexOf(started));
    session.end();
    expect((await session.done).at(-1)).toMatchObject({ type: 'terminal.completed', sessionId: started.sessionId });
  });

  it('a model error fails the turn with the agent\'s error; the session goes on', async () => {
    const session = new SessionDriver((onStopped) => geminiSession(options(onStopped)));
    session.send({ type: 'prompt', text: `${scenarioMarker('http500')}fail` });
    const ended = await session.next((message) => message.type === 'turn.completed' || message.type === 'turn.failed');
    expect(ended).toMatchObject({ type: 'turn.failed', reason: 'agent-error' });
    session.send({ type: 'prompt', text: 'again' });
    expect(await session.nextOf('turn.completed')).toMatchObject({ turn: 2 });
    session.end();
    await session.done;
  });

  it('acpSession runs any ACP agent by its command: the same Gemini CLI, named by the caller', async () => {
    const session = new SessionDriver((onStopped) =>
      acpSession({ command: GEMINI.command, args: [...GEMINI.args, '--acp', '--skip-trust'], name: 'my agent', cwd: env.cwd, env: { ...env.env, ...TAG.env }, onStopped }),
    );
    session.send({ type: 'prompt', text: 'hi there' });
    await session.nextOf('turn.completed');
    expect(session.answer(1)).toBe('User texts in context: 1 ("hi there").');
    session.end();
    expect((await session.done).at(-1)?.type).toBe('terminal.completed');
  });
});

describe('geminiSession permissions on the real Gemini CLI (session/request_permission)', () => {
  permissionConformance(
    () => ({
      name: 'Gemini CLI',
      tag: TAG,
      cwd: env.cwd,
      tool: 'run_shell_command',
      // Its default approval mode asks before a shell command.
      session: (permission, onStopped) => geminiSession(options(onStopped, { approvalMode: 'default', ...permission })),
    }),
    permissionLatencies,
  );
});

describe('runGemini with permission: a one-prompt ACP session, where Gemini CLI asks', () => {
  permissionRunConformance(() => ({
    name: 'Gemini CLI',
    tag: TAG,
    cwd: env.cwd,
    tool: 'run_shell_command',
    run: (prompt, permission, onStopped) =>
      runGemini({ prompt, executable: GEMINI.command, executableArgs: GEMINI.args, cwd: env.cwd, env: { ...env.env, ...TAG.env }, onStopped, ...permission }),
  }));
});

describe('geminiSession: a steer while a request waits', () => {
  it('the steer cancels the prompt, so the request is denied first (by abort); the steer is the next prompt of the same turn', async () => {
    rmSync(join(env.cwd, 'touched-by-agent.txt'), { force: true });
    const session = new SessionDriver((onStopped) => geminiSession(options(onStopped, { approvalMode: 'default', permission: 'ask' })));
    session.send({ type: 'prompt', text: `${scenarioMarker('touch_tool')}touch a file` });
    const request = await session.nextOf('permission.requested', 60_000);
    session.send({ type: 'steer', text: `${scenarioMarker('recall')}never mind` });
    expect(await session.nextOf('permission.resolved')).toEqual({ type: 'permission.resolved', requestId: request.requestId, decision: 'deny', by: 'abort' });
    expect(await session.nextOf('turn.completed', 60_000)).toMatchObject({ turn: 1 });
    expect(session.answer(1)).toContain('never mind');
    expect(existsSync(join(env.cwd, 'touched-by-agent.txt'))).toBe(false);
    session.end();
    await session.done;
  });
});

const geminiPromptAgent = (): PromptAgent => ({
    name: 'Gemini CLI',
    tag: TAG,
    cwd: env.cwd,
    server,
    run: (prompt, outputSchema) =>
      runGemini({ prompt, executable: GEMINI.command, executableArgs: GEMINI.args, cwd: env.cwd, env: { ...env.env, ...TAG.env }, ...(outputSchema === undefined ? {} : { outputSchema }) }),
    session: (onStopped) => geminiSession(options(onStopped)),
  });

describe('prompt parts and typed answers on the real Gemini CLI', () => {
  promptConformance(geminiPromptAgent);
});

describe('geminiSession: a file part', () => {
  acpFilePartConformance(geminiPromptAgent, '--- Content from referenced context ---');
});

describe('host tools and MCP servers on the real Gemini CLI', () => {
  toolConformance(() => ({
    name: 'Gemini CLI',
    tag: TAG,
    server,
    // Its ACP updates say no call's input.
    sessionCallsSayNoInput: true,
    // It checks a call's input against the tool's schema itself: the model reads its own error.
    checksInput: 'refuses',
    // The run cases give no permission (a run with one is an ACP session, as the session case is).
    run: (prompt, { permission: _permission, ...tools }) => runGemini({ prompt, executable: GEMINI.command, executableArgs: GEMINI.args, cwd: env.cwd, env: { ...env.env, ...TAG.env }, ...tools }),
    // Its default approval mode asks before every MCP call (yolo would not).
    session: (tools, onStopped) => geminiSession(options(onStopped, { approvalMode: 'default', ...tools })),
  }));
});
