import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { runClaudeCode, stopAllRuns, type CliMessage, type RunClaudeCodeOptions, type StopReport } from '../../lib/index.js';
import { isAlive } from '../helpers/processes.js';
import { CLAUDE_FAKE_API_KEY, claudeExecutable, createClaudeEnv, type ClaudeEnv } from './claude-env.js';
import {
  BASH_TOOL_COMMAND,
  echoText,
  expectedText,
  expectedThinking,
  expectedToolCall,
  FAKE_INPUT_TOKENS,
  startFakeModelServer,
  TOUCH_TOOL_COMMAND,
  type FakeModelServer,
} from './fake-model-server.js';
import { createProcessTag } from '../helpers/tagged-processes.js';
import { eventually, pinnedVersion, sessionIdOf, shape, stopWhileToolRuns, tools, types } from './suite.js';
import { ScenarioTimings } from './timings.js';
import { answerOf } from '../helpers/pi-transcripts.js';

/**
 * The real Claude Code CLI (the pinned devDependency, 2.1.332; `AGENT_RX_CLAUDE_BIN` names another)
 * against the fake model server on 127.0.0.1, through runClaudeCode. The model id picks the scenario (the CLI passes any id on);
 * the fake server names its tools the Claude way (`Bash` with `{ command, description }`) because
 * the request offers `Bash`. Retries are limited (`CLAUDE_CODE_MAX_RETRIES=1`) to keep failures
 * fast. Wall times are printed at the end.
 */

const CLAUDE = claudeExecutable();
const TAG = createProcessTag('AGENT_RX_CONFORMANCE');
/** Claude Code starts in about 1-2 s, a tool run takes two model calls: generous under load. */
const SLOW = 60_000;

let server: FakeModelServer;
let env: ClaudeEnv;
const timings = new ScenarioTimings();

beforeAll(async () => {
  server = await startFakeModelServer();
  env = createClaudeEnv({ baseUrl: server.baseUrl });
});

afterAll(async () => {
  await stopAllRuns();
  await server.close();
  await env.cleanup();
  timings.print('Claude Code conformance');
});

function options(model: string, extra: Partial<RunClaudeCodeOptions> = {}): RunClaudeCodeOptions {
  return {
    prompt: `Scenario ${model} please`,
    executable: CLAUDE.command,
    executableArgs: CLAUDE.args,
    model,
    cwd: env.cwd,
    env: { ...env.env, [TAG.name]: TAG.value },
    ...extra,
  };
}

function run(name: string, opts: RunClaudeCodeOptions): Promise<CliMessage[]> {
  return timings.run(name, runClaudeCode(opts));
}


/** Claude Code sums the usage of the run's model calls; the fake server sends 100 input tokens per call. */
const usage = (calls: number, output: number) => ({
  inputTokens: FAKE_INPUT_TOKENS * calls,
  outputTokens: output,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  totalTokens: FAKE_INPUT_TOKENS * calls + output,
  cost: expect.any(Number),
});

describe('real Claude Code: answers', () => {
  it(
    'plain text: session, the answer as deltas (not repeated by the whole-block line), completed with usage',
    async () => {
      server.reset();
      const messages = await run('text', options('text'));
      const sessionId = sessionIdOf(messages);
      expect(messages[0]).toEqual({ type: 'session.started', pid: expect.any(Number), processGroup: expect.any(Number), sessionId, agentVersion: pinnedVersion('@anthropic-ai/claude-code'), model: 'text' });
      expect(shape(messages)).toEqual(['session.started', 'assistant', 'terminal.completed']);
      expect(messages.filter((message) => message.type === 'assistant').length).toBeGreaterThan(1);
      expect(answerOf(messages)).toBe(expectedText('text'));
      expect(messages.at(-1)).toEqual({ type: 'terminal.completed', stopReason: 'end_turn', agentStopReason: expect.any(String) as unknown, usage: usage(1, 7), sessionId });
      // One model call, with the model id as the scenario, the fake key and Claude's tools.
      const calls = server.requestsFor('text');
      expect(calls).toHaveLength(1);
      expect(calls[0]).toMatchObject({ url: '/v1/messages', stream: true, apiKey: CLAUDE_FAKE_API_KEY, lastUserText: 'Scenario text please' });
      expect(calls[0]?.toolNames).toContain('Bash');
    },
    SLOW,
  );

  it(
    'thinking then text: one whole thought when the turn ends',
    async () => {
      const messages = await run('thinking_text', options('thinking_text'));
      expect(answerOf(messages)).toBe(expectedText('thinking_text'));
      expect(shape(messages)).toEqual(['session.started', 'assistant', 'assistant.thought', 'terminal.completed']);
      expect(messages.filter((message) => message.type === 'assistant.thought')).toEqual([
        { type: 'assistant.thought', text: expectedThinking('thinking_text') },
      ]);
    },
    SLOW,
  );

  it(
    'a prompt that starts with - reaches the model unchanged (it follows --)',
    async () => {
      const prompt = '-rf --help "quoted" @notes.txt ✓';
      const messages = await run('prompt starting with -', options('echo', { prompt }));
      expect(answerOf(messages)).toBe(echoText(prompt));
      expect(messages.at(-1)).toMatchObject({ type: 'terminal.completed' });
    },
    SLOW,
  );
});

describe('real Claude Code: tools', () => {
  it(
    'Bash allowed by allowedTools: tool.call once, tool.completed with its output, then the answer',
    async () => {
      server.reset();
      const call = expectedToolCall('bash_tool', 'anthropic-messages', 'claude');
      const messages = await run('bash_tool (allowedTools Bash)', options('bash_tool', { allowedTools: ['Bash'] }));
      expect(tools(messages)).toEqual([
        { type: 'tool.call', toolCallId: call?.id, name: 'Bash', input: call?.arguments, kind: 'execute', summary: BASH_TOOL_COMMAND },
        { type: 'tool.completed', toolCallId: call?.id, name: 'Bash', output: 'hello' },
      ]);
      expect(call?.id).toMatch(/^toolu_/);
      expect(answerOf(messages)).toBe(`${call?.textBefore ?? ''}${expectedText('bash_tool')}`);
      expect(shape(messages)).toEqual(['session.started', 'assistant', 'tool.call', 'tool.completed', 'assistant', 'terminal.completed']);
      expect(messages.at(-1)).toMatchObject({ type: 'terminal.completed', stopReason: 'end_turn', usage: usage(2, 15) });
      expect(server.requestsFor('bash_tool').at(-1)?.lastToolResultText).toBe('hello');
    },
    SLOW,
  );

  it(
    'a command that needs permission, without it: tool.failed with the refusal the model sees, the run goes on',
    async () => {
      server.reset();
      const call = expectedToolCall('touch_tool', 'anthropic-messages', 'claude');
      const messages = await run('touch_tool (denied)', options('touch_tool'));
      const refusal = server.requestsFor('touch_tool').at(-1)?.lastToolResultText;
      expect(refusal).toEqual(expect.stringContaining('touch'));
      expect(tools(messages)).toEqual([
        { type: 'tool.call', toolCallId: call?.id, name: 'Bash', input: { command: TOUCH_TOOL_COMMAND, description: `Run ${TOUCH_TOOL_COMMAND}` }, kind: 'execute', summary: TOUCH_TOOL_COMMAND },
        { type: 'tool.failed', toolCallId: call?.id, name: 'Bash', output: refusal },
      ]);
      expect(existsSync(join(env.cwd, 'touched-by-agent.txt'))).toBe(false);
      expect(answerOf(messages)).toBe(`${call?.textBefore ?? ''}${expectedText('touch_tool')}`);
      expect(messages.at(-1)).toMatchObject({ type: 'terminal.completed', stopReason: 'end_turn' });
    },
    SLOW,
  );

  it(
    'the same command with allowedTools: [\'Bash\']: it runs, tool.completed',
    async () => {
      server.reset();
      const call = expectedToolCall('touch_tool', 'anthropic-messages', 'claude');
      const touched = join(env.cwd, 'touched-by-agent.txt');
      try {
        const messages = await run('touch_tool (allowedTools Bash)', options('touch_tool', { allowedTools: ['Bash'] }));
        const output = server.requestsFor('touch_tool').at(-1)?.lastToolResultText;
        expect(tools(messages)).toEqual([
          { type: 'tool.call', toolCallId: call?.id, name: 'Bash', input: call?.arguments, kind: 'execute', summary: TOUCH_TOOL_COMMAND },
          { type: 'tool.completed', toolCallId: call?.id, name: 'Bash', output },
        ]);
        expect(output).toBe('(Bash completed with no output)');
        expect(existsSync(touched)).toBe(true);
        expect(messages.at(-1)).toMatchObject({ type: 'terminal.completed', stopReason: 'end_turn' });
      } finally {
        rmSync(touched, { force: true });
      }
    },
    SLOW,
  );
});

describe('real Claude Code: API errors (CLAUDE_CODE_MAX_RETRIES=1)', () => {
  it.each([
    ['http500', 'API Error: 500 fake internal server error'],
    ['http401', 'API Error: 401 fake invalid api key'],
  ])(
    '%s: one agent.retry, then an agent-error although the CLI exits 1',
    async (model, error) => {
      server.reset();
      const messages = await run(`${model} (1 retry)`, options(model));
      const sessionId = sessionIdOf(messages);
      expect(types(messages)).toEqual(['session.started', 'agent.retry', 'terminal.failed']);
      expect(messages[1]).toEqual({ type: 'agent.retry', attempt: 1, maxAttempts: 1, delayMs: expect.any(Number), reason: expect.any(String) });
      expect(messages.at(-1)).toMatchObject({
        type: 'terminal.failed',
        reason: 'agent-error',
        exitCode: 1,
        signal: null,
        agentError: expect.stringContaining(error),
        message: expect.stringContaining(error),
        sessionId,
      });
      expect(server.requestsFor(model)).toHaveLength(2);
    },
    SLOW,
  );

  it(
    "agentRetry: false: one request, no agent.retry (CLAUDE_CODE_MAX_RETRIES=0 wins over the environment's 1)",
    async () => {
      server.reset();
      const messages = await run('http500, agentRetry: false', options('http500', { agentRetry: false }));
      expect(types(messages)).toEqual(['session.started', 'terminal.failed']);
      expect(messages.at(-1)).toMatchObject({ reason: 'agent-error', exitCode: 1, agentError: expect.stringContaining('API Error: 500') });
      expect(server.requestsFor('http500')).toHaveLength(1);
    },
    SLOW,
  );
});

describe('real Claude Code: sessions', () => {
  it(
    'resume a session: session.resumed with the same id, the history is sent again, kept under the fresh HOME',
    async () => {
      server.reset();
      const first = await run('session: new', options('text'));
      const id = sessionIdOf(first);
      const resumed = await run('session: { resume }', options('echo', { session: { resume: id }, prompt: 'second' }));
      expect(resumed[0]).toEqual({ type: 'session.resumed', pid: expect.any(Number), processGroup: expect.any(Number), sessionId: id, agentVersion: pinnedVersion('@anthropic-ai/claude-code'), model: 'echo' });
      expect(answerOf(resumed)).toBe(echoText('second'));
      expect(resumed.at(-1)).toMatchObject({ type: 'terminal.completed', sessionId: id });
      expect(server.requestsFor('echo')[0]?.messageCount).toBeGreaterThanOrEqual(3);
      const projects = join(env.home, '.claude', 'projects');
      expect(readdirSync(projects).some((dir) => existsSync(join(projects, dir, `${id}.jsonl`)))).toBe(true);
    },
    SLOW,
  );

  it(
    'resume an unknown session id: no session message, an agent-error from the result line the CLI prints (exit 1)',
    async () => {
      const id = randomUUID();
      const messages = await run('session: { resume: unknown id }', options('text', { session: { resume: id } }));
      expect(types(messages)).toEqual(['terminal.failed']);
      expect(messages[0]).toMatchObject({ reason: 'agent-error', exitCode: 1, agentError: `No conversation found with session ID: ${id}` });
    },
    SLOW,
  );
});

describe('real Claude Code: cancellation', () => {
  it(
    'unsubscribing mid-stream: the CLI is gone soon after, the request is closed, nothing is emitted after',
    async () => {
      server.reset();
      const started = performance.now();
      const seen: CliMessage[] = [];
      let unsubscribedAt = -1;
      const report = await new Promise<StopReport>((resolve) => {
        const subscription = runClaudeCode(options('hang', { onStopped: resolve })).subscribe((message) => {
          seen.push(message);
          if (seen.filter((item) => item.type === 'assistant').length === 3) {
            unsubscribedAt = seen.length;
            subscription.unsubscribe();
          }
        });
      });
      timings.add(`cancel mid-stream (hang), stopped in ${report.durationMs.toFixed(0)} ms`, performance.now() - started);
      expect(seen).toHaveLength(unsubscribedAt);
      expect(report).toMatchObject({ requested: true, exitedGracefully: true, confirmed: true });
      expect(isAlive(report.pid ?? -1)).toBe(false);
      await eventually(() => server.requestsFor('hang').at(-1)?.clientClosed === true);
      expect(TAG.processes()).toEqual([]);
    },
    SLOW,
  );

  it.each([
    ['SIGINT, Claude Code ends the tool itself', {}],
    ['no grace period: the tree is killed, the tool session too', { gracePeriodMs: 0 }],
  ])(
    'unsubscribing while Bash runs `sleep 30` in its own session (%s): nothing survives',
    async (name, extra) => {
      const started = performance.now();
      const { report, toolPid: sleepPid } = await stopWhileToolRuns(
        (onStopped) => runClaudeCode(options('sleep_tool', { allowedTools: ['Bash'], onStopped, ...extra })),
        TAG,
      );
      timings.add(`cancel during Bash \`sleep 30\` (${name.split(',')[0] ?? name}), stopped in ${report.durationMs.toFixed(0)} ms`, performance.now() - started);
      expect(sleepPid).toBeGreaterThan(0);
      expect(report).toMatchObject({ requested: true, confirmed: true });
      expect(isAlive(report.pid ?? -1)).toBe(false);
      expect(isAlive(sleepPid)).toBe(false);
      expect(TAG.processes()).toEqual([]);
    },
    SLOW,
  );
});

describe('real Claude Code: clean-up', () => {
  it('leaves no process of this suite behind', () => {
    expect(TAG.processes()).toEqual([]);
  });
});
