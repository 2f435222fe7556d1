import { afterEach, describe, expect, it } from '@jest/globals';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { lastValueFrom, toArray } from 'rxjs';
import { CliMessageSchema, isRetryableFailure, isTerminal, runCodex, stopAllRuns, type CliMessage, type RunCodexOptions, type TerminalFailed } from '../../lib/index.js';
import { codexAgent } from '../../lib/agents/codex/definition.js';
import { processInvocation } from '../helpers/invocation.js';

const buildCodexInvocation = (options: RunCodexOptions) => processInvocation(codexAgent, options);
import { codexStderrLine } from '../../lib/agents/codex/dialect.js';
import { codexFacts, replayCodex } from '../helpers/codex-transcripts.js';
import { answerOf } from '../helpers/pi-transcripts.js';
import { fixture } from '../helpers/processes.js';

afterEach(async () => {
  await stopAllRuns();
});

const transcripts = readdirSync(fileURLToPath(new URL('../fixtures/codex/', import.meta.url)))
  .filter((file) => file.endsWith('.jsonl'))
  .map((file) => file.slice(0, -'.jsonl'.length))
  .sort();

/** The thread a recorded run resumed: replayed with `session: { resume }`. */
const RESUMED: Readonly<Record<string, string>> = {
  resume: '01a22ade-d612-7b03-8bda-b6d8516396ba',
  'resume-unknown-thread': '01a22ade-0000-7000-8000-000000000000',
};
const replayOptions = (name: string): Partial<RunCodexOptions> => {
  const thread = RESUMED[name];
  return thread === undefined ? {} : { session: { resume: thread } };
};

const only = <T extends CliMessage['type']>(messages: readonly CliMessage[], type: T) =>
  messages.filter((message): message is Extract<CliMessage, { type: T }> => message.type === type);
const types = (messages: readonly CliMessage[]) => messages.map((message) => message.type);
const terminalOf = (messages: readonly CliMessage[]): TerminalFailed => {
  const last = messages.at(-1);
  if (last?.type !== 'terminal.failed') throw new Error(`expected terminal.failed last, got ${JSON.stringify(last)}`);
  return last;
};

const CONFIG_ERROR =
  'Error loading config.toml: model_providers contains reserved built-in provider IDs: `openai`. Built-in providers cannot be overridden. Rename your custom provider (for example, `openai-custom`). in `model_providers`';

describe('runCodex on every recorded transcript', () => {
  it('has the recorded runs and the hand-written ones', () => {
    expect(transcripts).toEqual(
      expect.arrayContaining(['text', 'tool', 'tool-fail', 'reasoning', 'resume', 'http500', 'http401', 'conn-refused', 'config-error', 'synthetic-mcp']),
    );
  });

  it.each(transcripts)('%s: valid messages, the answer once, thoughts, tools paired, warnings, one terminal last, the session first', async (name) => {
    const facts = codexFacts(name);
    const messages = await replayCodex(name, replayOptions(name));
    for (const message of messages) expect(CliMessageSchema.safeParse(message).success).toBe(true);

    expect(answerOf(messages)).toBe(facts.answer);
    expect(only(messages, 'assistant.withdrawn')).toEqual([]);
    // Reasoning is held to the turn's end and released as one thought.
    expect(only(messages, 'assistant.thought').map((message) => message.text)).toEqual(facts.reasoning.length === 0 ? [] : [facts.reasoning.join('\n\n')]);
    expect(only(messages, 'agent.warning').map((message) => message.message)).toEqual(facts.warnings);
    expect(only(messages, 'agent.retry')).toHaveLength(facts.errorLines.filter((line) => line.startsWith('Reconnecting')).length);

    // Each tool item: one call, then its result when the run printed one, and nothing else.
    const toolMessages = messages.filter((message) => message.type.startsWith('tool.')) as Extract<CliMessage, { toolCallId: string }>[];
    expect(new Set(toolMessages.map((message) => message.toolCallId))).toEqual(new Set(facts.tools.map((tool) => tool.id)));
    for (const tool of facts.tools) {
      const mine = toolMessages.filter((message) => message.toolCallId === tool.id);
      expect(mine[0]?.type).toBe('tool.call');
      expect(mine.filter((message) => message.type === 'tool.call')).toHaveLength(1);
      const results = mine.filter((message) => message.type === 'tool.completed' || message.type === 'tool.failed');
      expect(results.map((message) => message.type)).toEqual(tool.outcome === null ? [] : [`tool.${tool.outcome}`]);
      if (results.length > 0) expect(mine.at(-1)).toBe(results[0]);
    }
    expect(facts.commandIds).toEqual(facts.tools.filter((tool) => tool.type === 'command_execution').map((tool) => tool.id));

    expect(messages.filter(isTerminal)).toHaveLength(1);
    const terminal = messages.at(-1) as CliMessage;
    expect(isTerminal(terminal)).toBe(true);
    expect(terminal.type).toBe(facts.turnEnd === 'turn.completed' && facts.ending === '0' ? 'terminal.completed' : 'terminal.failed');

    const headers = messages.filter((message) => message.type === 'session.started' || message.type === 'session.resumed');
    if (facts.threadId === undefined) {
      expect(headers).toEqual([]);
    } else {
      expect(messages[0]).toEqual({ type: name in RESUMED ? 'session.resumed' : 'session.started', pid: expect.any(Number), processGroup: expect.any(Number), sessionId: facts.threadId });
      expect(headers).toHaveLength(1);
      expect(terminal).toMatchObject({ sessionId: facts.threadId });
    }
  });
});

describe('runCodex: exact streams', () => {
  it('text: the whole message, then success with the usage and the thread id', async () => {
    expect(await replayCodex('text')).toEqual([
      { type: 'session.started', pid: expect.any(Number), processGroup: expect.any(Number), sessionId: '01a22ade-d612-7b03-8bda-b6d8516396ba' },
      { type: 'assistant', text: 'Hello from the fake model. This is plain text.' },
      {
        type: 'terminal.completed',
        stopReason: 'end_turn',
        usage: { inputTokens: 42, outputTokens: 7, cacheReadTokens: 0, cacheWriteTokens: 0, totalTokens: 49 },
        sessionId: '01a22ade-d612-7b03-8bda-b6d8516396ba',
      },
    ]);
  });

  it('tool: text, the command_execution call with its command, its output, the rest of the answer, the usage summed', async () => {
    const messages = await replayCodex('tool');
    expect(types(messages)).toEqual(['session.started', 'assistant', 'tool.call', 'tool.completed', 'assistant', 'terminal.completed']);
    expect(messages.filter((message) => message.type.startsWith('tool.'))).toEqual([
      { type: 'tool.call', toolCallId: 'item_1', name: 'command_execution', input: { command: "/bin/bash -lc 'echo hello'" }, kind: 'execute', summary: 'echo hello' },
      { type: 'tool.completed', toolCallId: 'item_1', name: 'command_execution', output: 'hello\n' },
    ]);
    const callAt = messages.findIndex((message) => message.type === 'tool.call');
    expect(answerOf(messages.slice(0, callAt))).toBe('I will run `echo hello`.');
    expect(answerOf(messages.slice(callAt))).toMatch(/^The command ran\. Tool output was: /);
    expect(messages.at(-1)).toEqual({
      type: 'terminal.completed',
      stopReason: 'end_turn',
      usage: { inputTokens: 140, outputTokens: 27, cacheReadTokens: 0, cacheWriteTokens: 0, totalTokens: 167 },
      sessionId: '01a22ade-eef5-75e3-a6a2-ceecedef0c24',
    });
  });

  it('tool-fail: a command that exits 2 is tool.failed with its output, and the run succeeds', async () => {
    const messages = await replayCodex('tool-fail');
    expect(messages.filter((message) => message.type.startsWith('tool.'))).toEqual([
      { type: 'tool.call', toolCallId: 'item_1', name: 'command_execution', input: { command: "/bin/bash -lc 'ls /nonexistent-dir'" }, kind: 'execute', summary: 'ls /nonexistent-dir' },
      { type: 'tool.failed', toolCallId: 'item_1', name: 'command_execution', output: "ls: cannot access '/nonexistent-dir': No such file or directory\n" },
    ]);
    expect(messages.at(-1)).toMatchObject({ type: 'terminal.completed', stopReason: 'end_turn' });
  });

  it('reasoning: one whole thought, after the answer and before the terminal', async () => {
    const messages = await replayCodex('reasoning');
    expect(types(messages)).toEqual(['session.started', 'assistant', 'assistant.thought', 'terminal.completed']);
    expect(messages[2]).toEqual({
      type: 'assistant.thought',
      text: '**Planning a reply**\n\nThe user wants a short answer; I will think briefly and then answer.',
    });
    expect(messages.at(-1)).toMatchObject({ usage: { inputTokens: 42, outputTokens: 30, totalTokens: 72 } });
  });

  it('text-unknown-model: the error item is an agent.warning, and the run still succeeds', async () => {
    const messages = await replayCodex('text-unknown-model');
    expect(types(messages)).toEqual(['session.started', 'agent.warning', 'assistant', 'terminal.completed']);
    expect(messages[1]).toEqual({
      type: 'agent.warning',
      message: 'Model metadata for `fake-model` not found. Defaulting to fallback metadata; this can degrade performance and cause issues.',
    });
  });

  it('http500: Codex retries (agent.retry), then turn.failed and exit 1 are an agent-error without an HTTP status', async () => {
    const messages = await replayCodex('http500');
    const error = 'We’re currently experiencing high demand, which may cause temporary errors.';
    expect(types(messages)).toEqual(['session.started', 'agent.retry', 'terminal.failed']);
    expect(messages[1]).toEqual({ type: 'agent.retry', attempt: 1, maxAttempts: 1, reason: error });
    const terminal = terminalOf(messages);
    expect(terminal).toMatchObject({ reason: 'agent-error', exitCode: 1, signal: null, agentError: error, message: `Codex reported an error: ${error}` });
    expect(terminal).not.toHaveProperty('httpStatus');
    expect(terminal.stderr).toBe(codexFacts('http500').stderr);
  });

  it('http401: the retry and the failure carry the status; httpStatus 401', async () => {
    const messages = await replayCodex('http401');
    const error = 'unexpected status 401 Unauthorized: Incorrect API key provided: dummy., url: http://127.0.0.1:40613/s/http401/v1/responses';
    expect(only(messages, 'agent.retry')).toEqual([{ type: 'agent.retry', attempt: 1, maxAttempts: 1, reason: error }]);
    expect(terminalOf(messages)).toMatchObject({
      reason: 'agent-error',
      exitCode: 1,
      httpStatus: 401,
      agentError: error,
      message: `Codex reported an error: ${error}`,
      sessionId: '01a22adf-04aa-7a72-8e22-c3adfcdbe8e0',
    });
  });

  it('conn-refused: retries "waiting for network" without counts until the runner SIGKILLed it: an exit failure', async () => {
    const messages = await replayCodex('conn-refused');
    const retries = only(messages, 'agent.retry');
    expect(retries).toHaveLength(5);
    for (const retry of retries) expect(retry).toEqual({ type: 'agent.retry', reason: 'waiting for network: Connection failed: error sending request' });
    const terminal = terminalOf(messages);
    expect(terminal).toMatchObject({ reason: 'exit', exitCode: null, signal: 'SIGKILL' });
    expect(terminal.message).toMatch(/^Codex was killed by SIGKILL: .*retry_delay=60s$/);
    expect(terminal).not.toHaveProperty('agentError');
  });

  it('cancel-sigint-native: exit 1 without a terminal event is an exit failure; the lines Codex prints in every run explain nothing', async () => {
    const messages = await replayCodex('cancel-sigint-native');
    expect(types(messages)).toEqual(['session.started', 'terminal.failed']);
    expect(terminalOf(messages)).toMatchObject({ reason: 'exit', exitCode: 1, signal: null, message: 'Codex exited with code 1', stderr: codexFacts('cancel-sigint-native').stderr });
  });

  it('cancel-sigint-prompt-on-stdin (recorded with the prompt on stdin, as runCodex runs Codex): "Reading prompt from stdin" explains nothing either', async () => {
    const facts = codexFacts('cancel-sigint-prompt-on-stdin');
    expect(facts.stderr).toContain('Reading prompt from stdin...');
    expect(codexStderrLine(facts.stderr)).toBeUndefined();
    const messages = await replayCodex('cancel-sigint-prompt-on-stdin');
    expect(types(messages)).toEqual(['session.started', 'agent.retry', 'terminal.failed']);
    expect(terminalOf(messages)).toMatchObject({ reason: 'exit', exitCode: 1, message: 'Codex exited with code 1' });
  });

  it('the recorded failures, as isRetryableFailure classifies them: 5xx and a foreign kill are transient; 401, a config error and an unexplained exit are not', async () => {
    const retryable = async (name: string) => isRetryableFailure(terminalOf(await replayCodex(name, replayOptions(name))));
    expect(await retryable('http500')).toBe(true);
    expect(await retryable('conn-refused')).toBe(true);
    expect(await retryable('http401')).toBe(false);
    expect(await retryable('config-error')).toBe(false);
    expect(await retryable('cancel-sigint-native')).toBe(false);
  });

  it('tool-sleep-sigterm-native: killed by SIGTERM while a command runs: the call has no result, the failure names the signal', async () => {
    const messages = await replayCodex('tool-sleep-sigterm-native');
    expect(types(messages)).toEqual(['session.started', 'assistant', 'tool.call', 'terminal.failed']);
    expect(messages[2]).toEqual({ type: 'tool.call', toolCallId: 'item_1', name: 'command_execution', input: { command: "/bin/bash -lc 'sleep 30'" }, kind: 'execute', summary: 'sleep 30' });
    expect(terminalOf(messages)).toMatchObject({ reason: 'exit', exitCode: null, signal: 'SIGTERM', message: 'Codex was killed by SIGTERM' });
  });

  it('config-error: nothing on stdout, exit 1: the whole two-line error of stderr is the message', async () => {
    const messages = await replayCodex('config-error');
    expect(messages).toHaveLength(1);
    const terminal = terminalOf(messages);
    expect(terminal).toMatchObject({ reason: 'exit', exitCode: 1, signal: null, stderr: codexFacts('config-error').stderr });
    expect(terminal.message).toBe(`Codex exited with code 1: ${CONFIG_ERROR}`);
    expect(terminal).not.toHaveProperty('sessionId');
  });

  it('config-error: the lines Codex prints in every run stay out of the message, wherever they are', async () => {
    const stderr = [
      'WARNING: proceeding, even though we could not create PATH aliases: Refusing to create helper binaries under temporary dir "/tmp"',
      'Reading additional input from stdin...',
      'Error loading config.toml: model_providers contains reserved built-in provider IDs: `openai`. Built-in providers cannot be overridden. Rename your custom provider (for example, `openai-custom`).',
      'Reading additional input from stdin...',
      'in `model_providers`',
      '',
    ].join('\n');
    const terminal = terminalOf(await replayCodex('config-error', { env: { FAKE_PI_STDERR: stderr } }));
    expect(terminal.message).toBe(`Codex exited with code 1: ${CONFIG_ERROR}`);
    expect(terminal.message).not.toContain('Reading additional input from stdin');
    expect(terminal.message).not.toContain('WARNING');
    expect(terminal.stderr).toBe(stderr);
  });

  it('resume-unknown-thread (recorded): no thread, exit 1: the message is Codex\'s error', async () => {
    const messages = await replayCodex('resume-unknown-thread', replayOptions('resume-unknown-thread'));
    expect(messages).toHaveLength(1);
    expect(terminalOf(messages).message).toMatch(
      /^Codex exited with code 1: Error: thread\/resume: thread\/resume failed: no rollout found for thread id 01a22ade-0000-7000-8000-000000000000 \(code -32600\)$/,
    );
    // The backtrace that follows it on stderr is kept there, not in the message.
    expect(terminalOf(messages).stderr).toContain('Stack backtrace');
  });

  it('usage: cached input is counted apart from the rest of the input', async () => {
    expect((await replayCodex('synthetic-cached-usage')).at(-1)).toMatchObject({
      type: 'terminal.completed',
      usage: { inputTokens: 60, outputTokens: 12, cacheReadTokens: 40, cacheWriteTokens: 0, totalTokens: 112 },
    });
  });

  it('resume: session.resumed with the thread id, and the thread total as usage', async () => {
    const messages = await replayCodex('resume', replayOptions('resume'));
    expect(messages[0]).toEqual({ type: 'session.resumed', pid: expect.any(Number), processGroup: expect.any(Number), sessionId: '01a22ade-d612-7b03-8bda-b6d8516396ba' });
    expect(messages.at(-1)).toMatchObject({ usage: { inputTokens: 84, outputTokens: 14 }, sessionId: '01a22ade-d612-7b03-8bda-b6d8516396ba' });
    // `resume --last` is a resumption too.
    expect((await replayCodex('resume', { session: 'last' }))[0]).toEqual({ type: 'session.resumed', pid: expect.any(Number), processGroup: expect.any(Number), sessionId: '01a22ade-d612-7b03-8bda-b6d8516396ba' });
  });

  it('synthetic file_change, mcp_tool_call, web_search and todo_list items are tool calls with their results', async () => {
    expect((await replayCodex('synthetic-file-change')).filter((message) => message.type.startsWith('tool.'))).toEqual([
      { type: 'tool.call', toolCallId: 'item_1', name: 'file_change', input: { changes: [{ path: 'a.txt', kind: 'add' }, { path: 'b.txt', kind: 'update' }] }, kind: 'edit' },
      { type: 'tool.completed', toolCallId: 'item_1', name: 'file_change', output: 'add a.txt\nupdate b.txt' },
      { type: 'tool.call', toolCallId: 'item_2', name: 'file_change', input: { changes: [{ path: 'gone.txt', kind: 'delete' }] }, kind: 'edit' },
      { type: 'tool.failed', toolCallId: 'item_2', name: 'file_change', output: 'delete gone.txt' },
    ]);
    expect((await replayCodex('synthetic-mcp')).filter((message) => message.type.startsWith('tool.'))).toEqual([
      { type: 'tool.call', toolCallId: 'item_0', name: 'mcp__docs__search', input: { query: 'rxjs share' }, kind: 'other' },
      { type: 'tool.completed', toolCallId: 'item_0', name: 'mcp__docs__search', output: 'Found 2 pages.' },
      { type: 'tool.call', toolCallId: 'item_1', name: 'mcp__docs__fetch', input: { url: 'https://example.invalid/x' }, kind: 'other' },
      { type: 'tool.failed', toolCallId: 'item_1', name: 'mcp__docs__fetch', output: 'page not found' },
      { type: 'tool.call', toolCallId: 'item_2', name: 'mcp__calc__add', input: { a: 1, b: 2 }, kind: 'other' },
      { type: 'tool.completed', toolCallId: 'item_2', name: 'mcp__calc__add', output: '{"sum":3}' },
    ]);
    expect((await replayCodex('synthetic-todo-web-search')).filter((message) => message.type.startsWith('tool.'))).toEqual([
      { type: 'tool.call', toolCallId: 'item_0', name: 'todo_list', input: { items: [{ text: 'a', completed: false }, { text: 'b', completed: false }] }, kind: 'think' },
      { type: 'tool.update', toolCallId: 'item_0', name: 'todo_list', output: '[ ] a\n[ ] b' },
      { type: 'tool.call', toolCallId: 'item_1', name: 'web_search', input: { query: 'rxjs share operator' }, kind: 'fetch', summary: 'rxjs share operator' },
      { type: 'tool.completed', toolCallId: 'item_1', name: 'web_search', output: '' },
      { type: 'tool.update', toolCallId: 'item_0', name: 'todo_list', output: '[x] a\n[ ] b' },
      { type: 'tool.completed', toolCallId: 'item_0', name: 'todo_list', output: '[x] a\n[ ] b' },
    ]);
  });

  it('a missing codex is terminal.failed with reason spawn and says how to install it', async () => {
    const messages = await replayCodex('text', { executable: 'agent-rx-missing-codex', executableArgs: [] });
    expect(messages).toEqual([
      expect.objectContaining({ type: 'terminal.failed', reason: 'spawn', exitCode: null, message: expect.stringContaining('npm install -g @openai/codex') }),
    ]);
  });
});

/** What `tell-argv.mjs` saw: its arguments and the bytes of its stdin. */
async function told(options: Partial<RunCodexOptions>): Promise<{ args: string[]; stdin: Buffer }> {
  const messages = await lastValueFrom(
    runCodex({ prompt: 'p', executable: process.execPath, executableArgs: [fixture('codex/tell-argv.mjs')], ...options }).pipe(toArray()),
  );
  const terminal = terminalOf(messages);
  expect(terminal).toMatchObject({ reason: 'exit', exitCode: 1 });
  const seen = JSON.parse(terminal.stderr) as { args: string[]; stdin: string };
  return { args: seen.args, stdin: Buffer.from(seen.stdin, 'base64') };
}

describe('runCodex: argv and stdin as the process sees them', () => {
  const prompt = '-rf --help\n@file «ü» 🚀\r\n\u0003 last line without newline';

  it('the prompt reaches stdin byte for byte, even one that starts with -, and never argv', async () => {
    const { args, stdin } = await told({ prompt });
    expect(stdin.equals(Buffer.from(prompt, 'utf8'))).toBe(true);
    expect(args).toEqual(['exec', '--experimental-json', '--skip-git-repo-check']);
    expect(args.some((arg) => arg.includes('-rf'))).toBe(false);
  });

  it('the prompt on stdin, as the stand-in echoes it to stderr, kept by the failure', async () => {
    const messages = await replayCodex('text', { prompt, env: { FAKE_PI_ECHO_STDIN: '1', FAKE_PI_STDERR: '', FAKE_PI_EXIT: '3' } });
    expect(answerOf(messages)).toBe('Hello from the fake model. This is plain text.');
    expect(terminalOf(messages)).toMatchObject({ reason: 'exit', exitCode: 3, stderr: `stdin:${prompt}` });
  });

  it('every option: argv is exec --experimental-json, the options, --skip-git-repo-check, extra arguments, resume; no prompt', async () => {
    const options: RunCodexOptions = {
      prompt,
      model: 'gpt-5.5',
      provider: 'proxy',
      sandbox: 'workspace-write',
      approvalPolicy: 'never',
      reasoningEffort: 'high',
      config: { model_providers: { proxy: { base_url: 'http://127.0.0.1:9/v1' } } },
      additionalDirectories: ['/tmp/a dir'],
      ephemeral: true,
      agentRetry: false,
      extraArgs: ['--color', 'never'],
      session: { resume: '01a22ade-d612-7b03-8bda-b6d8516396ba' },
    };
    const { args, stdin } = await told(options);
    expect(args).toEqual([
      'exec',
      '--experimental-json',
      '-c',
      'model_providers.proxy.base_url="http://127.0.0.1:9/v1"',
      '--model',
      'gpt-5.5',
      '-c',
      'model_provider="proxy"',
      '--sandbox',
      'workspace-write',
      '-c',
      'approval_policy="never"',
      '-c',
      'model_reasoning_effort="high"',
      '-c',
      'model_providers.proxy.request_max_retries=0',
      '-c',
      'model_providers.proxy.stream_max_retries=0',
      '--add-dir',
      '/tmp/a dir',
      '--skip-git-repo-check',
      '--ephemeral',
      '--color',
      'never',
      'resume',
      '01a22ade-d612-7b03-8bda-b6d8516396ba',
    ]);
    expect(args).toEqual(buildCodexInvocation({ ...options, executableArgs: [] }).args);
    expect(stdin.toString('utf8')).toBe(prompt);
  });
});

describe('runCodex: options and the process', () => {
  // Thrown by runCodex itself: no Observable is returned, so there is nothing to subscribe and nothing starts.
  it('throws TypeError at call time for invalid options', () => {
    const base = { prompt: 'x', executable: process.execPath, executableArgs: [fixture('forever.mjs')] };
    const bad: Partial<Record<keyof RunCodexOptions, unknown>>[] = [
      { prompt: '' },
      { prompt: '  \n' },
      { model: '' },
      { sandbox: 'everything' },
      { approvalPolicy: 'always' },
      { session: 'latest' },
      { session: { resume: '' } },
      { config: { bad: Number.NaN } },
      { config: { '': 1 } },
      { agentRetry: false },
      { agentRetry: false, provider: 'openai' },
      { ephemeral: 'yes' },
      { additionalDirectories: '/tmp' },
      { gracePeriodMs: -1 },
      { idleTimeoutMs: 0 },
      { interrupt: { signal: 'TERM' } },
    ];
    for (const options of bad) expect(() => runCodex({ ...base, ...options } as RunCodexOptions)).toThrow(TypeError);
  });
});
