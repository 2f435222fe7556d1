import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { AGENTS, createAgentPool, qwenSession, runQwen, stopAllRuns, type QwenSessionOptions, type StopReport } from '../../lib/index.js';
import { createProcessTag } from '../helpers/tagged-processes.js';
import { BASH_TOOL_COMMAND, scenarioMarker, startFakeModelServer, type FakeModelServer } from './fake-model-server.js';
import { createQwenEnv, qwenCommand, type QwenEnv } from './qwen-env.js';
import { SessionDriver } from './session-driver.js';
import { sessionConformance, type AbortLatencies } from './session-suite.js';
import { poolConformance } from './pool-suite.js';
import { permissionConformance, permissionRunConformance, type PermissionLatencies } from './permission-suite.js';
import { acpFilePartConformance, promptConformance, type PromptAgent } from './prompt-suite.js';
import { toolConformance } from './tools-suite.js';
import { pinnedVersion } from './suite.js';
import { conversationConformance } from './conversation-suite.js';

/**
 * qwenSession (the ACP client over `qwen --acp`) against the real Qwen Code and the fake model
 * server on 127.0.0.1. The model id `recall` is the default scenario; a prompt picks another with
 * `scenarioMarker`.
 */

const QWEN = qwenCommand();
const TAG = createProcessTag('AGENT_RX_QWEN_SESSION');

let server: FakeModelServer;
let env: QwenEnv;
const latencies: AbortLatencies = new Map();
const permissionLatencies: PermissionLatencies = new Map();

beforeAll(async () => {
  server = await startFakeModelServer();
  env = createQwenEnv({ baseUrl: server.openaiBaseUrl });
});

afterAll(async () => {
  await stopAllRuns();
  await server.close();
  await env.cleanup();
  process.stdout.write(`\nQwen Code (ACP) session abort latencies: ${[...latencies].map(([name, ms]) => `${name} ${ms.toFixed(1)} ms`).join(', ')}; permission (decision → agent resumed): ${[...permissionLatencies].map(([name, ms]) => `${name} ${ms.toFixed(1)} ms`).join(', ')}\n`);
});

function options(onStopped: (report: StopReport) => void, extra: Partial<QwenSessionOptions> = {}): QwenSessionOptions {
  return {
    executable: QWEN.command,
    executableArgs: QWEN.args,
    model: 'recall',
    approvalMode: 'yolo',
    cwd: env.cwd,
    env: { ...env.env, ...TAG.env },
    onStopped,
    ...extra,
  };
}

describe('qwenSession on the real Qwen Code (ACP)', () => {
  // A steer cuts the running prompt (session/cancel), which makes Qwen Code kill the running tool.
  sessionConformance(() => ({ name: 'Qwen Code', tag: TAG, agentVersion: pinnedVersion('@qwen-code/qwen-code'), session: (onStopped) => qwenSession(options(onStopped)), toolUnderSteer: 'failed' }), latencies);

  describe('from a pool', () => {
    poolConformance(() => ({ name: 'Qwen Code', tag: TAG, server: server, pool: (size) => createAgentPool({ agent: AGENTS.qwen, options: options(() => undefined), size }) }));
  });

  describe('whose conversation outlives its process', () => {
    conversationConformance(() => ({
      name: 'Qwen Code',
      tag: TAG,
      here: () => ({ cwd: env.cwd, session: (conversation) => qwenSession(options(() => undefined, conversation)), cleanup: () => Promise.resolve() }),
      elsewhere: () => {
        const elsewhere = createQwenEnv({ baseUrl: server.openaiBaseUrl });
        // Qwen Code names its folder of a working folder's sessions after the whole path, however long.
        const cwd = join(elsewhere.root, ...Array.from({ length: 6 }, (_, index) => `a rather long folder name, number ${String(index)}`));
        mkdirSync(cwd, { recursive: true });
        return Promise.resolve({ cwd, session: (conversation) => qwenSession(options(() => undefined, { cwd, env: { ...elsewhere.env, ...TAG.env }, ...conversation })), cleanup: () => elsewhere.cleanup() });
      },
    }));
  });

  it('a shell call: tool.call named run_shell_command with its command (sent by Qwen Code only once it runs), then its result', async () => {
    const session = new SessionDriver((onStopped) => qwenSession(options(onStopped)));
    session.send({ type: 'prompt', text: `${scenarioMarker('bash_tool')}run it` });
    expect(await session.nextOf('tool.call')).toEqual({
      type: 'tool.call',
      toolCallId: 'call_bash_tool_1',
      name: 'run_shell_command',
      input: { command: BASH_TOOL_COMMAND, description: `Run ${BASH_TOOL_COMMAND}` },
      kind: 'execute',
      summary: BASH_TOOL_COMMAND,
    });
    expect(await session.nextOf('tool.completed')).toMatchObject({ toolCallId: 'call_bash_tool_1', name: 'run_shell_command', output: expect.stringContaining('Output: hello') as unknown });
    expect(await session.nextOf('turn.completed')).toMatchObject({ turn: 1, stopReason: 'end_turn' });
    session.end();
    const messages = await session.done;
    expect(messages.at(-1)?.type).toBe('terminal.completed');
    // Its version from initialize; its own requests during the tool call (craft/drainMidTurnQueue) are known: no warning.
    expect(messages[0]).toEqual({ type: 'session.started', pid: expect.any(Number), processGroup: expect.any(Number), sessionId: expect.any(String) as unknown, agentVersion: pinnedVersion('@qwen-code/qwen-code') });
    expect(messages.filter((message) => message.type === 'agent.warning')).toEqual([]);
  });

  it('a model error (401) fails the turn with the cause Qwen Code gives (a JSON-RPC Internal error), at once', async () => {
    const session = new SessionDriver((onStopped) => qwenSession(options(onStopped)));
    session.send({ type: 'prompt', text: `${scenarioMarker('http401')}fail` });
    const ended = await session.next((message) => message.type === 'turn.completed' || message.type === 'turn.failed');
    expect(ended).toMatchObject({ type: 'turn.failed', turn: 1, reason: 'agent-error', agentError: expect.stringContaining('401 fake invalid api key') as unknown });
    // The failed prompt stays in Qwen Code's history, and with it the marker that makes the fake
    // server fail every later request: the session is not tried further here.
    session.end();
    expect((await session.done).at(-1)?.type).toBe('terminal.completed');
  });
});

describe('qwenSession permissions on the real Qwen Code (session/request_permission)', () => {
  permissionConformance(
    () => ({
      name: 'Qwen Code',
      tag: TAG,
      cwd: env.cwd,
      tool: 'run_shell_command',
      // Its default approval mode asks before a shell command.
      session: (permission, onStopped) => qwenSession(options(onStopped, { approvalMode: 'default', ...permission })),
    }),
    permissionLatencies,
  );
});

describe('runQwen with permission: a one-prompt ACP session, where Qwen Code asks', () => {
  permissionRunConformance(() => ({
    name: 'Qwen Code',
    tag: TAG,
    cwd: env.cwd,
    tool: 'run_shell_command',
    run: (prompt, permission, onStopped) =>
      runQwen({ prompt, executable: QWEN.command, executableArgs: QWEN.args, model: 'recall', cwd: env.cwd, env: { ...env.env, ...TAG.env }, onStopped, ...permission }),
  }));
});

const qwenPromptAgent = (): PromptAgent => ({
    name: 'Qwen Code',
    tag: TAG,
    cwd: env.cwd,
    server,
    run: (prompt, outputSchema) =>
      runQwen({ prompt, executable: QWEN.command, executableArgs: QWEN.args, model: 'recall', cwd: env.cwd, env: { ...env.env, ...TAG.env }, ...(outputSchema === undefined ? {} : { outputSchema }) }),
    session: (onStopped) => qwenSession(options(onStopped)),
  });

describe('prompt parts and typed answers on the real Qwen Code', () => {
  promptConformance(qwenPromptAgent);
});

describe('qwenSession: a file part', () => {
  acpFilePartConformance(qwenPromptAgent, 'File: file://');
});

describe('host tools and MCP servers on the real Qwen Code', () => {
  toolConformance(() => ({
    name: 'Qwen Code',
    tag: TAG,
    server,
    // It makes a call's input fit the tool's schema before calling (17 becomes '17').
    checksInput: 'coerces',
    // The run cases give no permission (a run with one is an ACP session, as the session case is).
    run: (prompt, { permission: _permission, ...tools }) => runQwen({ prompt, executable: QWEN.command, executableArgs: QWEN.args, model: 'recall', cwd: env.cwd, env: { ...env.env, ...TAG.env }, ...tools }),
    // Its default approval mode asks before an untrusted server's call (yolo would not).
    session: (tools, onStopped) => qwenSession(options(onStopped, { approvalMode: 'default', ...tools })),
  }));
});
