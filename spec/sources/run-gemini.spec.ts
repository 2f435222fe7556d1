import { afterEach, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EMPTY, lastValueFrom, toArray } from 'rxjs';
import {
  CliMessageSchema,
  geminiSession,
  isRetryableFailure,
  isTerminal,
  runGemini,
  stopAllRuns,
  type CliMessage,
  type RunGeminiOptions,
  type StopReport,
  type TerminalFailed,
} from '../../lib/index.js';
import { geminiAgent } from '../../lib/agents/gemini/definition.js';
import { processInvocation } from '../helpers/invocation.js';

const buildGeminiInvocation = (options: RunGeminiOptions) => processInvocation(geminiAgent, options);
import { hostTempPath } from '../../lib/process/host-temp.js';
import { geminiFacts, replayGemini } from '../helpers/gemini-transcripts.js';
import { answerOf } from '../helpers/pi-transcripts.js';
import { fixture } from '../helpers/processes.js';

afterEach(async () => {
  await stopAllRuns();
});

const transcripts = readdirSync(fileURLToPath(new URL('../fixtures/gemini/', import.meta.url)))
  .filter((file) => file.endsWith('.jsonl'))
  .map((file) => file.slice(0, -'.jsonl'.length))
  .sort();

/** How a recorded run chose its session, replayed the same way. */
const SESSIONS: Readonly<Record<string, RunGeminiOptions['session']>> = {
  'resume-latest': 'latest',
  'session-id-flag': { id: '11111111-2222-4333-8444-555555555555' },
};
const replayOptions = (name: string): Partial<RunGeminiOptions> => {
  const session = SESSIONS[name];
  return session === undefined ? {} : { session };
};

const only = <T extends CliMessage['type']>(messages: readonly CliMessage[], type: T) =>
  messages.filter((message): message is Extract<CliMessage, { type: T }> => message.type === type);
const types = (messages: readonly CliMessage[]) => messages.map((message) => message.type);
const terminalOf = (messages: readonly CliMessage[]): TerminalFailed => {
  const last = messages.at(-1);
  if (last?.type !== 'terminal.failed') throw new Error(`expected terminal.failed last, got ${JSON.stringify(last)}`);
  return last;
};
/** The messages from stdout: the stand-in writes all of its stderr before its stdout, so the retries it reports may come first. */
const withoutRetries = (messages: readonly CliMessage[]) => messages.filter((message) => message.type !== 'agent.retry');

/** The errors of the recorded API failures, as Gemini CLI quotes them in its result line. */
const API_ERROR_500 = '[API Error: {"error":{"code":500,"message":"fake internal server error","status":"INTERNAL"}}]';
const API_ERROR_401 = '[API Error: {"error":{"code":401,"message":"API key not valid. Please pass a valid API key.","status":"UNAUTHENTICATED"}}]';
const ROUTINE_STDERR =
  'Warning: 256-color support not detected. Using a terminal with at least 256-color support is recommended for a better visual experience.\nRipgrep is not available. Falling back to GrepTool.\n';
const MISSING_KEY =
  'When using Gemini API, you must specify the GEMINI_API_KEY environment variable. Update your environment and try again (no reload needed if using .env)!';
const NO_RESULT = 'Gemini CLI exited without a result line (stopped by a signal, or it could not start)';

describe('runGemini on every transcript', () => {
  it('has the recorded runs and the hand-written ones', () => {
    expect(transcripts).toEqual(
      expect.arrayContaining([
        'text',
        'tool',
        'tool-fail',
        'reasoning',
        'resume-latest',
        'session-id-flag',
        'http500',
        'http401',
        'missing-api-key',
        'cancel-sigterm-norelaunch',
        'tool-sleep-sigterm-norelaunch',
        'synthetic-error-warning',
        'synthetic-error-severe',
        'synthetic-turn-limit',
        'synthetic-cancelled',
        'synthetic-cached-usage',
        'synthetic-two-tools',
        'synthetic-http429',
      ]),
    );
    // The hand-written ones say so, and only they do.
    for (const name of transcripts) expect([name, geminiFacts(name).synthetic]).toEqual([name, name.startsWith('synthetic-')]);
  });

  it('the recorded meta files hold no path of the machine they were recorded on', () => {
    for (const name of transcripts) {
      const meta = readFileSync(fixture(`gemini/${name}.meta.json`), 'utf8');
      expect([name, meta.match(/(?:\/home\/|\/root\/|\/Users\/|\/tmp\/|\/work\/)[^"\s]*/g)]).toEqual([name, null]);
    }
  });

  it.each(transcripts)('%s: valid messages, the answer once, tools paired, warnings and retries, one terminal last, the session first', async (name) => {
    const facts = geminiFacts(name);
    const messages = await replayGemini(name, replayOptions(name));
    for (const message of messages) expect(CliMessageSchema.safeParse(message).success).toBe(true);

    expect(answerOf(messages)).toBe(facts.answer);
    // Gemini CLI prints no thinking, and its deltas are never taken back.
    expect(only(messages, 'assistant.withdrawn')).toEqual([]);
    expect(only(messages, 'assistant.thought')).toEqual([]);
    expect(only(messages, 'agent.warning').map((message) => message.message)).toEqual(facts.warnings);
    expect(only(messages, 'agent.retry').map((message) => message.attempt)).toEqual(facts.retryAttempts);

    // Each tool call: one call, then its result when the run printed one, and nothing else.
    const toolMessages = messages.filter((message) => message.type.startsWith('tool.')) as Extract<CliMessage, { toolCallId: string }>[];
    expect(new Set(toolMessages.map((message) => message.toolCallId))).toEqual(new Set(facts.tools.map((tool) => tool.id)));
    for (const tool of facts.tools) {
      const mine = toolMessages.filter((message) => message.toolCallId === tool.id);
      expect(mine[0]).toMatchObject({ type: 'tool.call', name: tool.name });
      expect(mine.filter((message) => message.type === 'tool.call')).toHaveLength(1);
      const results = mine.filter((message) => message.type === 'tool.completed' || message.type === 'tool.failed');
      expect(results.map((message) => message.type)).toEqual(tool.outcome === null ? [] : [`tool.${tool.outcome}`]);
      if (results.length > 0) expect(mine.at(-1)).toBe(results[0]);
    }

    expect(messages.filter(isTerminal)).toHaveLength(1);
    const terminal = messages.at(-1) as CliMessage;
    expect(isTerminal(terminal)).toBe(true);
    // A completion needs a success result and a clean exit; a run without a result never completes.
    expect(terminal.type).toBe(facts.result === 'success' && facts.ending === '0' ? 'terminal.completed' : 'terminal.failed');

    const headers = messages.filter((message) => message.type === 'session.started' || message.type === 'session.resumed');
    if (facts.sessionId === undefined) {
      expect(headers).toEqual([]);
      expect(terminal).not.toHaveProperty('sessionId');
    } else {
      expect(withoutRetries(messages)[0]).toEqual({ type: SESSIONS[name] === 'latest' ? 'session.resumed' : 'session.started', pid: expect.any(Number), processGroup: expect.any(Number), sessionId: facts.sessionId, model: facts.model });
      expect(headers).toHaveLength(1);
      expect(terminal).toMatchObject({ sessionId: facts.sessionId });
    }
  });
});

describe('runGemini: exact streams', () => {
  it('text: each delta as it came, then success with the usage and the session id', async () => {
    const sessionId = '5c0a1307-d590-435d-97f7-cc3c2b001477';
    expect(await replayGemini('text')).toEqual([
      { type: 'session.started', pid: expect.any(Number), processGroup: expect.any(Number), sessionId, model: 'gemini-2.5-pro' },
      ...['Hello fr', 'om the f', 'ake Gemi', 'ni model', '. This i', 's plain ', 'text.'].map((text) => ({ type: 'assistant', text })),
      {
        type: 'terminal.completed',
        stopReason: 'end_turn',
        usage: { inputTokens: 42, outputTokens: 7, cacheReadTokens: 0, cacheWriteTokens: 0, totalTokens: 49 },
        sessionId,
      },
    ]);
  });

  it('tool: text, the run_shell_command call with its parameters, its output, the rest of the answer', async () => {
    const messages = await replayGemini('tool');
    const id = 'run_shell_command__run_shell_command_1796015948463_0';
    expect(messages.filter((message) => message.type.startsWith('tool.'))).toEqual([
      { type: 'tool.call', toolCallId: id, name: 'run_shell_command', input: { command: 'echo hello', description: 'Run echo hello' }, kind: 'execute', summary: 'echo hello' },
      { type: 'tool.completed', toolCallId: id, name: 'run_shell_command', output: 'hello' },
    ]);
    expect(types(messages).slice(0, 4)).toEqual(['session.started', 'assistant', 'tool.call', 'tool.completed']);
    const callAt = messages.findIndex((message) => message.type === 'tool.call');
    expect(answerOf(messages.slice(0, callAt))).toBe('I will run `echo hello`.');
    expect(answerOf(messages.slice(callAt))).toBe(geminiFacts('tool').stretches[1]);
    expect(answerOf(messages.slice(callAt))).toMatch(/^The command ran\. Tool output was: /);
    expect(messages.at(-1)).toEqual({
      type: 'terminal.completed',
      stopReason: 'end_turn',
      usage: { inputTokens: 140, outputTokens: 27, cacheReadTokens: 0, cacheWriteTokens: 0, totalTokens: 167 },
      sessionId: '18cbe23c-fde1-4e4b-a457-716548e5a06b',
    });
  });

  it('tool-fail: a command that exits 2 is still a success for Gemini CLI: tool.completed with its output, and the run completes', async () => {
    const messages = await replayGemini('tool-fail');
    const id = 'run_shell_command__run_shell_command_1796016486928_0';
    expect(messages.filter((message) => message.type.startsWith('tool.'))).toEqual([
      { type: 'tool.call', toolCallId: id, name: 'run_shell_command', input: { command: 'ls /nonexistent-dir', description: 'Run ls /nonexistent-dir' }, kind: 'execute', summary: 'ls /nonexistent-dir' },
      { type: 'tool.completed', toolCallId: id, name: 'run_shell_command', output: "ls: cannot access '/nonexistent-dir': No such file or directory" },
    ]);
    expect(messages.at(-1)).toMatchObject({ type: 'terminal.completed', stopReason: 'end_turn' });
  });

  it('reasoning: no thought is printed; the thinking tokens count only in the total', async () => {
    const messages = await replayGemini('reasoning');
    expect(only(messages, 'assistant.thought')).toEqual([]);
    expect(answerOf(messages)).toBe('After thinking: the answer is 42.');
    expect(messages.at(-1)).toMatchObject({
      type: 'terminal.completed',
      usage: { inputTokens: 42, outputTokens: 9, cacheReadTokens: 0, cacheWriteTokens: 0, totalTokens: 71 },
    });
  });

  it('http500 (recorded with 10 attempts): 9 retries read from stderr, then an agent-error with HTTP status 500 and exit 244', async () => {
    const messages = await replayGemini('http500');
    expect(only(messages, 'agent.retry')).toEqual(
      [1, 2, 3, 4, 5, 6, 7, 8, 9].map((attempt) => ({ type: 'agent.retry', attempt, reason: '500 fake internal server error' })),
    );
    expect(types(withoutRetries(messages))).toEqual(['session.started', 'terminal.failed']);
    const terminal = terminalOf(messages);
    expect(terminal).toMatchObject({
      reason: 'agent-error',
      exitCode: 244,
      signal: null,
      httpStatus: 500,
      agentError: API_ERROR_500,
      message: `Gemini CLI reported an error: ${API_ERROR_500}`,
      sessionId: '274c905b-25d2-40dd-bfdb-20b72deaea6c',
    });
    expect(terminal.stderr).toBe(geminiFacts('http500').stderr);
  });

  it('http401: no retry; an agent-error with HTTP status 401, exit 145 (401 modulo 256)', async () => {
    const messages = await replayGemini('http401');
    expect(types(messages)).toEqual(['session.started', 'terminal.failed']);
    expect(terminalOf(messages)).toMatchObject({
      reason: 'agent-error',
      exitCode: 145,
      httpStatus: 401,
      agentError: API_ERROR_401,
      message: `Gemini CLI reported an error: ${API_ERROR_401}`,
    });
  });

  it('synthetic-http429: an API error whose text has no code: the HTTP status 429 is read from exit code 173', async () => {
    const terminal = terminalOf(await replayGemini('synthetic-http429'));
    expect(terminal).toMatchObject({ reason: 'agent-error', exitCode: 173, httpStatus: 429 });
    expect(terminal.agentError).toMatch(/^\[API Error: Resource has been exhausted \(e\.g\. check quota\)\.\]\n/);
  });

  it('missing-api-key: nothing on stdout, exit 41: an exit failure whose message is what Gemini CLI said, without its routine lines', async () => {
    const messages = await replayGemini('missing-api-key');
    expect(messages).toHaveLength(1);
    const terminal = terminalOf(messages);
    expect(terminal).toMatchObject({ reason: 'exit', exitCode: 41, signal: null, message: `Gemini CLI exited with code 41: ${MISSING_KEY}` });
    expect(terminal).not.toHaveProperty('sessionId');
    expect(terminal).not.toHaveProperty('httpStatus');

    // With the lines Gemini CLI prints in every run around it, the message is the same.
    const stderr = `${ROUTINE_STDERR}${geminiFacts('missing-api-key').stderr}[STARTUP] Phase 'cleanup_ops' was started but never ended. Skipping metrics.\n`;
    const noisy = terminalOf(await replayGemini('missing-api-key', { env: { FAKE_PI_STDERR: stderr } }));
    expect(noisy.message).toBe(`Gemini CLI exited with code 41: ${MISSING_KEY}`);
    expect(noisy.message).toContain('GEMINI_API_KEY');
    expect(noisy.message).not.toContain('256-color');
    expect(noisy.message).not.toContain('Ripgrep');
    expect(noisy.stderr).toBe(stderr);
  });

  it('geminiSession reads the stderr of a failed exit as runGemini does: what is wrong, not the routine lines before it', async () => {
    const stderr = `${ROUTINE_STDERR}${geminiFacts('missing-api-key').stderr}`;
    const messages = await lastValueFrom(
      EMPTY.pipe(
        geminiSession({
          executable: process.execPath,
          executableArgs: [fixture('fake-pi.mjs'), fixture('gemini/missing-api-key.jsonl')],
          env: { FAKE_PI_EXIT: '41', FAKE_PI_STDERR: stderr },
        }),
        toArray(),
      ),
    );
    expect(messages.at(-1)).toMatchObject({ type: 'terminal.failed', reason: 'exit', exitCode: 41, stderr, message: `Gemini CLI exited with code 41: ${MISSING_KEY}` });
  });

  it('cancel-sigterm-norelaunch: SIGTERM makes Gemini CLI exit 0 without a result: a failure (missing-terminal), never a completion', async () => {
    const messages = await replayGemini('cancel-sigterm-norelaunch');
    expect(types(messages)).toEqual(['session.started', 'terminal.failed']);
    expect(terminalOf(messages)).toMatchObject({ reason: 'missing-terminal', exitCode: 0, signal: null, message: NO_RESULT });
    expect(isRetryableFailure(terminalOf(messages))).toBe(false);
  });

  it('tool-sleep-sigterm-norelaunch: stopped while a command runs: the call has no result, and the run is missing its result', async () => {
    const messages = await replayGemini('tool-sleep-sigterm-norelaunch');
    expect(types(messages)).toEqual(['session.started', 'assistant', 'tool.call', 'terminal.failed']);
    expect(messages[2]).toEqual({
      type: 'tool.call',
      toolCallId: 'run_shell_command__run_shell_command_1796016401103_0',
      name: 'run_shell_command',
      input: { command: 'sleep 30', description: 'Run sleep 30' },
      kind: 'execute',
      summary: 'sleep 30',
    });
    expect(terminalOf(messages)).toMatchObject({ reason: 'missing-terminal', exitCode: 0 });
  });

  it('resume-latest: session.resumed with the session id when replayed with session latest; session.started otherwise', async () => {
    const sessionId = '11111111-2222-4333-8444-555555555555';
    const resumed = await replayGemini('resume-latest', { session: 'latest' });
    expect(resumed[0]).toEqual({ type: 'session.resumed', pid: expect.any(Number), processGroup: expect.any(Number), sessionId, model: 'gemini-2.5-pro' });
    expect(resumed.at(-1)).toMatchObject({ type: 'terminal.completed', sessionId });
    expect((await replayGemini('resume-latest', { session: { resume: '3' } }))[0]).toEqual({ type: 'session.resumed', pid: expect.any(Number), processGroup: expect.any(Number), sessionId, model: 'gemini-2.5-pro' });
    expect((await replayGemini('resume-latest'))[0]).toEqual({ type: 'session.started', pid: expect.any(Number), processGroup: expect.any(Number), sessionId, model: 'gemini-2.5-pro' });
    // A new session with a chosen id is no resumption.
    expect((await replayGemini('session-id-flag', { session: { id: sessionId } }))[0]).toEqual({ type: 'session.started', pid: expect.any(Number), processGroup: expect.any(Number), sessionId, model: 'gemini-2.5-pro' });
  });

  it('synthetic-error-warning: an error event of severity warning is an agent.warning, and the run still completes', async () => {
    const messages = await replayGemini('synthetic-error-warning');
    expect(only(messages, 'agent.warning')).toEqual([{ type: 'agent.warning', message: 'Loop detected, stopping execution' }]);
    expect(messages.at(-1)).toMatchObject({ type: 'terminal.completed', stopReason: 'end_turn' });
  });

  it('synthetic-error-severe: an invalid stream (error event of severity error, then a result with status error and no error object, exit 0) is an agent-error that keeps the event\'s message', async () => {
    const messages = await replayGemini('synthetic-error-severe');
    expect(only(messages, 'agent.warning')).toEqual([]);
    const error = 'The model returned an empty response with no text or thoughts. This may be a transient API issue; please try again.';
    const terminal = terminalOf(messages);
    expect(terminal).toMatchObject({ reason: 'agent-error', exitCode: 0, agentError: error, message: `Gemini CLI reported an error: ${error}`, sessionId: '5e1f0000-0000-4000-8000-000000000002' });
    expect(terminal).not.toHaveProperty('httpStatus');
  });

  it('synthetic-turn-limit: an error result of a FatalError and its exit code (53): an agent-error with the result\'s message', async () => {
    const error = 'Reached max session turns for this session. Increase the number of turns by specifying maxSessionTurns in settings.json.';
    const terminal = terminalOf(await replayGemini('synthetic-turn-limit'));
    expect(terminal).toMatchObject({ reason: 'agent-error', exitCode: 53, agentError: error, message: `Gemini CLI reported an error: ${error}` });
    expect(terminal).not.toHaveProperty('httpStatus');
    expect(isRetryableFailure(terminal)).toBe(false);
  });

  it('synthetic-cancelled: a FatalCancellationError result with exit 130 is aborted', async () => {
    const messages = await replayGemini('synthetic-cancelled');
    expect(types(messages)).toEqual(['session.started', 'assistant', 'tool.call', 'tool.completed', 'terminal.failed']);
    expect(terminalOf(messages)).toMatchObject({
      reason: 'aborted',
      exitCode: 130,
      agentError: 'Operation cancelled.',
      message: 'Gemini CLI cancelled the run: Operation cancelled.',
    });
    expect(isRetryableFailure(terminalOf(messages))).toBe(false);
  });

  it('synthetic-cached-usage: cached input is counted apart from the rest of the input', async () => {
    expect((await replayGemini('synthetic-cached-usage')).at(-1)).toMatchObject({
      type: 'terminal.completed',
      usage: { inputTokens: 70, outputTokens: 12, cacheReadTokens: 30, cacheWriteTokens: 0, totalTokens: 112 },
    });
  });

  it('synthetic-two-tools: two calls with text between them; a result with status error is tool.failed with its output', async () => {
    const messages = await replayGemini('synthetic-two-tools');
    const list = 'list_directory__list_directory_1796016500000_0';
    const read = 'read_file__read_file_1796016500500_1';
    expect(types(messages).filter((type) => type !== 'assistant')).toEqual(['session.started', 'tool.call', 'tool.completed', 'tool.call', 'tool.failed', 'terminal.completed']);
    expect(messages.filter((message) => message.type.startsWith('tool.'))).toEqual([
      { type: 'tool.call', toolCallId: list, name: 'list_directory', input: { dir_path: '.' }, kind: 'search', summary: '.' },
      { type: 'tool.completed', toolCallId: list, name: 'list_directory', output: 'Listed 2 item(s).' },
      { type: 'tool.call', toolCallId: read, name: 'read_file', input: { file_path: 'missing.txt' }, kind: 'read', summary: 'missing.txt' },
      { type: 'tool.failed', toolCallId: read, name: 'read_file', output: 'File not found: missing.txt' },
    ]);
    // The text of each stretch between the calls, in its place.
    const cuts = messages.flatMap((message, index) => (message.type === 'tool.call' ? [index] : []));
    expect([answerOf(messages.slice(0, cuts[0])), answerOf(messages.slice(cuts[0], cuts[1])), answerOf(messages.slice(cuts[1]))]).toEqual(
      geminiFacts('synthetic-two-tools').stretches,
    );
    expect(geminiFacts('synthetic-two-tools').stretches).toEqual(['First I list the folder.', 'Now I read a file that is not there.', 'Done: one file listed, one missing.']);
  });

  it('the recorded failures, as isRetryableFailure classifies them: 500 and 429 are transient; 401, a missing key and a run without a result are not', async () => {
    const retryable = async (name: string) => isRetryableFailure(terminalOf(await replayGemini(name)));
    expect(await retryable('http500')).toBe(true);
    expect(await retryable('synthetic-http429')).toBe(true);
    expect(await retryable('http401')).toBe(false);
    expect(await retryable('missing-api-key')).toBe(false);
    expect(await retryable('cancel-sigterm-norelaunch')).toBe(false);
  });

  it('a missing gemini is terminal.failed with reason spawn and says how to install it', async () => {
    const messages = await replayGemini('text', { executable: 'agent-rx-missing-gemini', executableArgs: [] });
    expect(messages).toEqual([
      expect.objectContaining({ type: 'terminal.failed', reason: 'spawn', exitCode: null, message: expect.stringContaining('npm install -g @google/gemini-cli') }),
    ]);
  });
});

interface Told {
  args: string[];
  stdin: { bytes: number; sha256: string; base64?: string };
  env: { GEMINI_CLI_NO_RELAUNCH: string | null; GEMINI_CLI_HOME: string | null; HOME: string | null };
  home: { dir?: string; entries: { name: string; link: string | null; text: string | null }[] | null } | null;
}

/** What `gemini/tell-run.mjs` saw (its arguments, stdin, variables, home), and the run's stop report. */
async function told(options: Partial<RunGeminiOptions>): Promise<{ seen: Told; report: StopReport }> {
  let settle!: (report: StopReport) => void;
  const stopped = new Promise<StopReport>((resolve) => (settle = resolve));
  const messages = await lastValueFrom(
    runGemini({ prompt: 'p', executable: process.execPath, executableArgs: [fixture('gemini/tell-run.mjs')], onStopped: settle, ...options }).pipe(toArray()),
  );
  const terminal = terminalOf(messages);
  expect(terminal).toMatchObject({ reason: 'exit', exitCode: 1 });
  return { seen: JSON.parse(terminal.stderr) as Told, report: await stopped };
}

const sha256 = (text: string) => createHash('sha256').update(Buffer.from(text, 'utf8')).digest('hex');

describe('runGemini: argv, stdin and environment as the process sees them', () => {
  const prompt = '-p --help\n@file «ü» 🚀\r\n\u0003 last line without newline';

  it('argv is --output-format stream-json --skip-trust: no -p, no prompt; the prompt reaches stdin byte for byte', async () => {
    const { seen } = await told({ prompt });
    expect(seen.args).toEqual(['--output-format', 'stream-json', '--skip-trust']);
    expect(seen.args.some((arg) => arg.includes('--help') || arg === '-p')).toBe(false);
    expect(Buffer.from(seen.stdin.base64 ?? '', 'base64').equals(Buffer.from(prompt, 'utf8'))).toBe(true);
  });

  it('a prompt of 200 KB, past what one argument may hold, reaches stdin whole', async () => {
    const big = `-${'0123456789abcdef«ü»🚀\n'.repeat(8_000)}`;
    expect(Buffer.byteLength(big)).toBeGreaterThan(200_000);
    const { seen } = await told({ prompt: big });
    expect(seen.stdin).toEqual({ bytes: Buffer.byteLength(big), sha256: sha256(big) });
    expect(seen.args).toEqual(['--output-format', 'stream-json', '--skip-trust']);
  });

  it('the prompt on stdin, as the stand-in echoes it to stderr, kept by the failure', async () => {
    const messages = await replayGemini('text', { prompt, env: { FAKE_PI_ECHO_STDIN: '1', FAKE_PI_STDERR: '', FAKE_PI_EXIT: '3' } });
    expect(answerOf(messages)).toBe('Hello from the fake Gemini model. This is plain text.');
    // A success result does not explain exit 3.
    expect(terminalOf(messages)).toMatchObject({ reason: 'exit', exitCode: 3, stderr: `stdin:${prompt}` });
  });

  it('every option: the options, then the session, then the extra arguments', async () => {
    const options: RunGeminiOptions = {
      prompt,
      model: 'gemini-2.5-flash',
      approvalMode: 'yolo',
      includeDirectories: ['/tmp/a dir', '../b'],
      session: 'latest',
      extraArgs: ['--debug'],
    };
    const { seen } = await told(options);
    expect(seen.args).toEqual([
      '--output-format',
      'stream-json',
      '--model=gemini-2.5-flash',
      '--approval-mode=yolo',
      '--skip-trust',
      '--include-directories=/tmp/a dir',
      '--include-directories=../b',
      '--resume=latest',
      '--debug',
    ]);
    expect(seen.args).toEqual(buildGeminiInvocation({ ...options, executableArgs: [] }).args);
  });

  it('the environment has GEMINI_CLI_NO_RELAUNCH=true (one process, which SIGTERM ends) unless the caller sets it', async () => {
    expect((await told({})).seen.env.GEMINI_CLI_NO_RELAUNCH).toBe('true');
    expect((await told({ env: { GEMINI_CLI_NO_RELAUNCH: 'false' } })).seen.env.GEMINI_CLI_NO_RELAUNCH).toBe('false');
    expect((await told({ env: { GEMINI_CLI_NO_RELAUNCH: undefined } })).seen.env.GEMINI_CLI_NO_RELAUNCH).toBeNull();
    // With its own retries (the default), Gemini CLI keeps its own home.
    expect((await told({ env: { GEMINI_CLI_HOME: '/nowhere' } })).seen.env.GEMINI_CLI_HOME).toBe('/nowhere');
  });
});

/** Gemini CLI home overlays of this host: they live in its temporary folder. */
const overlays = (): string[] => (existsSync(hostTempPath()) ? readdirSync(hostTempPath()).filter((name) => name.startsWith('agent-rx-gemini-')) : []);

describe('runGemini with agentRetry: false', () => {
  const homes: string[] = [];
  afterEach(() => {
    for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
  });
  /** A home with Gemini CLI's settings, a credentials file and a sessions folder. */
  const makeHome = (settings: object | null): string => {
    const home = mkdtempSync(join(tmpdir(), 'agent-rx-gemini-home-'));
    homes.push(home);
    mkdirSync(join(home, '.gemini', 'tmp', 'project'), { recursive: true });
    writeFileSync(join(home, '.gemini', 'oauth_creds.json'), '{"token":"secret"}');
    if (settings !== null) writeFileSync(join(home, '.gemini', 'settings.json'), JSON.stringify(settings));
    return home;
  };

  it('points GEMINI_CLI_HOME at an overlay: the user\'s settings with general.maxAttempts 1 merged over them, every other entry linked; removed after the run', async () => {
    const home = makeHome({ general: { vimMode: true, maxAttempts: 7 }, security: { auth: { selectedType: 'gemini-api-key' } } });
    const { seen, report } = await told({ agentRetry: false, env: { HOME: home } });
    const overlay = seen.env.GEMINI_CLI_HOME;
    expect(overlay).not.toBeNull();
    expect(overlay?.startsWith(join(hostTempPath(), 'agent-rx-gemini-'))).toBe(true);
    expect(seen.env.HOME).toBe(home);
    expect(seen.home?.entries).toEqual([
      { name: 'oauth_creds.json', link: join(home, '.gemini', 'oauth_creds.json'), text: '{"token":"secret"}' },
      { name: 'settings.json', link: null, text: expect.any(String) as unknown },
      { name: 'tmp', link: join(home, '.gemini', 'tmp'), text: null },
    ]);
    const settings = JSON.parse(seen.home?.entries?.find((entry) => entry.name === 'settings.json')?.text ?? '') as unknown;
    expect(settings).toEqual({ general: { vimMode: true, maxAttempts: 1 }, security: { auth: { selectedType: 'gemini-api-key' } } });
    // The real settings are untouched, and the overlay is gone once the run is.
    expect(JSON.parse(readFileSync(join(home, '.gemini', 'settings.json'), 'utf8'))).toMatchObject({ general: { maxAttempts: 7 } });
    expect(report.requested).toBe(false);
    expect(existsSync(overlay ?? '')).toBe(false);
    expect(readdirSync(join(home, '.gemini')).sort()).toEqual(['oauth_creds.json', 'settings.json', 'tmp']);
  });

  it('reads the real home from GEMINI_CLI_HOME before HOME; without user settings, the overlay has only maxAttempts 1', async () => {
    const home = makeHome(null);
    const { seen } = await told({ agentRetry: false, env: { GEMINI_CLI_HOME: home, HOME: '/nowhere' } });
    expect(seen.env.GEMINI_CLI_HOME).not.toBe(home);
    expect(seen.home?.entries?.map((entry) => entry.name)).toEqual(['oauth_creds.json', 'settings.json', 'tmp']);
    expect(JSON.parse(seen.home?.entries?.find((entry) => entry.name === 'settings.json')?.text ?? '') as unknown).toEqual({ general: { maxAttempts: 1 } });
  });

  it('settings that are not JSON: a setup failure before any process starts, and no overlay left', async () => {
    const home = makeHome({});
    writeFileSync(join(home, '.gemini', 'settings.json'), '{ nope');
    const before = overlays();
    const messages = await lastValueFrom(
      runGemini({ prompt: 'p', agentRetry: false, executable: process.execPath, executableArgs: [fixture('gemini/tell-run.mjs')], env: { HOME: home } }).pipe(toArray()),
    );
    expect(messages).toHaveLength(1);
    expect(terminalOf(messages)).toMatchObject({ reason: 'setup', exitCode: null });
    expect(terminalOf(messages).message).toMatch(/^the Gemini CLI run could not be prepared: ESETUP: could not prepare Gemini CLI's settings without retries: .*JSON/);
    expect(terminalOf(messages).message).not.toContain('Install Gemini CLI');
    expect(overlays()).toEqual(before);
  });

  it('is cold: an overlay per subscription, made when it subscribes and removed when it is unsubscribed', async () => {
    const home = makeHome({});
    const reports: StopReport[] = [];
    let bothStopped!: () => void;
    const stopped = new Promise<void>((resolve) => (bothStopped = resolve));
    const before = overlays();
    const run$ = runGemini({
      prompt: 'p',
      agentRetry: false,
      executable: process.execPath,
      executableArgs: [fixture('forever.mjs')],
      env: { HOME: home },
      onStopped: (report) => {
        reports.push(report);
        if (reports.length === 2) bothStopped();
      },
    });
    expect(overlays()).toEqual(before);
    const subscriptions = [run$.subscribe(), run$.subscribe()];
    expect(overlays().filter((name) => !before.includes(name))).toHaveLength(2);
    for (const subscription of subscriptions) subscription.unsubscribe();
    await stopped;
    for (const report of reports) expect(report).toMatchObject({ requested: true, confirmed: true });
    expect(overlays().filter((name) => !before.includes(name))).toEqual([]);
  });
});

describe('runGemini: options and the process', () => {
  // Thrown by runGemini itself: no Observable is returned, so there is nothing to subscribe and nothing starts.
  it('throws TypeError at call time for invalid options, before any overlay is made', () => {
    const base = { prompt: 'x', executable: process.execPath, executableArgs: [fixture('forever.mjs')] };
    const bad: Partial<Record<keyof RunGeminiOptions, unknown>>[] = [
      { prompt: '' },
      { prompt: '  \n' },
      { model: '' },
      { approvalMode: 'always' },
      { session: 'continue' },
      { session: { resume: '' } },
      { session: { id: '' } },
      { skipTrust: 'yes' },
      { includeDirectories: '/tmp' },
      { agentRetry: 'no' },
      { extraArgs: '--debug' },
      { gracePeriodMs: -1 },
      { idleTimeoutMs: 0 },
      { interrupt: { signal: 'TERM' } },
    ];
    const before = overlays();
    for (const options of bad) {
      expect(() => runGemini({ ...base, ...options } as RunGeminiOptions)).toThrow(TypeError);
      expect(() => runGemini({ ...base, agentRetry: false, ...options } as RunGeminiOptions)).toThrow(TypeError);
    }
    expect(overlays()).toEqual(before);
  });
});
