import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runPi, stopAllRuns, type CliMessage, type RunPiOptions, type StopReport } from '../../lib/index.js';
import { isAlive } from '../helpers/processes.js';
import {
  BASH_TOOL_COMMAND,
  BASH_TOOL_OUTPUT,
  expectedErrorMessage,
  expectedText,
  expectedThinking,
  expectedToolCall,
  echoText,
  FAKE_INPUT_TOKENS,
  longText,
  NOTES_TXT,
  startFakeModelServer,
  type FakeModelServer,
  type WireApi,
} from './fake-model-server.js';
import { ANTHROPIC_PROVIDER, createPiEnv, OPENAI_PROVIDER, piCommand, type PiEnv } from './pi-env.js';
import { freePort, overlays, sessionIdOf, stopWhileToolRuns } from './suite.js';
import { ScenarioTimings } from './timings.js';
import { answerOf } from '../helpers/pi-transcripts.js';
import { createProcessTag } from '../helpers/tagged-processes.js';

/**
 * The real pi CLI (the pinned devDependency) against a fake model server on 127.0.0.1, through
 * runPi. Every scenario asserts the normalized stream; wall times are printed at the end.
 */

const PI = piCommand();
const TAG = createProcessTag('AGENT_RX_CONFORMANCE');

let server: FakeModelServer;
let env: PiEnv;
const timings = new ScenarioTimings();

beforeAll(async () => {
  server = await startFakeModelServer();
  env = await createPiEnv({ baseUrl: server.baseUrl, extraModelIds: ['long_text_2000'] });
});

afterAll(async () => {
  await stopAllRuns();
  await server.close();
  await env.cleanup();
  timings.print('pi conformance');
});

const provider = (api: WireApi): string => (api === 'openai-completions' ? OPENAI_PROVIDER : ANTHROPIC_PROVIDER);

function options(model: string, api: WireApi, extra: Partial<RunPiOptions> = {}, piEnv: PiEnv = env): RunPiOptions {
  return {
    prompt: `Scenario ${model} please`,
    executable: PI.command,
    executableArgs: PI.args,
    provider: provider(api),
    model,
    session: 'none',
    cwd: piEnv.cwd,
    env: { ...piEnv.env, [TAG.name]: TAG.value },
    ...extra,
  };
}

function run(name: string, opts: RunPiOptions): Promise<CliMessage[]> {
  return timings.run(name, runPi(opts));
}

const types = (messages: readonly CliMessage[]): string[] => [...new Set(messages.map((message) => message.type))];
const without = (messages: readonly CliMessage[], type: string): CliMessage[] => messages.filter((message) => message.type !== type);

const usage = (output: number) => ({
  inputTokens: FAKE_INPUT_TOKENS,
  outputTokens: output,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  totalTokens: FAKE_INPUT_TOKENS + output,
  cost: 0,
});

describe.each<WireApi>(['openai-completions', 'anthropic-messages'])('real pi over %s', (api) => {
  it('plain text: session, the answer as deltas, completed with usage', async () => {
    const messages = await run(`text (${api})`, options('text', api));
    const sessionId = sessionIdOf(messages);
    expect(messages[0]).toEqual({ type: 'session.started', pid: expect.any(Number), processGroup: expect.any(Number), sessionId });
    expect(types(messages)).toEqual(['session.started', 'assistant', 'terminal.completed']);
    expect(messages.filter((message) => message.type === 'assistant').length).toBeGreaterThan(1);
    expect(answerOf(messages)).toBe(expectedText('text'));
    expect(messages.at(-1)).toEqual({ type: 'terminal.completed', stopReason: 'end_turn', agentStopReason: 'stop', usage: usage(7), sessionId });
  });

  it('thinking then text: one whole thought after the answer', async () => {
    const messages = await run(`thinking_text (${api})`, options('thinking_text', api));
    expect(answerOf(messages)).toBe(expectedText('thinking_text'));
    expect(without(without(messages, 'assistant'), 'session.started').map((message) => message.type)).toEqual(['assistant.thought', 'terminal.completed']);
    expect(messages.find((message) => message.type === 'assistant.thought')).toEqual({ type: 'assistant.thought', text: expectedThinking('thinking_text') });
  });

  it('a bash tool call, then text', async () => {
    const call = expectedToolCall('bash_tool', api);
    const messages = await run(`bash_tool (${api})`, options('bash_tool', api));
    const tools = messages.filter((message) => message.type.startsWith('tool.'));
    expect(tools).toEqual([
      { type: 'tool.call', toolCallId: call?.id, name: 'bash', input: call?.arguments, kind: 'execute', summary: BASH_TOOL_COMMAND },
      { type: 'tool.update', toolCallId: call?.id, name: 'bash', output: BASH_TOOL_OUTPUT },
      { type: 'tool.completed', toolCallId: call?.id, name: 'bash', output: BASH_TOOL_OUTPUT },
    ]);
    expect(answerOf(messages)).toBe(`${call?.textBefore ?? ''}${expectedText('bash_tool')}`);
    expect(messages.at(-1)).toMatchObject({ type: 'terminal.completed', stopReason: 'end_turn', agentStopReason: 'stop' });
  });

  it('the read tool', async () => {
    const call = expectedToolCall('read_tool', api);
    const messages = await run(`read_tool (${api})`, options('read_tool', api));
    expect(messages.filter((message) => message.type.startsWith('tool.'))).toEqual([
      { type: 'tool.call', toolCallId: call?.id, name: 'read', input: call?.arguments, kind: 'read', summary: 'notes.txt' },
      { type: 'tool.completed', toolCallId: call?.id, name: 'read', output: NOTES_TXT },
    ]);
    expect(answerOf(messages)).toBe(`${call?.textBefore ?? ''}${expectedText('read_tool')}`);
  });

  it.each(['http500', 'http429', 'http401'])('%s with retries off: one request, an agent-error with pi\'s message', async (model) => {
    server.reset();
    const messages = await run(`${model} (${api})`, options(model, api));
    const error = expectedErrorMessage(model, api);
    expect(messages.map((message) => message.type)).toEqual(['session.started', 'terminal.failed']);
    expect(messages.at(-1)).toMatchObject({ reason: 'agent-error', exitCode: 0, agentError: error, message: `pi reported an error: ${error}` });
    expect(server.requestsFor(model)).toHaveLength(1);
  });
});

describe('real pi: retries', () => {
  it('HTTP 500 with pi\'s retries on: agent.retry messages, then the failure', async () => {
    const retrying = await createPiEnv({ baseUrl: server.baseUrl, retry: { agentRetries: 2, baseDelayMs: 100, sdkRetries: 0 } });
    try {
      server.reset();
      const messages = await run('http500, pi retries on (2 × 100 ms)', options('http500', 'openai-completions', {}, retrying));
      const error = expectedErrorMessage('http500', 'openai-completions');
      expect(messages.filter((message) => message.type === 'agent.retry')).toEqual([
        { type: 'agent.retry', attempt: 1, maxAttempts: 2, delayMs: 100, reason: error },
        { type: 'agent.retry', attempt: 2, maxAttempts: 2, delayMs: 200, reason: error },
      ]);
      expect(messages.at(-1)).toMatchObject({ type: 'terminal.failed', reason: 'agent-error', agentError: error });
      expect(server.requestsFor('http500')).toHaveLength(3);
    } finally {
      await retrying.cleanup();
    }
  });

  it('agentRetry: false switches pi\'s default retries off for the run, leaving its configuration untouched', async () => {
    const defaults = await createPiEnv({ baseUrl: server.baseUrl, retry: 'pi-defaults' });
    try {
      const before = readdirSync(defaults.agentDir).sort();
      const overlaysBefore = overlays('agent-rx-pi-');
      server.reset();
      let report: StopReport | undefined;
      const messages = await run(
        'http500, pi defaults, agentRetry: false',
        options('http500', 'openai-completions', { agentRetry: false, onStopped: (value) => (report = value) }, defaults),
      );
      expect(messages.map((message) => message.type)).toEqual(['session.started', 'terminal.failed']);
      expect(server.requestsFor('http500')).toHaveLength(1);
      await stopAllRuns();
      expect(report?.confirmed).toBe(true);
      expect(readdirSync(defaults.agentDir).sort()).toEqual(before);
      expect(existsSync(join(defaults.agentDir, 'settings.json'))).toBe(false);
      expect(overlays('agent-rx-pi-')).toEqual(overlaysBefore);
    } finally {
      await defaults.cleanup();
    }
  });

  it('flaky500 recovers through pi\'s own retry: agent.retry, then the answer', async () => {
    const retrying = await createPiEnv({ baseUrl: server.baseUrl, retry: { agentRetries: 3, baseDelayMs: 100, sdkRetries: 0 } });
    try {
      server.reset();
      const messages = await run('flaky500, pi retries on', options('flaky500', 'openai-completions', {}, retrying));
      expect(messages.filter((message) => message.type === 'agent.retry')).toHaveLength(1);
      expect(answerOf(messages)).toBe(expectedText('flaky500'));
      expect(messages.at(-1)).toMatchObject({ type: 'terminal.completed', stopReason: 'end_turn', agentStopReason: 'stop' });
    } finally {
      await retrying.cleanup();
    }
  });
});

describe('real pi: other failures', () => {
  it('connection refused: an agent-error', async () => {
    const closedPort = await freePort();
    const refused = await createPiEnv({ baseUrl: `http://127.0.0.1:${closedPort}` });
    try {
      const messages = await run('connection refused', options('text', 'openai-completions', {}, refused));
      expect(messages.at(-1)).toMatchObject({ type: 'terminal.failed', reason: 'agent-error', agentError: 'Connection error.' });
    } finally {
      await refused.cleanup();
    }
  });

  it('no API key: pi exits 1, and the failure says so first; its /login hint and docs stay in stderr', async () => {
    // A built-in provider with no key anywhere: pi stops before any request (and its base URL is a
    // closed local port all the same). The unknown model id makes pi warn first.
    const closedPort = await freePort();
    const root = await mkdtemp(join(tmpdir(), 'agent-rx-pi-nokey-'));
    try {
      await mkdir(join(root, 'agent'));
      await writeFile(join(root, 'agent', 'models.json'), JSON.stringify({ providers: { anthropic: { baseUrl: `http://127.0.0.1:${closedPort}` } } }));
      const messages = await run('no API key', {
        prompt: 'hello',
        executable: PI.command,
        executableArgs: PI.args,
        provider: 'anthropic',
        model: 'agent-rx-no-such-model',
        session: 'none',
        cwd: root,
        env: { ...env.env, PI_CODING_AGENT_DIR: join(root, 'agent'), ANTHROPIC_API_KEY: undefined, ANTHROPIC_OAUTH_TOKEN: undefined, [TAG.name]: TAG.value },
      });
      const failed = messages.at(-1);
      expect(failed).toMatchObject({ type: 'terminal.failed', reason: 'exit', exitCode: 1 });
      expect(failed?.type === 'terminal.failed' ? failed.message : '').toMatch(/^pi exited with code 1: No API key found for anthropic\.$/);
      expect(failed).toMatchObject({ stderr: expect.stringMatching(/^Warning: Model "agent-rx-no-such-model" not found[^]*\nUse \/login[^]*docs\/models\.md\n$/) });
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('an unknown session id: pi exits 1, the failure carries its stderr', async () => {
    const messages = await run('unknown session id', options('text', 'openai-completions', { session: { id: 'deadbeef' } }));
    expect(messages).toEqual([
      expect.objectContaining({ type: 'terminal.failed', reason: 'exit', exitCode: 1, message: expect.stringContaining("No session found matching 'deadbeef'") }),
    ]);
  });
});

describe('real pi: sessions, prompts, long answers', () => {
  it('continue and resume a session: session.resumed with the same id', async () => {
    const first = await run('session: new', options('text', 'openai-completions', { session: 'new' }));
    const id = sessionIdOf(first);
    const continued = await run('session: continue', options('echo', 'openai-completions', { session: 'continue', prompt: 'second' }));
    expect(continued[0]).toEqual({ type: 'session.resumed', pid: expect.any(Number), processGroup: expect.any(Number), sessionId: id });
    expect(continued.at(-1)).toMatchObject({ type: 'terminal.completed', sessionId: id });
    const byId = await run('session: { id: prefix }', options('text', 'openai-completions', { session: { id: id.slice(0, 13) } }));
    expect(byId[0]).toEqual({ type: 'session.resumed', pid: expect.any(Number), processGroup: expect.any(Number), sessionId: id });
    const last = server.requestsFor('text').at(-1);
    expect(last?.messageCount).toBeGreaterThan(3);
  });

  it('a prompt that starts with - or @ reaches the model unchanged', async () => {
    const prompt = '-rf @notes.txt --help "quoted" ✓';
    const messages = await run('prompt starting with -', options('echo', 'openai-completions', { prompt }));
    expect(answerOf(messages)).toBe(echoText(prompt));
  });

  it('a long answer (2,000 chunks, ~22 MB of pi output): concatenated deltas equal the final text', async () => {
    const messages = await run('long_text_2000', options('long_text_2000', 'openai-completions'));
    expect(messages.filter((message) => message.type === 'assistant')).toHaveLength(2000);
    expect(answerOf(messages)).toBe(longText(2000));
    expect(messages.at(-1)).toMatchObject({ type: 'terminal.completed' });
  });
});

describe('real pi: cancellation', () => {
  it('unsubscribing mid-stream: pi is gone soon after, and nothing is emitted after', async () => {
    const started = performance.now();
    const seen: CliMessage[] = [];
    let unsubscribedAt = -1;
    const report = await new Promise<StopReport>((resolve) => {
      const subscription = runPi(options('hang', 'openai-completions', { onStopped: resolve })).subscribe((message) => {
        seen.push(message);
        if (seen.filter((item) => item.type === 'assistant').length === 3) {
          unsubscribedAt = seen.length;
          subscription.unsubscribe();
        }
      });
    });
    timings.add('cancel mid-stream (hang)', performance.now() - started);
    expect(seen).toHaveLength(unsubscribedAt);
    expect(report).toMatchObject({ requested: true, exitedGracefully: true, confirmed: true });
    expect(isAlive(report.pid ?? -1)).toBe(false);
    expect(server.requestsFor('hang').at(-1)?.clientClosed).toBe(true);
  });

  it('unsubscribing while bash runs a long command in its own session: neither pi nor the command survives', async () => {
    const started = performance.now();
    const { report, toolPid: sleepPid } = await stopWhileToolRuns((onStopped) => runPi(options('sleep_tool', 'openai-completions', { onStopped })), TAG);
    timings.add('cancel during bash `sleep 30`', performance.now() - started);
    expect(sleepPid).toBeGreaterThan(0);
    expect(report.confirmed).toBe(true);
    expect(isAlive(report.pid ?? -1)).toBe(false);
    expect(isAlive(sleepPid)).toBe(false);
    expect(TAG.processes()).toEqual([]);
  });
});
