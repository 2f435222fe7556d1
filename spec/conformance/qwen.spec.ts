import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tap } from 'rxjs';
import * as z from 'zod';
import { hostTempPath } from '../../lib/process/host-temp.js';
import { runQwen, stopAllRuns, type CliMessage, type RunQwenOptions, type StopReport, type TerminalFailed } from '../../lib/index.js';
import { answerOf } from '../helpers/pi-transcripts.js';
import { isAlive } from '../helpers/processes.js';
import { createProcessTag } from '../helpers/tagged-processes.js';
import { BASH_TOOL_COMMAND, echoText, expectedText, expectedThinking, expectedToolCall, FAIL_TOOL_COMMAND, FAKE_INPUT_TOKENS, startFakeModelServer, type FakeModelServer } from './fake-model-server.js';
import { executableOptions } from './cli-under-test.js';
import { createQwenEnv, type QwenEnv } from './qwen-env.js';
import { JSON_BAD_VALUE } from './scenarios.js';
import { eventually, overlays, pinnedVersion, sessionIdOf, shape, stopWhileToolRuns, tools, types } from './suite.js';
import { ScenarioTimings } from './timings.js';

/**
 * The real Qwen Code (the pinned devDependency `@qwen-code/qwen-code` 0.24.4, its `cli.js` run by
 * this Node) against the fake model server's OpenAI chat-completions API on 127.0.0.1, through
 * runQwen. The model id picks the scenario. Qwen Code tries a failing model request 7 times over
 * about 70 s whatever its settings say (only its HTTP client's retries can be turned off): the
 * failures other than a 401 are bounded here, by the run's `timeoutMs` or by Qwen Code's own
 * `--max-wall-time`, and run side by side. Wall times are printed at the end.
 */

const TAG = createProcessTag('AGENT_RX_QWEN_CONFORMANCE');
/** Qwen Code starts in 1.5-3 s on this kind of machine; generous for a loaded one. */
const SLOW = 60_000;

let server: FakeModelServer;
let env: QwenEnv;
const timings = new ScenarioTimings();

beforeAll(async () => {
  server = await startFakeModelServer();
  env = createQwenEnv({ baseUrl: server.openaiBaseUrl });
});

afterAll(async () => {
  await stopAllRuns();
  await server.close();
  await env.cleanup();
  timings.print('Qwen Code conformance');
});

function options(model: string, extra: Partial<RunQwenOptions> = {}, where: QwenEnv = env): RunQwenOptions {
  const { env: extraEnv, ...rest } = extra;
  return {
    prompt: `Scenario ${model} please`,
    model,
    // No executable (unless AGENT_RX_QWEN_BIN names one): the definition finds the package's cli.js
    // and runs it with this Node, as one process.
    ...executableOptions('qwen'),
    cwd: where.cwd,
    env: { ...where.env, ...TAG.env, ...extraEnv },
    ...rest,
  };
}

function run(name: string, opts: RunQwenOptions): Promise<CliMessage[]> {
  return timings.run(name, runQwen(opts));
}

/** A run started now and awaited later (by the test that asserts it). */
function started(name: string, opts: RunQwenOptions): Promise<CliMessage[]> {
  const messages = run(name, opts);
  messages.catch(() => undefined);
  return messages;
}

function failureOf(messages: readonly CliMessage[]): TerminalFailed {
  const last = messages.at(-1);
  if (last?.type !== 'terminal.failed') throw new Error(`the run did not fail: ${JSON.stringify(last)}`);
  return last;
}

/** Qwen Code sums the usage of the run's model calls; the fake server sends 100 input tokens per call. */
const usage = (calls: number, output: number) => ({
  inputTokens: FAKE_INPUT_TOKENS * calls,
  outputTokens: output,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  totalTokens: FAKE_INPUT_TOKENS * calls + output,
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('real Qwen Code: answers', () => {
  it(
    'plain text: session, the answer as deltas, completed with usage; one model request (no background memory agent)',
    async () => {
      server.reset();
      const messages = await run('text', options('text'));
      const sessionId = sessionIdOf(messages);
      expect(sessionId).toMatch(UUID);
      expect(shape(messages)).toEqual(['session.started', 'assistant', 'terminal.completed']);
      expect(messages.filter((message) => message.type === 'assistant').length).toBeGreaterThan(1);
      expect(answerOf(messages)).toBe(expectedText('text'));
      expect(messages.at(-1)).toEqual({ type: 'terminal.completed', stopReason: 'end_turn', usage: usage(1, 7), sessionId });
      expect(server.requestsFor('text')).toHaveLength(1);
      expect(server.requestsFor('text')[0]).toMatchObject({ api: 'openai-completions', requestModel: 'text', stream: true, lastUserText: 'Scenario text please' });
    },
    SLOW,
  );

  it(
    'thinking then text: the thought whole, once, before the end; the answer once',
    async () => {
      const messages = await run('thinking_text', options('thinking_text'));
      expect(shape(messages)).toEqual(['session.started', 'assistant', 'assistant.thought', 'terminal.completed']);
      expect(messages.filter((message) => message.type === 'assistant.thought')).toEqual([{ type: 'assistant.thought', text: expectedThinking('thinking_text') }]);
      expect(answerOf(messages)).toBe(expectedText('thinking_text'));
    },
    SLOW,
  );

  it(
    'a multi-line prompt that starts with - reaches the model byte for byte (one --prompt= argument)',
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

describe('real Qwen Code: outputSchema, natively (--json-schema)', () => {
  it(
    'the model is offered structured_output with the schema, the prompt has no instruction; a value the tool refuses is asked again, and prose ends the run output-schema',
    async () => {
      const Answer = z.object({ answer: z.string(), n: z.number() });
      const messages = await run('json_bad natively', options('json_bad', { outputSchema: Answer }));
      const requests = server.requestsFor('json_bad');
      expect(requests.length).toBeGreaterThanOrEqual(2);
      expect(requests[0]?.toolNames).toContain('structured_output');
      expect(requests[0]?.lastUserText).toBe('Scenario json_bad please');
      // Qwen Code checked the call's arguments against the schema and told the model.
      expect(messages).toContainEqual(expect.objectContaining({ type: 'tool.failed', name: 'structured_output' }));
      expect(messages.at(-1)).toMatchObject({
        type: 'terminal.failed',
        reason: 'output-schema',
        exitCode: 1,
        agentError: expect.stringContaining('Model produced plain text instead of calling the structured_output tool') as unknown,
        answer: JSON.stringify(JSON_BAD_VALUE),
      });
      expect((messages.at(-1) as TerminalFailed).outputIssues?.map((issue) => issue.path)).toContain('answer');
    },
    SLOW,
  );
});

describe('real Qwen Code: tools (yolo)', () => {
  it(
    'run_shell_command runs: tool.call with the command (kind execute), tool.completed with its output, then the answer',
    async () => {
      server.reset();
      const call = expectedToolCall('bash_tool', 'openai-completions', 'qwen');
      const messages = await run('bash_tool (yolo)', options('bash_tool', { approvalMode: 'yolo' }));
      expect(tools(messages)).toEqual([
        { type: 'tool.call', toolCallId: 'call_bash_tool_1', name: 'run_shell_command', input: { command: BASH_TOOL_COMMAND, description: `Run ${BASH_TOOL_COMMAND}` }, kind: 'execute', summary: BASH_TOOL_COMMAND },
        { type: 'tool.completed', toolCallId: 'call_bash_tool_1', name: 'run_shell_command', output: 'hello' },
      ]);
      expect(shape(messages)).toEqual(['session.started', 'assistant', 'tool.call', 'tool.completed', 'assistant', 'terminal.completed']);
      expect(answerOf(messages)).toBe(`${call?.textBefore ?? ''}${expectedText('bash_tool')}`);
      expect(messages.at(-1)).toMatchObject({ type: 'terminal.completed', stopReason: 'end_turn' });
      expect(server.requestsFor('bash_tool')).toHaveLength(2);
    },
    SLOW,
  );

  it(
    'a command that fails: tool.failed with its exit code, and the run goes on to complete',
    async () => {
      const messages = await run('fail_tool (yolo)', options('fail_tool', { approvalMode: 'yolo' }));
      expect(tools(messages)).toEqual([
        expect.objectContaining({ type: 'tool.call', name: 'run_shell_command', kind: 'execute', summary: FAIL_TOOL_COMMAND }),
        { type: 'tool.failed', toolCallId: 'call_fail_tool_1', name: 'run_shell_command', output: expect.stringContaining('Exit Code: 2') as unknown },
      ]);
      expect(answerOf(messages)).toContain(expectedText('fail_tool'));
      expect(messages.at(-1)).toMatchObject({ type: 'terminal.completed' });
    },
    SLOW,
  );
});

describe('real Qwen Code: failures (run side by side)', () => {
  const runs = new Map<string, Promise<CliMessage[]>>();
  const reports = new Map<string, Promise<StopReport>>();

  const reported = (name: string): ((report: StopReport) => void) => {
    let resolve: (report: StopReport) => void = () => undefined;
    reports.set(name, new Promise((done) => (resolve = done)));
    return (report) => {
      resolve(report);
    };
  };

  beforeAll(() => {
    server.reset();
    runs.set('http401', started('http401 (no retry)', options('http401')));
    runs.set('http500', started('http500, agentRetry: false, timeoutMs 20 s', options('http500', { agentRetry: false, timeoutMs: 20_000, onStopped: reported('http500') })));
    runs.set('http429', started('http429, --max-wall-time 10s', options('http429', { agentRetry: false, extraArgs: ['--max-wall-time', '10s'] })));
    runs.set('hang', started('hang, idleTimeoutMs 8 s', options('hang', { idleTimeoutMs: 8_000, onStopped: reported('hang') })));
  });

  afterAll(async () => {
    await Promise.allSettled(runs.values());
  });

  const messagesOf = (name: string): Promise<CliMessage[]> => runs.get(name) ?? Promise.reject(new Error(`no run ${name}`));

  it(
    'http401: no retry; agent-error with httpStatus 401 and exit 1; the error is not part of the answer',
    async () => {
      const messages = await messagesOf('http401');
      expect(types(messages)).toEqual(['session.started', 'terminal.failed']);
      expect(failureOf(messages)).toMatchObject({ reason: 'agent-error', exitCode: 1, httpStatus: 401, message: 'Qwen Code reported an error: [API Error: 401 fake invalid api key]' });
      expect(server.requestsFor('http401')).toHaveLength(1);
    },
    SLOW,
  );

  it(
    'http500 with agentRetry: false: Qwen Code still retries the request inside; timeoutMs ends the run (timeout)',
    async () => {
      const messages = await messagesOf('http500');
      expect(failureOf(messages)).toMatchObject({ reason: 'timeout', timeout: { limit: 'run', ms: 20_000 } });
      expect(messages.filter((message) => message.type === 'assistant')).toEqual([]);
      // One request per attempt (its HTTP client's retries are off; its own backoff starts at 1.5 s),
      // several attempts in 20 s. With 12 s, one CI run on a loaded machine (four Qwen Code starts
      // side by side, other suites beside them) saw a single request.
      expect(server.requestsFor('http500').length).toBeGreaterThanOrEqual(2);
      expect(await reports.get('http500')).toMatchObject({ cause: 'timeout', exitedGracefully: true, confirmed: true });
    },
    SLOW,
  );

  it(
    "http429 bounded by Qwen Code's own --max-wall-time: exit 55, the message is what it says on stderr",
    async () => {
      const messages = await messagesOf('http429');
      expect(failureOf(messages)).toMatchObject({ reason: 'exit', exitCode: 55, message: expect.stringContaining('wall-clock budget of 10s exceeded') as unknown });
      expect(server.requestsFor('http429').length).toBeGreaterThanOrEqual(2);
    },
    SLOW,
  );

  it(
    'a stream that stalls, idleTimeoutMs 8 s: the text so far, then timeout (idle); SIGTERM was enough, the process is gone',
    async () => {
      const messages = await messagesOf('hang');
      // Four CLIs start side by side here: the limit also counts a slow start-up.
      expect(expectedText('hang').startsWith(answerOf(messages))).toBe(true);
      expect(failureOf(messages)).toMatchObject({ reason: 'timeout', timeout: { limit: 'idle', ms: 8_000 } });
      const report = await reports.get('hang');
      expect(report).toMatchObject({ cause: 'timeout', exitedGracefully: true, confirmed: true, survivors: [] });
      expect(isAlive(report?.pid ?? -1)).toBe(false);
    },
    SLOW,
  );
});

describe('real Qwen Code: its configuration folder', () => {
  it(
    "each run has its own (QWEN_HOME), the user's settings made quiet, without retries for agentRetry: false; removed after, the user's untouched",
    async () => {
      server.reset();
      const settingsPath = join(env.home, '.qwen', 'settings.json');
      const settingsBefore = readFileSync(settingsPath, 'utf8');
      const before = overlays('agent-rx-qwen-');
      let during: string[] = [];
      let duringSettings: unknown;
      let stopped: (report: StopReport) => void = () => undefined;
      const report = new Promise<StopReport>((resolve) => (stopped = resolve));
      const run$ = runQwen(options('http401', { agentRetry: false, onStopped: stopped })).pipe(
        tap((message) => {
          if (message.type !== 'session.started') return;
          during = overlays('agent-rx-qwen-').filter((name) => !before.includes(name));
          duringSettings = JSON.parse(readFileSync(join(hostTempPath(), during[0] ?? '', 'settings.json'), 'utf8'));
        }),
      );
      const messages = await timings.run('http401, agentRetry: false (the overlay)', run$);
      expect(failureOf(messages)).toMatchObject({ reason: 'agent-error', httpStatus: 401 });
      expect(during).toHaveLength(1);
      expect(duringSettings).toMatchObject({
        security: { auth: { selectedType: 'openai' } },
        memory: { enableManagedAutoMemory: false, enableManagedAutoDream: false },
        ui: { enableFollowupSuggestions: false },
        model: { generationConfig: { maxRetries: 0 } },
      });
      expect((await report).confirmed).toBe(true);
      // Its own is gone (another run's may still be going away).
      expect(overlays('agent-rx-qwen-')).not.toContain(during[0]);
      expect(overlays('agent-rx-qwen-').filter((name) => !before.includes(name))).toEqual([]);
      expect(readFileSync(settingsPath, 'utf8')).toBe(settingsBefore);
      // Its session went to the user's folder (linked), where a later run finds it.
      expect(readdirSync(join(env.home, '.qwen', 'projects'))).not.toEqual([]);
    },
    SLOW,
  );
});

describe('real Qwen Code: sessions', () => {
  let sessions: QwenEnv;

  beforeAll(() => {
    // A HOME and folder of their own: `latest` is the latest session of the folder.
    sessions = createQwenEnv({ baseUrl: server.openaiBaseUrl });
  });

  afterAll(async () => {
    await sessions.cleanup();
  });

  it(
    "{ id } starts a session with that id; 'latest' and { resume: id } continue it, with its history",
    async () => {
      server.reset();
      const id = randomUUID();
      const first = await run('session: { id }', options('text', { session: { id } }, sessions));
      expect(first[0]).toEqual({ type: 'session.started', pid: expect.any(Number), processGroup: expect.any(Number), sessionId: id, agentVersion: pinnedVersion('@qwen-code/qwen-code'), model: 'text' });
      expect(first.at(-1)).toMatchObject({ type: 'terminal.completed', sessionId: id });
      const latest = await run("session: 'latest'", options('echo', { session: 'latest', prompt: 'second' }, sessions));
      expect(latest[0]).toEqual({ type: 'session.resumed', pid: expect.any(Number), processGroup: expect.any(Number), sessionId: id, agentVersion: pinnedVersion('@qwen-code/qwen-code'), model: 'echo' });
      expect(answerOf(latest)).toBe(echoText('second'));
      const resumed = await run('session: { resume: id }', options('recall', { session: { resume: id }, prompt: 'third' }, sessions));
      expect(resumed[0]).toEqual({ type: 'session.resumed', pid: expect.any(Number), processGroup: expect.any(Number), sessionId: id, agentVersion: pinnedVersion('@qwen-code/qwen-code'), model: 'recall' });
      expect(answerOf(resumed)).toBe('User texts in context: 3 ("Scenario text please" | "second" | "third").');
    },
    SLOW,
  );
});

describe('real Qwen Code: cancellation', () => {
  it(
    'unsubscribing mid-stream: SIGTERM ends Qwen Code, the request is closed, nothing is emitted after, no process left',
    async () => {
      server.reset();
      const startedAt = performance.now();
      const seen: CliMessage[] = [];
      let unsubscribedAt = -1;
      const report = await new Promise<StopReport>((resolve) => {
        const subscription = runQwen(options('hang', { onStopped: resolve })).subscribe((message) => {
          seen.push(message);
          if (message.type === 'assistant' && unsubscribedAt < 0) {
            unsubscribedAt = seen.length;
            subscription.unsubscribe();
          }
        });
      });
      timings.add(`cancel mid-stream (hang), stopped in ${report.durationMs.toFixed(0)} ms`, performance.now() - startedAt);
      expect(seen).toHaveLength(unsubscribedAt);
      expect(report).toMatchObject({ requested: true, cause: 'unsubscribe', exitedGracefully: true, confirmed: true, survivors: [] });
      expect(isAlive(report.pid ?? -1)).toBe(false);
      await eventually(() => server.requestsFor('hang').at(-1)?.clientClosed === true);
      expect(TAG.processes()).toEqual([]);
    },
    SLOW,
  );

  it(
    'unsubscribing while `sleep 30 # intentional-sleep: …` runs: Qwen Code kills its tool on SIGTERM and exits (grace 10 s: on Node 24 it takes about 5 s); every pid of the tree is gone',
    async () => {
      const startedAt = performance.now();
      const { report, toolPid: sleepPid } = await stopWhileToolRuns((onStopped) => runQwen(options('sleep_tool', { approvalMode: 'yolo', gracePeriodMs: 10_000, onStopped })), TAG);
      timings.add(`cancel during \`sleep 30\`, stopped in ${report.durationMs.toFixed(0)} ms`, performance.now() - startedAt);
      expect(sleepPid).toBeGreaterThan(0);
      expect(report).toMatchObject({ requested: true, cause: 'unsubscribe', exitedGracefully: true, confirmed: true, survivors: [] });
      for (const pid of [report.pid ?? -1, sleepPid, ...report.killed]) expect(isAlive(pid)).toBe(false);
      expect(TAG.processes()).toEqual([]);
    },
    SLOW,
  );
});

describe('real Qwen Code: clean-up', () => {
  it('leaves no process of this suite behind', () => {
    expect(TAG.processes()).toEqual([]);
  });
});
