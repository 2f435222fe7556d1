import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod';
import { AGENTS, claudeCodeSession, collectRunResult, createAgentPool, runClaudeCode, stopAllRuns, tool, type ClaudeCodeSessionOptions, type StopReport } from '../../lib/index.js';
import { createProcessTag, describeProcesses } from '../helpers/tagged-processes.js';
import { claudeExecutable, createClaudeEnv, type ClaudeEnv } from './claude-env.js';
import { scenarioMarker, startFakeModelServer, type FakeModelServer } from './fake-model-server.js';
import { callToolText, calledToolAnswer, JSON_OK_VALUE, testPng, TOUCH_TOOL_COMMAND } from './scenarios.js';
import { SessionDriver } from './session-driver.js';
import { sessionConformance, type AbortLatencies } from './session-suite.js';
import { pinnedVersion } from './suite.js';
import { permissionConformance, permissionRunConformance, type PermissionLatencies } from './permission-suite.js';
import { Answer, promptConformance } from './prompt-suite.js';
import { NOTES_SERVER, toolConformance } from './tools-suite.js';
import { poolConformance } from './pool-suite.js';
import { conversationConformance } from './conversation-suite.js';

/** claudeCodeSession against the real Claude Code CLI (duplex stream-json) and the fake model server on 127.0.0.1. */

const CLAUDE = claudeExecutable();
const TAG = createProcessTag('AGENT_RX_CLAUDE_SESSION');

let server: FakeModelServer;
let env: ClaudeEnv;
const latencies: AbortLatencies = new Map();
const permissionLatencies: PermissionLatencies = new Map();

beforeAll(async () => {
  server = await startFakeModelServer();
  env = createClaudeEnv({ baseUrl: server.baseUrl });
});

afterAll(async () => {
  await stopAllRuns();
  await server.close();
  await env.cleanup();
  process.stdout.write(
    `\nClaude Code session abort latencies: ${[...latencies].map(([name, ms]) => `${name} ${ms.toFixed(1)} ms`).join(', ')}; permission (decision → agent resumed): ${[...permissionLatencies].map(([name, ms]) => `${name} ${ms.toFixed(1)} ms`).join(', ')}\n`,
  );
});

function options(onStopped: (report: StopReport) => void, extra: Partial<ClaudeCodeSessionOptions> = {}): ClaudeCodeSessionOptions {
  return {
    executable: CLAUDE.command,
    executableArgs: CLAUDE.args,
    model: 'recall',
    allowedTools: ['Bash'],
    cwd: env.cwd,
    env: { ...env.env, ...TAG.env },
    onStopped,
    ...extra,
  };
}

describe('claudeCodeSession on the real Claude Code', () => {
  sessionConformance(() => ({ name: 'Claude Code', tag: TAG, agentVersion: pinnedVersion('@anthropic-ai/claude-code'), session: (onStopped) => claudeCodeSession(options(onStopped)) }), latencies);

  describe('from a pool', () => {
    poolConformance(() => ({ name: 'Claude Code', tag: TAG, server, pool: (size) => createAgentPool({ agent: AGENTS.claude, options: options(() => undefined), size }) }));
  });

  describe('whose conversation outlives its process', () => {
    conversationConformance(() => ({
      name: 'Claude Code',
      tag: TAG,
      here: () => ({ cwd: env.cwd, session: (conversation) => claudeCodeSession(options(() => undefined, conversation)), cleanup: () => Promise.resolve() }),
      elsewhere: () => {
        const elsewhere = createClaudeEnv({ baseUrl: server.baseUrl });
        // Over 200 characters once Claude Code has named its folder for it: the name is cut and hashed.
        const cwd = join(elsewhere.root, ...Array.from({ length: 6 }, (_, index) => `a rather long folder name, number ${String(index)}`));
        mkdirSync(cwd, { recursive: true });
        return Promise.resolve({ cwd, session: (conversation) => claudeCodeSession(options(() => undefined, { cwd, env: { ...elsewhere.env, ...TAG.env }, ...conversation })), cleanup: () => elsewhere.cleanup() });
      },
    }));
  });

  it('announces a new session before its first prompt runs: the id agent-rx gave it, the one the CLI then reports', async () => {
    const session = new SessionDriver((onStopped) => claudeCodeSession(options(onStopped)));
    const started = await session.nextOf('session.started');
    session.send({ type: 'prompt', text: 'hello' });
    await session.nextOf('turn.completed');
    session.end();
    const messages = await session.done;
    expect(messages.filter((message) => message.type === 'session.started')).toEqual([started]);
    expect(messages.at(-1)).toMatchObject({ type: 'terminal.completed', sessionId: started.sessionId });
    // The CLI keeps the session under that id.
    const projects = join(env.home, '.claude', 'projects');
    expect(readdirSync(projects).some((project) => existsSync(join(projects, project, `${started.sessionId}.jsonl`)))).toBe(true);
  });

  it('a steer during the answer is the CLI\'s second result, inside the same turn: its usage is both results\'', async () => {
    const session = new SessionDriver((onStopped) => claudeCodeSession(options(onStopped)));
    session.send({ type: 'prompt', text: `${scenarioMarker('slow_text')}write slowly` });
    await session.nextOf('assistant');
    session.send({ type: 'steer', text: 'steer now' });
    const completed = await session.nextOf('turn.completed');
    // 40 pieces for the slow answer, then the recall's words; each result is one model call of 100 input tokens.
    expect(completed.usage).toMatchObject({ inputTokens: 200 });
    expect(session.answer(1)).toMatch(/^slow00 .* slow39 User texts in context: 2 \("write slowly" \| "steer now"\)\.$/);
    session.end();
    expect((await session.done).at(-1)?.type).toBe('terminal.completed');
  });

  it('an abort cancels a steer Claude Code had not taken: it is dropped, and never runs later', async () => {
    const session = new SessionDriver((onStopped) => claudeCodeSession(options(onStopped)));
    session.send({ type: 'prompt', text: `${scenarioMarker('sleep_tool')}sleep for a while` });
    await session.nextOf('tool.call');
    await TAG.waitFor('sleep');
    session.send({ type: 'steer', text: 'steer that never lands', id: 's1' });
    session.send({ type: 'abort' });
    expect(await session.nextOf('input.dropped')).toMatchObject({ kind: 'steer', reason: 'aborted', commandId: 's1' });
    expect(await session.nextOf('turn.failed')).toMatchObject({ turn: 1, reason: 'aborted' });
    session.send({ type: 'prompt', text: 'next' });
    await session.nextOf('turn.completed');
    expect(session.answer(2)).not.toContain('steer that never lands');
    session.end();
    const messages = await session.done;
    // Ended after an aborted turn, Claude Code exits 1: still the session's normal end.
    expect(messages.at(-1)?.type).toBe('terminal.completed');
  });

  it('ends cleanly after an aborted last turn (the CLI exits 1 then)', async () => {
    const session = new SessionDriver((onStopped) => claudeCodeSession(options(onStopped)));
    session.send({ type: 'prompt', text: `${scenarioMarker('slow_text')}write slowly` });
    await session.nextOf('assistant');
    session.send({ type: 'abort' });
    await session.nextOf('turn.failed');
    session.end();
    expect((await session.done).at(-1)).toMatchObject({ type: 'terminal.completed' });
  });
});

describe('claudeCodeSession: resuming', () => {
  it('announces a session resumed by id first; with continue, the CLI tells its id only in the first turn, after turn.started', async () => {
    const first = new SessionDriver((onStopped) => claudeCodeSession(options(onStopped)));
    first.send({ type: 'prompt', text: 'remember me' });
    first.end();
    const started = (await first.done)[0];
    expect(started).toEqual({ type: 'session.started', pid: expect.any(Number), processGroup: expect.any(Number), sessionId: expect.any(String), agentVersion: pinnedVersion('@anthropic-ai/claude-code') });
    const id = started?.type === 'session.started' ? started.sessionId : '';

    const resumed = new SessionDriver((onStopped) => claudeCodeSession(options(onStopped, { session: { resume: id } })));
    resumed.send({ type: 'prompt', text: 'resumed by id' });
    resumed.end();
    const byId = await resumed.done;
    expect(byId[0]).toEqual({ type: 'session.resumed', pid: expect.any(Number), processGroup: expect.any(Number), sessionId: id, agentVersion: pinnedVersion('@anthropic-ai/claude-code') });
    expect(resumed.answer(1)).toBe('User texts in context: 2 ("remember me" | "resumed by id").');
    expect(byId.at(-1)).toMatchObject({ type: 'terminal.completed', sessionId: id });

    // The latest session of the folder: the one just resumed.
    const continued = new SessionDriver((onStopped) => claudeCodeSession(options(onStopped, { session: 'continue' })));
    continued.send({ type: 'prompt', text: 'continued' });
    continued.end();
    const latest = await continued.done;
    expect(latest.slice(0, 3).map((message) => message.type)).toEqual(['input.accepted', 'turn.started', 'session.resumed']);
    expect(latest[2]).toEqual({ type: 'session.resumed', pid: expect.any(Number), processGroup: expect.any(Number), sessionId: id, agentVersion: pinnedVersion('@anthropic-ai/claude-code'), model: 'recall' });
    expect(continued.answer(1)).toMatch(/^User texts in context: 3 /);
  });
});

describe('claudeCodeSession permissions on the real Claude Code (--permission-prompt-tool stdio)', () => {
  permissionConformance(
    () => ({
      name: 'Claude Code',
      tag: TAG,
      cwd: env.cwd,
      tool: 'Bash',
      // Bash is not allowed by a rule: Claude Code asks before the command.
      session: (permission, onStopped) => claudeCodeSession(options(onStopped, { allowedTools: [], ...permission })),
    }),
    permissionLatencies,
  );
});

describe("claudeCodeSession permissions: Claude Code's own rules, the tool call, allow-always", () => {
  const touch = `${scenarioMarker('touch_tool')}touch a file`;
  const touchedFile = (): string => join(env.cwd, 'touched-by-agent.txt');

  beforeEach(() => {
    rmSync(touchedFile(), { force: true });
  });

  afterEach(async () => {
    expect(describeProcesses(await TAG.waitUntilNone(10_000))).toBe('none');
    rmSync(touchedFile(), { force: true });
    rmSync(join(env.cwd, '.claude'), { recursive: true, force: true });
  });

  it("the request is for the dialect's tool call: the same id, after the tool.call", async () => {
    const session = new SessionDriver((onStopped) => claudeCodeSession(options(onStopped, { allowedTools: [], permission: 'deny-all' })));
    session.send({ type: 'prompt', text: touch });
    const request = await session.nextOf('permission.requested', 60_000);
    const call = session.messages.find((message) => message.type === 'tool.call');
    expect(call).toMatchObject({ type: 'tool.call', name: 'Bash', toolCallId: request.toolCallId, input: { command: TOUCH_TOOL_COMMAND } });
    expect(request.toolCallId).toEqual(expect.stringMatching(/^toolu_/));
    await session.nextOf('turn.completed', 60_000);
    expect(session.messages.find((message) => message.type === 'tool.failed')).toMatchObject({ toolCallId: request.toolCallId, output: expect.stringContaining('denied by the host') });
    session.end();
    await session.done;
  });

  it("allow-always: the same command runs again without asking for the rest of the session; the project's settings stay untouched", async () => {
    const session = new SessionDriver((onStopped) => claudeCodeSession(options(onStopped, { allowedTools: [], permission: 'ask' })));
    session.send({ type: 'prompt', text: touch });
    const request = await session.nextOf('permission.requested', 60_000);
    expect(request.options).toEqual(['allow', 'allow-always', 'deny']);
    session.send({ type: 'permission', requestId: request.requestId, decision: 'allow-always' });
    expect(await session.nextOf('permission.resolved')).toMatchObject({ requestId: request.requestId, decision: 'allow-always', by: 'caller' });
    await session.nextOf('turn.completed', 60_000);
    expect(existsSync(touchedFile())).toBe(true);
    rmSync(touchedFile());
    session.send({ type: 'prompt', text: touch });
    await session.nextOf('turn.completed', 60_000);
    expect(session.turn(2).filter((message) => message.type === 'permission.requested')).toEqual([]);
    expect(session.turn(2).filter((message) => message.type === 'tool.completed')).toHaveLength(1);
    expect(existsSync(touchedFile())).toBe(true);
    expect(existsSync(join(env.cwd, '.claude', 'settings.local.json'))).toBe(false);
    session.end();
    await session.done;
  });

  it('allow (once) asks again for the same command in the next turn', async () => {
    const session = new SessionDriver((onStopped) => claudeCodeSession(options(onStopped, { allowedTools: [], permission: 'allow-all' })));
    session.send({ type: 'prompt', text: touch });
    await session.nextOf('turn.completed', 60_000);
    session.send({ type: 'prompt', text: touch });
    await session.nextOf('turn.completed', 60_000);
    expect(session.turn(1).filter((message) => message.type === 'permission.requested')).toHaveLength(1);
    expect(session.turn(2).filter((message) => message.type === 'permission.requested')).toHaveLength(1);
    session.end();
    await session.done;
  });

  it('a tool allowed by allowedTools runs without asking', async () => {
    const session = new SessionDriver((onStopped) => claudeCodeSession(options(onStopped, { allowedTools: ['Bash'], permission: 'ask' })));
    session.send({ type: 'prompt', text: touch });
    await session.nextOf('turn.completed', 60_000);
    expect(session.messages.filter((message) => message.type.startsWith('permission.'))).toEqual([]);
    expect(existsSync(touchedFile())).toBe(true);
    session.end();
    await session.done;
  });

  it('without permission nothing asks: Claude Code refuses the tool its rules do not allow, and the turn goes on', async () => {
    const session = new SessionDriver((onStopped) => claudeCodeSession(options(onStopped, { allowedTools: [] })));
    session.send({ type: 'prompt', text: touch });
    await session.nextOf('turn.completed', 60_000);
    expect(session.messages.filter((message) => message.type.startsWith('permission.'))).toEqual([]);
    expect(session.messages.find((message) => message.type === 'tool.failed')).toMatchObject({ name: 'Bash' });
    expect(session.answer(1)).toContain('That was the touch command.');
    expect(existsSync(touchedFile())).toBe(false);
    session.end();
    await session.done;
  });
});

describe('runClaudeCode with permission: a one-prompt session, where the agent asks', () => {
  permissionRunConformance(() => ({
    name: 'claude',
    tag: TAG,
    cwd: env.cwd,
    tool: 'Bash',
    run: (prompt, permission, onStopped) => runClaudeCode({ ...(options(onStopped, { allowedTools: [], }) as Omit<ClaudeCodeSessionOptions, 'permission'>), prompt, ...permission }),
  }));
});

describe('prompt parts and typed answers on the real Claude Code', () => {
  promptConformance(() => ({
    name: 'claude',
    tag: TAG,
    cwd: env.cwd,
    server,
    // One try at a structured answer: the fake server gives every call of a scenario the same tool
    // id, and Claude Code takes a second call with the id of the first as an interrupted one.
    run: (prompt, outputSchema) =>
      runClaudeCode({
        ...(options(() => undefined, { env: { ...env.env, ...TAG.env, MAX_STRUCTURED_OUTPUT_RETRIES: '1' } }) as Omit<ClaudeCodeSessionOptions, 'permission'>),
        prompt,
        ...(outputSchema === undefined ? {} : { outputSchema }),
      }),
    session: (onStopped) => claudeCodeSession(options(onStopped)),
  }));

  it('a run with an image and outputSchema is a one-prompt session: the schema is told in the prompt, no StructuredOutput tool; the output is typed', async () => {
    const from = server.requests.length;
    const run = runClaudeCode({
      ...(options(() => undefined) as Omit<ClaudeCodeSessionOptions, 'permission'>),
      prompt: [`${scenarioMarker('json_ok')}Answer as JSON.`, { type: 'image', data: testPng().bytes, mimeType: 'image/png' }],
      outputSchema: Answer,
    });
    const result = await collectRunResult(run);
    if (!result.ok) throw new Error(`the run failed: ${result.terminal?.message ?? 'incomplete'}`);
    const output: { answer: string; n: number } = result.output;
    expect(output).toEqual(JSON_OK_VALUE);
    const bodies = server.requests.slice(from).filter((request) => request.method === 'POST').map((request) => JSON.stringify(request.body));
    expect(bodies.length).toBeGreaterThan(0);
    expect(bodies.some((body) => body.includes('"name":"StructuredOutput"'))).toBe(false);
    expect(bodies[0]).toContain('Answer with a single JSON value that satisfies the JSON Schema below');
  });
});

describe('host tools and MCP servers on the real Claude Code (--mcp-config, --strict-mcp-config)', () => {
  toolConformance(() => ({
    name: 'claude',
    tag: TAG,
    server,
    // The shared run cases give no permission (a run's could not be `ask`).
    run: (prompt, tools) => runClaudeCode({ ...(options(() => undefined) as Omit<ClaudeCodeSessionOptions, 'permission'>), ...(tools as Omit<typeof tools, 'permission'>), prompt }),
    session: (tools, onStopped) => claudeCodeSession({ ...options(onStopped), ...tools }),
  }));

  it("without a permission the host's tools run without asking and the user's own servers stay out; a tool error is a tool.failed", async () => {
    // The user's servers (~/.claude.json) and the project's (.mcp.json), which Claude Code would start without --strict-mcp-config.
    const own = createClaudeEnv({ baseUrl: server.baseUrl });
    let session: SessionDriver | undefined;
    // The requests counted below are this session's: no agent of an earlier case may still be asking.
    expect(describeProcesses(await TAG.waitUntilNone(30_000))).toBe('none');
    try {
      const notes = { command: process.execPath, args: [NOTES_SERVER] };
      writeFileSync(join(own.home, '.claude.json'), JSON.stringify({ mcpServers: { users: notes } }));
      writeFileSync(join(own.cwd, '.mcp.json'), JSON.stringify({ mcpServers: { projects: notes } }));
      const lookup = tool({ name: 'lookup', description: 'Looks an order up', input: z.object({ id: z.string() }), run: ({ id }) => `order ${id}: in the warehouse` });
      const broken = tool({ name: 'broken', description: 'Fails', input: z.object({}), run: () => Promise.reject(new Error('out of order 5150')) });
      const from = server.requests.length;
      session = new SessionDriver((onStopped) => claudeCodeSession({ ...options(onStopped), cwd: own.cwd, env: { ...own.env, ...TAG.env }, tools: [lookup, broken] }));
      session.send({ type: 'prompt', text: `${scenarioMarker('call_tool')}${callToolText('lookup', { id: 'B-2' })}` });
      await session.nextOf('turn.completed', 120_000);
      expect(session.answer(1)).toBe(calledToolAnswer('order B-2: in the warehouse'));
      expect(session.turn(1).filter((message) => message.type === 'permission.requested')).toEqual([]);
      expect(session.turn(1)).toContainEqual(expect.objectContaining({ type: 'tool.call', name: 'mcp__host__lookup', kind: 'other' }));
      expect(session.turn(1)).toContainEqual(expect.objectContaining({ type: 'tool.completed', name: 'mcp__host__lookup' }));
      // Claude Code 2.1.332 defers MCP tools: the model loads the tool with ToolSearch first (2.1.197 offers it at once).
      const search = session.turn(1).find((message) => message.type === 'tool.completed' && message.name === 'ToolSearch');
      if (search !== undefined) expect(search).toMatchObject({ output: 'mcp__host__lookup' });
      session.send({ type: 'prompt', text: `${scenarioMarker('call_tool')}${callToolText('broken', {})}` });
      await session.nextOf('turn.completed', 120_000);
      expect(session.turn(2)).toContainEqual(expect.objectContaining({ type: 'tool.failed', name: 'mcp__host__broken', output: expect.stringContaining('out of order 5150') as unknown }));
      session.end();
      expect((await session.done).at(-1)?.type).toBe('terminal.completed');
      const offered = server.requests
        .slice(from)
        .flatMap((request) => ((request.body as { tools?: { name: string }[] } | undefined)?.tools ?? []).map((offer) => offer.name))
        .filter((name) => name.startsWith('mcp__'));
      expect([...new Set(offered)].sort()).toEqual(['mcp__host__broken', 'mcp__host__lookup']);
      expect(describeProcesses(await TAG.waitUntilNone(10_000))).toBe('none');
    } finally {
      session?.unsubscribe();
      await TAG.waitUntilNone(10_000);
      await own.cleanup();
    }
  }, 300_000);
});
