import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { tap } from 'rxjs';
import { runGemini, stopAllRuns, type CliMessage, type RunGeminiOptions, type StopReport, type TerminalFailed } from '../../lib/index.js';
import { answerOf } from '../helpers/pi-transcripts.js';
import { isAlive } from '../helpers/processes.js';
import { createProcessTag } from '../helpers/tagged-processes.js';
import {
  FAIL_TOOL_COMMAND,
  BASH_TOOL_COMMAND,
  echoText,
  expectedErrorMessage,
  expectedText,
  expectedToolCall,
  FAIL_TOOL_EXIT_CODE,
  FAKE_INPUT_TOKENS,
  startFakeModelServer,
  type FakeModelServer,
} from './fake-model-server.js';
import { createGeminiEnv, GEMINI_FAKE_API_KEY, GEMINI_MODEL, geminiCommand, type GeminiEnv } from './gemini-env.js';
import { eventually, freePort, overlays, sessionIdOf, shape, stopWhileToolRuns, tools, types } from './suite.js';
import { ScenarioTimings } from './timings.js';

/**
 * The real Gemini CLI (the pinned devDependency `@google/gemini-cli` 0.61.0, its JavaScript
 * bundle run by this Node) against the fake model server's Gemini API on 127.0.0.1, through
 * runGemini. The scenario is picked by `GOOGLE_GEMINI_BASE_URL` (`/s/<scenario>`, a path the CLI
 * keeps); the model stays one the CLI knows. The environment's settings allow 2 attempts per model
 * request, so a failing request is retried once, after the CLI's back-off of 3.5-6.5 s: the
 * failures that wait for it run side by side. Wall times are printed at the end.
 */

const GEMINI = geminiCommand();
const TAG = createProcessTag('AGENT_RX_CONFORMANCE');
/** Gemini CLI starts in 1-2 s; a retry waits up to 6.5 s; generous for a loaded machine. */
const SLOW = 60_000;

let server: FakeModelServer;
let env: GeminiEnv;
const timings = new ScenarioTimings();

beforeAll(async () => {
  server = await startFakeModelServer();
  env = createGeminiEnv({ baseUrl: server.baseUrl });
});

afterAll(async () => {
  await stopAllRuns();
  await server.close();
  await env.cleanup();
  timings.print('Gemini CLI conformance');
});

function options(scenario: string, extra: Partial<RunGeminiOptions> = {}, where: GeminiEnv = env): RunGeminiOptions {
  const { env: extraEnv, ...rest } = extra;
  return {
    prompt: `Scenario ${scenario} please`,
    executable: GEMINI.command,
    executableArgs: GEMINI.args,
    cwd: where.cwd,
    env: { ...where.env, GOOGLE_GEMINI_BASE_URL: where.baseUrlFor(scenario), ...TAG.env, ...extraEnv },
    ...rest,
  };
}

function run(name: string, opts: RunGeminiOptions): Promise<CliMessage[]> {
  return timings.run(name, runGemini(opts));
}

/** A run started now and awaited later (by the test that asserts it); a failure waits for that test. */
function started(name: string, opts: RunGeminiOptions): Promise<CliMessage[]> {
  const messages = run(name, opts);
  messages.catch(() => undefined);
  return messages;
}

const only = <T extends CliMessage['type']>(messages: readonly CliMessage[], type: T) =>
  messages.filter((message): message is Extract<CliMessage, { type: T }> => message.type === type);

function failureOf(messages: readonly CliMessage[]): TerminalFailed {
  const last = messages.at(-1);
  if (last?.type !== 'terminal.failed') throw new Error(`the run did not fail: ${JSON.stringify(last)}`);
  return last;
}

/** Gemini CLI sums the usage of the run's model calls; the fake server sends 100 input tokens per call. */
const usage = (calls: number, output: number, thoughts = 0) => ({
  inputTokens: FAKE_INPUT_TOKENS * calls,
  outputTokens: output,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  totalTokens: FAKE_INPUT_TOKENS * calls + output + thoughts,
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const TOOL_ID = /^run_shell_command__run_shell_command_\d+_\d+$/;

describe('real Gemini CLI: answers', () => {
  it(
    'plain text: session, the answer as deltas, completed with usage',
    async () => {
      server.reset();
      const messages = await run('text', options('text'));
      const sessionId = sessionIdOf(messages);
      expect(sessionId).toMatch(UUID);
      expect(messages[0]).toEqual({ type: 'session.started', pid: expect.any(Number), processGroup: expect.any(Number), sessionId, model: GEMINI_MODEL });
      expect(shape(messages)).toEqual(['session.started', 'assistant', 'terminal.completed']);
      expect(only(messages, 'assistant').length).toBeGreaterThan(1);
      expect(answerOf(messages)).toBe(expectedText('text'));
      expect(messages.at(-1)).toEqual({ type: 'terminal.completed', stopReason: 'end_turn', usage: usage(1, 7), sessionId });
      // One model call, to the scenario's URL, with the configured model and the fake key; without
      // --approval-mode yolo a headless run is not offered the shell tool.
      const calls = server.requestsFor('text');
      expect(calls).toHaveLength(1);
      expect(calls[0]).toMatchObject({
        url: `/s/text/v1beta/models/${GEMINI_MODEL}:streamGenerateContent`,
        api: 'gemini',
        requestModel: GEMINI_MODEL,
        stream: true,
        apiKey: GEMINI_FAKE_API_KEY,
        lastUserText: 'Scenario text please',
      });
      expect(calls[0]?.toolNames).toContain('google_web_search');
      expect(calls[0]?.toolNames).not.toContain('run_shell_command');
    },
    SLOW,
  );

  it(
    'thinking then text: no assistant.thought (Gemini CLI prints none), the total counts the thinking',
    async () => {
      const messages = await run('thinking_text', options('thinking_text'));
      expect(shape(messages)).toEqual(['session.started', 'assistant', 'terminal.completed']);
      expect(answerOf(messages)).toBe(expectedText('thinking_text'));
      // 3 answer pieces, 5 thinking pieces.
      expect(messages.at(-1)).toMatchObject({ type: 'terminal.completed', stopReason: 'end_turn', usage: usage(1, 3, 5) });
    },
    SLOW,
  );

  it(
    'a multi-line prompt that starts with - reaches the model byte for byte (it goes on stdin)',
    async () => {
      server.reset();
      const prompt = '--help -rf "quoted" café ✓\nsecond line\n  -x indented';
      const messages = await run('prompt starting with -', options('echo', { prompt }));
      expect(server.requestsFor('echo')[0]?.lastUserText).toBe(prompt);
      expect(answerOf(messages)).toBe(echoText(prompt));
      expect(messages.at(-1)).toMatchObject({ type: 'terminal.completed' });
    },
    SLOW,
  );
});

describe('real Gemini CLI: tools', () => {
  it(
    "approvalMode 'yolo': run_shell_command runs, tool.completed with its output, then the answer",
    async () => {
      server.reset();
      const call = expectedToolCall('bash_tool', 'gemini', 'gemini');
      const messages = await run('bash_tool (yolo)', options('bash_tool', { approvalMode: 'yolo' }));
      const [first] = tools(messages);
      const toolCallId = first?.type === 'tool.call' ? first.toolCallId : '';
      expect(toolCallId).toMatch(TOOL_ID);
      expect(tools(messages)).toEqual([
        { type: 'tool.call', toolCallId, name: 'run_shell_command', input: call?.arguments, kind: 'execute', summary: BASH_TOOL_COMMAND },
        { type: 'tool.completed', toolCallId, name: 'run_shell_command', output: 'hello' },
      ]);
      expect(call?.arguments).toEqual({ command: 'echo hello', description: 'Run echo hello' });
      expect(shape(messages)).toEqual(['session.started', 'assistant', 'tool.call', 'tool.completed', 'assistant', 'terminal.completed']);
      expect(answerOf(messages)).toBe(`${call?.textBefore ?? ''}${expectedText('bash_tool')}`);
      expect(messages.at(-1)).toMatchObject({ type: 'terminal.completed', stopReason: 'end_turn', usage: usage(2, 8) });
      const calls = server.requestsFor('bash_tool');
      expect(calls).toHaveLength(2);
      expect(calls[0]?.toolNames).toContain('run_shell_command');
      expect(calls[1]?.lastToolResultText).toMatch(/^<untrusted_context>\nOutput: hello\n/);
    },
    SLOW,
  );

  it(
    'without yolo: the model calls run_shell_command anyway, tool.failed with "not found", and the run goes on',
    async () => {
      server.reset();
      const call = expectedToolCall('bash_tool', 'gemini', 'gemini');
      const messages = await run('bash_tool (no yolo: not found)', options('bash_tool'));
      const [first] = tools(messages);
      const toolCallId = first?.type === 'tool.call' ? first.toolCallId : '';
      expect(tools(messages)).toEqual([
        { type: 'tool.call', toolCallId, name: 'run_shell_command', input: call?.arguments, kind: 'execute', summary: BASH_TOOL_COMMAND },
        { type: 'tool.failed', toolCallId, name: 'run_shell_command', output: expect.stringMatching(/^Tool "run_shell_command" not found\. Did you mean one of: /) as unknown },
      ]);
      expect(shape(messages)).toEqual(['session.started', 'assistant', 'tool.call', 'tool.failed', 'assistant', 'terminal.completed']);
      // The model got the same text back, and answered with it.
      const refusal = tools(messages)[1]?.type === 'tool.failed' ? (tools(messages)[1] as { output: string }).output : '';
      expect(server.requestsFor('bash_tool')[1]?.lastToolResultText).toBe(refusal);
      expect(answerOf(messages)).toBe(`${call?.textBefore ?? ''}The command printed ${JSON.stringify(refusal)}. Done.`);
      expect(messages.at(-1)).toMatchObject({ type: 'terminal.completed', stopReason: 'end_turn' });
    },
    SLOW,
  );

  it(
    'a command that fails (yolo): tool.completed, since Gemini CLI reports it a success; the exit code reaches only the model',
    async () => {
      server.reset();
      const call = expectedToolCall('fail_tool', 'gemini', 'gemini');
      const messages = await run('fail_tool (yolo)', options('fail_tool', { approvalMode: 'yolo' }));
      const [first] = tools(messages);
      const toolCallId = first?.type === 'tool.call' ? first.toolCallId : '';
      expect(tools(messages)).toEqual([
        { type: 'tool.call', toolCallId, name: 'run_shell_command', input: call?.arguments, kind: 'execute', summary: FAIL_TOOL_COMMAND },
        { type: 'tool.completed', toolCallId, name: 'run_shell_command', output: "ls: cannot access '/nonexistent-dir': No such file or directory" },
      ]);
      expect(server.requestsFor('fail_tool')[1]?.lastToolResultText).toContain(`Exit Code: ${FAIL_TOOL_EXIT_CODE}\n`);
      expect(answerOf(messages)).toBe(`${call?.textBefore ?? ''}${expectedText('fail_tool')}`);
      expect(messages.at(-1)).toMatchObject({ type: 'terminal.completed', stopReason: 'end_turn' });
    },
    SLOW,
  );
});

describe('real Gemini CLI: failures (run side by side; 2 attempts per request)', () => {
  const runs = new Map<string, Promise<CliMessage[]>>();
  let reportTimeout: (report: StopReport) => void = () => undefined;
  const timeoutReport = new Promise<StopReport>((resolve) => {
    reportTimeout = resolve;
  });
  let keyless: GeminiEnv;

  beforeAll(async () => {
    server.reset();
    const closedPort = await freePort();
    // Its own HOME: a run that exits at start-up may leave Gemini CLI's projects.json lock behind,
    // which makes the next run in that HOME wait until the lock is stale (about 14 s).
    keyless = createGeminiEnv({ baseUrl: server.baseUrl });
    runs.set('http500', started('http500 (1 retry)', options('http500')));
    runs.set('http429', started('http429 (1 retry)', options('http429')));
    runs.set('http401', started('http401 (no retry)', options('http401')));
    runs.set('refused', started('connection refused (1 retry)', options('text', { env: { GOOGLE_GEMINI_BASE_URL: `http://127.0.0.1:${closedPort}` } })));
    runs.set('missing key', started('missing GEMINI_API_KEY', options('text', { env: { GEMINI_API_KEY: undefined } }, keyless)));
    runs.set('untrusted', started('untrusted folder (skipTrust: false)', options('text', { skipTrust: false })));
    runs.set('timeout', started('hang, timeoutMs 10 s', options('hang', { timeoutMs: 10_000, gracePeriodMs: 10_000, onStopped: (report) => { reportTimeout(report); } })));
  });

  afterAll(async () => {
    await Promise.allSettled(runs.values());
    await keyless.cleanup();
  });

  const messagesOf = (name: string): Promise<CliMessage[]> => runs.get(name) ?? Promise.reject(new Error(`no run ${name}`));

  it.each([
    // A 429's text names no code: its status comes from the exit code (173 + 256).
    ['http500', 500, 244, '500 fake internal server error'],
    ['http429', 429, 173, '429 fake rate limit exceeded'],
  ] as const)(
    '%s: one agent.retry (from stderr), then agent-error with httpStatus %s; the exit code is the status modulo 256',
    async (scenario, httpStatus, exitCode, reason) => {
      const messages = await messagesOf(scenario);
      const sessionId = sessionIdOf(messages);
      expect(types(messages)).toEqual(['session.started', 'agent.retry', 'terminal.failed']);
      expect(messages[1]).toEqual({ type: 'agent.retry', attempt: 1, reason });
      const error = expectedErrorMessage(scenario, 'gemini');
      expect(failureOf(messages)).toMatchObject({
        reason: 'agent-error',
        exitCode,
        signal: null,
        agentError: error,
        message: `Gemini CLI reported an error: ${error}`,
        httpStatus,
        sessionId,
      });
      expect(server.requestsFor(scenario)).toHaveLength(2);
    },
    SLOW,
  );

  it(
    'http401: no retry, agent-error with httpStatus 401, exit 145',
    async () => {
      const messages = await messagesOf('http401');
      expect(types(messages)).toEqual(['session.started', 'terminal.failed']);
      expect(failureOf(messages)).toMatchObject({ reason: 'agent-error', exitCode: 145, httpStatus: 401, agentError: expectedErrorMessage('http401', 'gemini') });
      expect(server.requestsFor('http401')).toHaveLength(1);
    },
    SLOW,
  );

  it(
    'connection refused: an agent.retry saying "fetch failed", then agent-error without an HTTP status, exit 1',
    async () => {
      const messages = await messagesOf('refused');
      expect(types(messages)).toEqual(['session.started', 'agent.retry', 'terminal.failed']);
      expect(messages[1]).toEqual({ type: 'agent.retry', attempt: 1, reason: expect.stringContaining('fetch failed') as unknown });
      const failure = failureOf(messages);
      expect(failure).toMatchObject({ reason: 'agent-error', exitCode: 1, agentError: expect.stringContaining('fetch failed') as unknown });
      expect(failure.httpStatus).toBeUndefined();
    },
    SLOW,
  );

  it(
    'GEMINI_API_KEY not set: nothing on stdout, exit 41, the message is what stderr says',
    async () => {
      const messages = await messagesOf('missing key');
      expect(types(messages)).toEqual(['terminal.failed']);
      expect(failureOf(messages)).toMatchObject({ reason: 'exit', exitCode: 41, signal: null, message: expect.stringMatching(/^Gemini CLI exited with code 41: .*GEMINI_API_KEY/) as unknown });
    },
    SLOW,
  );

  it(
    'a folder it does not trust (skipTrust: false): nothing on stdout, exit 55, the message says so',
    async () => {
      const messages = await messagesOf('untrusted');
      expect(types(messages)).toEqual(['terminal.failed']);
      expect(failureOf(messages)).toMatchObject({ reason: 'exit', exitCode: 55, message: expect.stringContaining('not running in a trusted directory') as unknown });
      expect(server.requestsFor('text')).toHaveLength(0);
    },
    SLOW,
  );

  it(
    'a stream that stalls, timeoutMs 10 s: the text so far, then a timeout (SIGTERM was enough)',
    async () => {
      const messages = await messagesOf('timeout');
      // Seven CLIs start side by side here: on a loaded machine this one may still be starting when
      // the limit runs out. Whatever came before the timeout is the session and the text so far.
      expect([['terminal.failed'], ['session.started', 'terminal.failed'], ['session.started', 'assistant', 'terminal.failed']]).toContainEqual(shape(messages));
      expect(expectedText('hang').startsWith(answerOf(messages))).toBe(true);
      expect(failureOf(messages)).toMatchObject({ reason: 'timeout', timeout: { limit: 'run', ms: 10_000 } });
      expect(await timeoutReport).toMatchObject({ requested: true, cause: 'timeout', exitedGracefully: true, confirmed: true });
    },
    SLOW,
  );
});

describe('real Gemini CLI: agentRetry: false', () => {
  it(
    "one request although the settings allow 2 (a home overlay sets maxAttempts 1), and the overlay is removed",
    async () => {
      server.reset();
      const settingsBefore = readFileSync(env.settingsPath, 'utf8');
      const overlaysBefore = overlays('agent-rx-gemini-');
      let during: string[] = [];
      let stoppedReport: (report: StopReport) => void = () => undefined;
      const report = new Promise<StopReport>((resolve) => {
        stoppedReport = resolve;
      });
      const run$ = runGemini(options('http500', { agentRetry: false, onStopped: stoppedReport })).pipe(
        tap((message) => {
          if (message.type === 'session.started') during = overlays('agent-rx-gemini-');
        }),
      );
      const messages = await timings.run('http500, agentRetry: false', run$);
      expect(types(messages)).toEqual(['session.started', 'terminal.failed']);
      expect(failureOf(messages)).toMatchObject({ reason: 'agent-error', exitCode: 244, httpStatus: 500 });
      expect(server.requestsFor('http500')).toHaveLength(1);
      expect(during.filter((name) => !overlaysBefore.includes(name))).toHaveLength(1);
      expect((await report).confirmed).toBe(true);
      expect(overlays('agent-rx-gemini-')).toEqual(overlaysBefore);
      expect(readFileSync(env.settingsPath, 'utf8')).toBe(settingsBefore);
    },
    SLOW,
  );
});

describe('real Gemini CLI: sessions', () => {
  let sessions: GeminiEnv;

  beforeAll(() => {
    // A HOME and folder of their own: `latest` is the latest session of the folder.
    sessions = createGeminiEnv({ baseUrl: server.baseUrl });
  });

  afterAll(async () => {
    await sessions.cleanup();
  });

  it(
    "{ id } starts a session with that id; 'latest' and { resume: id } continue it, with its history",
    async () => {
      server.reset();
      const first = randomUUID();
      const second = randomUUID();
      const started1 = await run('session: { id }', options('text', { session: { id: first } }, sessions));
      expect(started1[0]).toEqual({ type: 'session.started', pid: expect.any(Number), processGroup: expect.any(Number), sessionId: first, model: GEMINI_MODEL });
      expect(started1.at(-1)).toMatchObject({ type: 'terminal.completed', sessionId: first });

      const latest = await run("session: 'latest'", options('echo', { session: 'latest', prompt: 'second' }, sessions));
      expect(latest[0]).toEqual({ type: 'session.resumed', pid: expect.any(Number), processGroup: expect.any(Number), sessionId: first, model: GEMINI_MODEL });
      expect(answerOf(latest)).toBe(echoText('second'));
      expect(latest.at(-1)).toMatchObject({ type: 'terminal.completed', sessionId: first });
      // The first turn (prompt and answer) is sent again.
      expect(server.requestsFor('echo')[0]?.messageCount).toBe(3);

      // Another session becomes the latest; the first is still found by its id.
      const other = await run('session: { id } (another)', options('text', { session: { id: second } }, sessions));
      expect(other[0]).toEqual({ type: 'session.started', pid: expect.any(Number), processGroup: expect.any(Number), sessionId: second, model: GEMINI_MODEL });
      const resumed = await run('session: { resume: id }', options('echo', { session: { resume: first }, prompt: 'third' }, sessions));
      expect(resumed[0]).toEqual({ type: 'session.resumed', pid: expect.any(Number), processGroup: expect.any(Number), sessionId: first, model: GEMINI_MODEL });
      expect(answerOf(resumed)).toBe(echoText('third'));
      expect(resumed.at(-1)).toMatchObject({ type: 'terminal.completed', sessionId: first });
      expect(server.requestsFor('echo')[1]?.messageCount).toBe(5);
    },
    SLOW,
  );
});

describe('real Gemini CLI: a session resumed in a later minute, with session cleanup on', () => {
  let cleaned: GeminiEnv;

  beforeAll(() => {
    cleaned = createGeminiEnv({ baseUrl: server.baseUrl, sessionCleanup: true });
  });

  afterAll(async () => {
    await cleaned.cleanup();
  });

  /** The session files of the env: `session-<minute>-<first 8 of the id>.jsonl`, by folder. */
  function sessionFiles(): string[] {
    const tmp = join(cleaned.home, '.gemini', 'tmp');
    return readdirSync(tmp, { recursive: true, encoding: 'utf8' }).filter((name) => /(^|\/)session-[^/]*\.jsonl$/.test(name)).map((name) => join(tmp, name));
  }

  it(
    'survives the next start of Gemini CLI in its folder (the empty file the resume left is removed)',
    async () => {
      server.reset();
      const id = randomUUID();
      const started1 = await run('session: { id } (cleanup on)', options('text', { session: { id } }, cleaned));
      expect(started1.at(-1)).toMatchObject({ type: 'terminal.completed', sessionId: id });
      // As if the session had begun in another minute: the resume below then opens its file
      // for this minute, as it does when a session is resumed a minute or more after it began.
      const [file = ''] = sessionFiles();
      expect(file).toMatch(new RegExp(`-${id.slice(0, 8)}\\.jsonl$`));
      const earlier = file.replace(/T\d\d-\d\d-(\w{8})\.jsonl$/, (whole, short: string) => (whole.startsWith('T00-00') ? `T00-01-${short}.jsonl` : `T00-00-${short}.jsonl`));
      expect(earlier).not.toBe(file);
      renameSync(file, earlier);

      const resumed = await run("session: 'latest' (cleanup on)", options('echo', { session: 'latest', prompt: 'second' }, cleaned));
      expect(resumed[0]).toEqual({ type: 'session.resumed', pid: expect.any(Number), processGroup: expect.any(Number), sessionId: id, model: GEMINI_MODEL });
      expect(resumed.at(-1)).toMatchObject({ type: 'terminal.completed', sessionId: id });
      expect(sessionFiles()).toHaveLength(1);

      // Gemini CLI's cleanup runs at this start; the session is still there to resume after it.
      const other = await run('another session (cleanup on)', options('text', {}, cleaned));
      expect(other.at(-1)).toMatchObject({ type: 'terminal.completed' });
      const again = await run('session: { resume: id } again (cleanup on)', options('echo', { session: { resume: id }, prompt: 'third' }, cleaned));
      expect(again[0]).toEqual({ type: 'session.resumed', pid: expect.any(Number), processGroup: expect.any(Number), sessionId: id, model: GEMINI_MODEL });
      expect(again.at(-1)).toMatchObject({ type: 'terminal.completed', sessionId: id });
      // Both earlier turns are sent again.
      expect(server.requestsFor('echo')[1]?.messageCount).toBe(5);
    },
    SLOW,
  );
});

describe('real Gemini CLI: cancellation', () => {
  it(
    'unsubscribing mid-stream: SIGTERM ends Gemini CLI, the request is closed, nothing is emitted after',
    async () => {
      server.reset();
      const startedAt = performance.now();
      const seen: CliMessage[] = [];
      let unsubscribedAt = -1;
      const report = await new Promise<StopReport>((resolve) => {
        const subscription = runGemini(options('hang', { onStopped: resolve })).subscribe((message) => {
          seen.push(message);
          if (message.type === 'assistant' && unsubscribedAt < 0) {
            unsubscribedAt = seen.length;
            subscription.unsubscribe();
          }
        });
      });
      timings.add(`cancel mid-stream (hang), stopped in ${report.durationMs.toFixed(0)} ms`, performance.now() - startedAt);
      expect(seen).toHaveLength(unsubscribedAt);
      // SIGTERM alone: Gemini CLI runs no child while it streams, nothing needed SIGKILL.
      expect(report).toMatchObject({ requested: true, cause: 'unsubscribe', exitedGracefully: true, confirmed: true, killed: [], survivors: [] });
      expect(isAlive(report.pid ?? -1)).toBe(false);
      await eventually(() => server.requestsFor('hang').at(-1)?.clientClosed === true);
      expect(TAG.processes()).toEqual([]);
    },
    SLOW,
  );

  it(
    'unsubscribing while `sleep 30` runs (yolo): Gemini CLI exits on SIGTERM and leaves the command running; the tree kill ends it',
    async () => {
      const startedAt = performance.now();
      const { report, toolPid: sleepPid } = await stopWhileToolRuns((onStopped) => runGemini(options('sleep_tool', { approvalMode: 'yolo', gracePeriodMs: 10_000, onStopped })), TAG);
      timings.add(`cancel during \`sleep 30\`, stopped in ${report.durationMs.toFixed(0)} ms`, performance.now() - startedAt);
      expect(sleepPid).toBeGreaterThan(0);
      expect(report).toMatchObject({ requested: true, cause: 'unsubscribe', exitedGracefully: true, confirmed: true, survivors: [] });
      // Gemini CLI itself was gone within the grace period: what was killed is what it left running,
      // the shell it starts a command in, that shell's subshell, and `sleep`.
      expect(report.killed).toHaveLength(3);
      expect(report.killed).toContain(sleepPid);
      expect(report.killed).not.toContain(report.pid);
      expect(isAlive(report.pid ?? -1)).toBe(false);
      expect(isAlive(sleepPid)).toBe(false);
      expect(TAG.processes()).toEqual([]);
    },
    SLOW,
  );
});

describe('real Gemini CLI: clean-up', () => {
  it('leaves no process of this suite behind', () => {
    expect(TAG.processes()).toEqual([]);
  });
});
