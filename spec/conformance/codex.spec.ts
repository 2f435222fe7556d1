import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  isRetryableFailure,
  runCodex,
  stopAllRuns,
  type CliMessage,
  type RunCodexOptions,
  type StopReport,
  type TerminalFailed,
} from '../../lib/index.js';
import { codexExecutable as codexLookup } from '../../lib/agents/codex/executable.js';
import { findExecutable } from '../../lib/agents/shared/setup/find-executable.js';
import { answerOf } from '../helpers/pi-transcripts.js';
import { isAlive } from '../helpers/processes.js';
import { createProcessTag } from '../helpers/tagged-processes.js';
import { executableOptions } from './cli-under-test.js';
import { CODEX_FAKE_API_KEY, CODEX_FAKE_API_KEY_VAR, CODEX_FAKE_PROVIDER, CODEX_MODEL, codexExecutable, createCodexEnv, type CodexEnv } from './codex-env.js';
import {
  BASH_TOOL_COMMAND,
  echoText,
  expectedErrorMessage,
  expectedText,
  expectedThinking,
  expectedToolCall,
  FAIL_TOOL_COMMAND,
  FAKE_INPUT_TOKENS,
  startFakeModelServer,
  type FakeModelServer,
} from './fake-model-server.js';
import { eventually, freePort, sessionIdOf, stopWhileToolRuns, tools, types } from './suite.js';
import { ScenarioTimings } from './timings.js';

/**
 * The real Codex CLI (the pinned devDependency `@openai/codex` 0.171.0, its native binary) against
 * the fake model server's Responses API on 127.0.0.1, through runCodex. Runs do not name an
 * executable (unless `AGENT_RX_CODEX_BIN` names one): runCodex finds the package's native binary itself. The scenario is picked by the
 * provider's base URL (`/s/<scenario>/v1`), given per run as a `config` override; the model stays
 * a slug Codex knows. Retries are limited to 1 request and 1 stream retry by the environment's
 * config.toml. Wall times are printed at the end.
 */

const TAG = createProcessTag('AGENT_RX_CONFORMANCE');
/** Codex starts in well under a second; generous for a loaded machine. */
const SLOW = 60_000;

let server: FakeModelServer;
let env: CodexEnv;
const timings = new ScenarioTimings();

beforeAll(async () => {
  server = await startFakeModelServer();
  env = createCodexEnv({ baseUrl: server.baseUrl });
});

afterAll(async () => {
  await stopAllRuns();
  await server.close();
  await env.cleanup();
  timings.print('Codex conformance');
});

function options(scenario: string, extra: Partial<RunCodexOptions> = {}): RunCodexOptions {
  const { config, env: extraEnv, ...rest } = extra;
  return {
    prompt: `Scenario ${scenario} please`,
    // None, unless AGENT_RX_CODEX_BIN names one: runCodex finds the pinned package's binary.
    ...executableOptions('codex'),
    cwd: env.cwd,
    env: { ...env.env, ...TAG.env, ...extraEnv },
    config: { [`model_providers.${CODEX_FAKE_PROVIDER}.base_url`]: server.responsesBaseUrl(scenario), ...config },
    ...rest,
  };
}

function run(name: string, opts: RunCodexOptions): Promise<CliMessage[]> {
  return timings.run(name, runCodex(opts));
}

const only = <T extends CliMessage['type']>(messages: readonly CliMessage[], type: T) =>
  messages.filter((message): message is Extract<CliMessage, { type: T }> => message.type === type);

function failureOf(messages: readonly CliMessage[]): TerminalFailed {
  const last = messages.at(-1);
  if (last?.type !== 'terminal.failed') throw new Error(`the run did not fail: ${JSON.stringify(last)}`);
  return last;
}

/** Codex sums the usage of the turn's model calls; the fake server sends 100 input tokens per call. */
const usage = (calls: number, output: number) => ({
  inputTokens: FAKE_INPUT_TOKENS * calls,
  outputTokens: output,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  totalTokens: FAKE_INPUT_TOKENS * calls + output,
});

describe('real Codex: finding it', () => {
  it('without `executable`, the native binary of the installed @openai/codex package, not its Node launcher', () => {
    const found = findExecutable(codexLookup);
    expect(found).toEqual({ command: codexExecutable(), args: [], pathDir: expect.stringMatching(/codex-path$/) as unknown, foundBy: 'package' });
    expect(found.command).not.toMatch(/\.js$/);
  });
});

describe('real Codex: answers', () => {
  it(
    'plain text: session, the whole message as one assistant message, completed with usage',
    async () => {
      server.reset();
      const messages = await run('text', options('text'));
      const sessionId = sessionIdOf(messages);
      expect(messages).toEqual([
        { type: 'session.started', pid: expect.any(Number), processGroup: expect.any(Number), sessionId },
        { type: 'assistant', text: expectedText('text') },
        { type: 'terminal.completed', stopReason: 'end_turn', usage: usage(1, 7), sessionId },
      ]);
      // One model call, to the scenario's URL, with the configured model slug and the fake key.
      const calls = server.requestsFor('text');
      expect(calls).toHaveLength(1);
      expect(calls[0]).toMatchObject({ url: '/s/text/v1/responses', api: 'openai-responses', requestModel: CODEX_MODEL, stream: true, apiKey: CODEX_FAKE_API_KEY });
      expect(calls[0]?.toolNames).toContain('exec_command');
      expect(calls[0]?.lastUserText).toBe('Scenario text please');
    },
    SLOW,
  );

  it(
    'reasoning then text: one whole thought, released when the turn ends',
    async () => {
      const messages = await run('thinking_text', options('thinking_text'));
      expect(types(messages)).toEqual(['session.started', 'assistant', 'assistant.thought', 'terminal.completed']);
      expect(answerOf(messages)).toBe(expectedText('thinking_text'));
      expect(only(messages, 'assistant.thought')).toEqual([{ type: 'assistant.thought', text: expectedThinking('thinking_text') }]);
    },
    SLOW,
  );

  it(
    'a prompt that starts with - reaches the model byte for byte (it goes on stdin)',
    async () => {
      const prompt = '--help -rf "quoted" @notes.txt ✓\nsecond line';
      const messages = await run('prompt starting with -', options('echo', { prompt }));
      expect(answerOf(messages)).toBe(echoText(prompt));
      expect(messages.at(-1)).toMatchObject({ type: 'terminal.completed' });
    },
    SLOW,
  );

  it(
    'a model slug Codex does not know: an agent.warning, and the run goes on',
    async () => {
      const messages = await run('unknown model (warning)', options('text', { model: 'agent-rx-unknown-model' }));
      expect(only(messages, 'agent.warning')).toEqual([{ type: 'agent.warning', message: expect.stringContaining('agent-rx-unknown-model') as unknown }]);
      expect(answerOf(messages)).toBe(expectedText('text'));
      expect(messages.at(-1)).toMatchObject({ type: 'terminal.completed' });
    },
    SLOW,
  );
});

describe('real Codex: tools', () => {
  it(
    'a shell command: tool.call once, tool.completed with its output, then the answer',
    async () => {
      server.reset();
      const messages = await run('bash_tool', options('bash_tool'));
      const [call, result] = tools(messages);
      expect(call).toEqual({ type: 'tool.call', toolCallId: expect.any(String) as unknown, name: 'command_execution', input: { command: `/bin/bash -lc '${BASH_TOOL_COMMAND}'` }, kind: 'execute', summary: BASH_TOOL_COMMAND });
      expect(result).toEqual({ type: 'tool.completed', toolCallId: (call as { toolCallId: string }).toolCallId, name: 'command_execution', output: 'hello\n' });
      expect(tools(messages)).toHaveLength(2);
      expect(types(messages)).toEqual(['session.started', 'assistant', 'tool.call', 'tool.completed', 'assistant', 'terminal.completed']);
      expect(answerOf(messages)).toBe(`${expectedToolCall('bash_tool', 'openai-responses', 'codex')?.textBefore ?? ''}${expectedText('bash_tool')}`);
      expect(messages.at(-1)).toMatchObject({ type: 'terminal.completed', usage: usage(2, 10) });
    },
    SLOW,
  );

  it(
    'a command that fails: tool.failed with its output, and the run goes on',
    async () => {
      const messages = await run('fail_tool', options('fail_tool'));
      expect(tools(messages)).toEqual([
        { type: 'tool.call', toolCallId: expect.any(String) as unknown, name: 'command_execution', input: { command: `/bin/bash -lc '${FAIL_TOOL_COMMAND}'` }, kind: 'execute', summary: FAIL_TOOL_COMMAND },
        { type: 'tool.failed', toolCallId: expect.any(String) as unknown, name: 'command_execution', output: expect.stringContaining('No such file or directory') as unknown },
      ]);
      expect(answerOf(messages)).toContain(expectedText('fail_tool'));
      expect(messages.at(-1)).toMatchObject({ type: 'terminal.completed' });
    },
    SLOW,
  );
});

describe('real Codex: failures', () => {
  it.each([
    ['http500', undefined, 4],
    ['http429', 429, 2],
    ['http401', 401, 2],
  ] as const)(
    '%s: agent.retry 1/1 from Codex, then agent-error with httpStatus %s (Codex exits 1)',
    async (model, httpStatus, requests) => {
      server.reset();
      const messages = await run(`${model} (1 retry)`, options(model));
      const sessionId = sessionIdOf(messages);
      expect(types(messages)).toEqual(['session.started', 'agent.retry', 'terminal.failed']);
      expect(messages[1]).toEqual({ type: 'agent.retry', attempt: 1, maxAttempts: 1, reason: expect.any(String) as unknown });
      const error = expectedErrorMessage(model, 'openai-responses', server.responsesBaseUrl(model));
      const failure = failureOf(messages);
      expect(failure).toMatchObject({ reason: 'agent-error', exitCode: 1, signal: null, agentError: error, message: `Codex reported an error: ${error}`, sessionId });
      expect(failure.httpStatus).toBe(httpStatus);
      expect(server.requestsFor(model)).toHaveLength(requests);
    },
    SLOW,
  );

  it(
    "a 429 and a 500 are retryable for retryAgentRun (Codex's text for a 5xx says \"high demand\"), a 401 is not",
    async () => {
      const failures = await Promise.all(['http429', 'http500', 'http401'].map(async (model) => failureOf(await run(`${model} (retryable?)`, options(model)))));
      expect(failures.map((failure) => isRetryableFailure(failure))).toEqual([true, true, false]);
    },
    SLOW,
  );

  it(
    "agentRetry: false (with the custom provider named): one request, no agent.retry",
    async () => {
      server.reset();
      const messages = await run('http500, agentRetry: false', options('http500', { agentRetry: false, provider: CODEX_FAKE_PROVIDER }));
      expect(types(messages)).toEqual(['session.started', 'terminal.failed']);
      expect(failureOf(messages)).toMatchObject({ reason: 'agent-error', exitCode: 1 });
      expect(server.requestsFor('http500')).toHaveLength(1);
    },
    SLOW,
  );

  it(
    'the API key variable is not set: agent-error naming it, no request',
    async () => {
      server.reset();
      const messages = await run('missing API key', options('text', { env: { [CODEX_FAKE_API_KEY_VAR]: undefined } }));
      expect(failureOf(messages)).toMatchObject({ reason: 'agent-error', exitCode: 1, agentError: expect.stringContaining(CODEX_FAKE_API_KEY_VAR) as unknown });
      expect(server.requestsFor('text')).toHaveLength(0);
    },
    SLOW,
  );

  it(
    'a configuration error: nothing on stdout, exit 1, the message is the error stderr gives (not its routine lines)',
    async () => {
      const messages = await run('config error', options('text', { config: { [`model_providers.${CODEX_FAKE_PROVIDER}.wire_api`]: 'chat' } }));
      expect(types(messages)).toEqual(['terminal.failed']);
      const failure = failureOf(messages);
      expect(failure).toMatchObject({ reason: 'exit', exitCode: 1 });
      expect(failure.message).toMatch(/^Codex exited with code 1: Error loading config\.toml: .*wire_api = "chat"/);
      expect(failure.message).not.toContain('from stdin');
    },
    SLOW,
  );

  it(
    'an endpoint that cannot be reached: Codex waits for the network without end; timeoutMs ends the run',
    async () => {
      const closedPort = await freePort();
      const messages = await run(
        'connection refused, timeoutMs 8 s',
        options('text', { config: { [`model_providers.${CODEX_FAKE_PROVIDER}.base_url`]: `http://127.0.0.1:${closedPort}/v1` }, timeoutMs: 8000 }),
      );
      const retries = only(messages, 'agent.retry');
      expect(retries.length).toBeGreaterThan(0);
      expect(retries[0]).toEqual({ type: 'agent.retry', reason: expect.stringMatching(/^waiting for network: /) as unknown });
      expect(failureOf(messages)).toMatchObject({ reason: 'timeout', timeout: { limit: 'run', ms: 8000 } });
      expect(TAG.processes()).toEqual([]);
    },
    SLOW,
  );

  it(
    'a stream that stalls: Codex waits minutes by itself; idleTimeoutMs ends the run',
    async () => {
      server.reset();
      const messages = await run('hang, idleTimeoutMs 3 s', options('hang', { idleTimeoutMs: 3000 }));
      expect(types(messages)).toEqual(['session.started', 'terminal.failed']);
      expect(failureOf(messages)).toMatchObject({ reason: 'timeout', timeout: { limit: 'idle', ms: 3000 } });
      await eventually(() => server.requestsFor('hang').at(-1)?.clientClosed === true);
      expect(TAG.processes()).toEqual([]);
    },
    SLOW,
  );
});

describe('real Codex: threads', () => {
  it(
    'resume a thread: session.resumed with the same id, the history is sent again; then `last` finds it',
    async () => {
      server.reset();
      const first = await run('session: new', options('text'));
      const id = sessionIdOf(first);
      const resumed = await run('session: { resume }', options('echo', { session: { resume: id }, prompt: 'second' }));
      expect(resumed[0]).toEqual({ type: 'session.resumed', pid: expect.any(Number), processGroup: expect.any(Number), sessionId: id });
      expect(answerOf(resumed)).toBe(echoText('second'));
      // The usage is the thread's total: the first turn's call and this one's.
      expect(resumed.at(-1)).toMatchObject({ type: 'terminal.completed', sessionId: id, usage: { inputTokens: 2 * FAKE_INPUT_TOKENS } });
      expect(server.requestsFor('echo')[0]?.messageCount).toBeGreaterThan(server.requestsFor('text')[0]?.messageCount ?? 0);
      const last = await run("session: 'last'", options('echo', { session: 'last', prompt: 'third' }));
      expect(last[0]).toEqual({ type: 'session.resumed', pid: expect.any(Number), processGroup: expect.any(Number), sessionId: id });
      expect(answerOf(last)).toBe(echoText('third'));
      // Kept under the run's CODEX_HOME, not the real one.
      expect(existsSync(join(env.codexHome, 'sessions'))).toBe(true);
    },
    SLOW,
  );

  it(
    'ephemeral: the thread is not recorded, so resuming it fails in-band',
    async () => {
      const first = await run('ephemeral', options('text', { ephemeral: true }));
      const id = sessionIdOf(first);
      expect(first.at(-1)).toMatchObject({ type: 'terminal.completed' });
      const recorded = readdirSync(join(env.codexHome, 'sessions'), { recursive: true }).map(String);
      expect(recorded.some((file) => file.includes(id))).toBe(false);
      const resumed = await run('resume an ephemeral thread', options('echo', { session: { resume: id } }));
      expect(resumed.at(-1)).toMatchObject({ type: 'terminal.failed' });
    },
    SLOW,
  );
});

describe('real Codex: cancellation', () => {
  it(
    'unsubscribing while the model streams: Codex is gone after SIGTERM alone, the request is closed, nothing is emitted after',
    async () => {
      server.reset();
      const started = performance.now();
      const seen: CliMessage[] = [];
      let unsubscribedAt = -1;
      const report = await new Promise<StopReport>((resolve) => {
        const subscription = runCodex(options('hang', { onStopped: resolve })).subscribe((message) => {
          seen.push(message);
          if (message.type !== 'session.started') return;
          // Codex prints nothing while a stream runs: wait for the request to be under way, and for
          // its start-up shell snapshot (a login shell and what it runs) to be over: Codex does not
          // wait for that on SIGTERM, the tree kill ends it, and this case is about Codex alone.
          // Unsubscribes at the deadline too: the case then fails on what it finds, not by its timeout.
          void eventually(() => server.requestsFor('hang').length > 0 && TAG.processes().length === 1, 15_000)
            .catch(() => undefined)
            .then(() => {
              unsubscribedAt = seen.length;
              subscription.unsubscribe();
            });
        });
      });
      timings.add(`cancel mid-stream (hang), stopped in ${report.durationMs.toFixed(0)} ms`, performance.now() - started);
      expect(seen).toHaveLength(unsubscribedAt);
      expect(report).toMatchObject({ requested: true, cause: 'unsubscribe', exitedGracefully: true, confirmed: true, killed: [] });
      expect(isAlive(report.pid ?? -1)).toBe(false);
      await eventually(() => server.requestsFor('hang').at(-1)?.clientClosed === true);
      expect(TAG.processes()).toEqual([]);
    },
    SLOW,
  );

  it.each([
    ['SIGTERM, Codex ends the command itself', {}, true],
    ['no grace period: the tree is killed, the command in its own session too', { gracePeriodMs: 0 }, false],
  ] as const)(
    'unsubscribing while the command `sleep 30` runs (%s): nothing survives',
    async (name, extra, graceful) => {
      const started = performance.now();
      const { report, toolPid: sleepPid } = await stopWhileToolRuns((onStopped) => runCodex(options('sleep_tool', { onStopped, ...extra })), TAG);
      timings.add(`cancel during \`sleep 30\` (${name.split(',')[0] ?? name}), stopped in ${report.durationMs.toFixed(0)} ms`, performance.now() - started);
      expect(sleepPid).toBeGreaterThan(0);
      expect(report).toMatchObject({ requested: true, confirmed: true });
      // Without a grace period Codex may still end by itself in the moment between its SIGTERM and the kill.
      if (graceful) expect(report.exitedGracefully).toBe(true);
      expect(isAlive(report.pid ?? -1)).toBe(false);
      expect(isAlive(sleepPid)).toBe(false);
      expect(TAG.processes()).toEqual([]);
    },
    SLOW,
  );
});

describe('real Codex: clean-up', () => {
  it('leaves no process of this suite behind', () => {
    expect(TAG.processes()).toEqual([]);
  });
});
