import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lastValueFrom, of, toArray } from 'rxjs';
import { CliMessageSchema, isTerminal, piSession, runPi, stopAllRuns, type CliMessage, type SessionCommand, type StopReport, type TerminalFailed } from '../../lib/index.js';
import { hostTempPath } from '../../lib/process/host-temp.js';
import { answerOf, replay, transcriptFacts } from '../helpers/pi-transcripts.js';
import { fixture, isAlive } from '../helpers/processes.js';

afterEach(async () => {
  await stopAllRuns();
});

const transcripts = readdirSync(fileURLToPath(new URL('../fixtures/pi/', import.meta.url)))
  .filter((file) => file.endsWith('.jsonl'))
  .map((file) => file.slice(0, -'.jsonl'.length))
  .sort();

/** pi settings overlays of this host: they live in its temporary folder. */
const overlays = (): string[] => (existsSync(hostTempPath()) ? readdirSync(hostTempPath()).filter((name) => name.startsWith('agent-rx-pi-')) : []);

const types = (messages: readonly CliMessage[]) => messages.map((message) => message.type);
const usage = (input: number, output: number) => ({
  inputTokens: input,
  outputTokens: output,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  totalTokens: input + output,
  cost: 0,
});

describe('runPi on every recorded transcript', () => {
  it.each(transcripts)('%s: valid messages, the answer exactly once, thinking once, tools paired, one terminal last', async (name) => {
    const messages = await replay(name);
    const facts = transcriptFacts(name);
    for (const message of messages) expect(CliMessageSchema.safeParse(message).success).toBe(true);
    expect(answerOf(messages)).toBe(facts.answer);
    expect(messages.filter((message) => message.type === 'assistant.thought').map((message) => (message as { text: string }).text)).toEqual(
      facts.thinking.length === 0 ? [] : [facts.thinking.join('\n\n')],
    );
    const calls = messages.filter((message) => message.type === 'tool.call');
    const results = messages.filter((message) => message.type === 'tool.completed' || message.type === 'tool.failed');
    expect(new Set(calls.map((call) => call.toolCallId)).size).toBe(calls.length);
    for (const [id, result] of facts.toolResults) {
      expect(calls.filter((call) => call.toolCallId === id)).toHaveLength(1);
      expect(results.filter((done) => done.toolCallId === id)).toEqual([
        expect.objectContaining({ type: result.isError ? 'tool.failed' : 'tool.completed', name: result.name }),
      ]);
    }
    expect(messages.filter(isTerminal)).toHaveLength(1);
    expect(isTerminal(messages.at(-1) as CliMessage)).toBe(true);
    expect(messages[0]).toEqual({ type: 'session.started', pid: expect.any(Number), processGroup: expect.any(Number), sessionId: facts.sessionId });
  });
});

describe('runPi: exact streams', () => {
  it('text: streams the answer as deltas and completes with usage and session id', async () => {
    const messages = await replay('text');
    expect(types(messages)).toEqual(['session.started', ...Array<string>(18).fill('assistant'), 'terminal.completed']);
    expect(answerOf(messages)).toBe('Hello from the fake model. This answer is streamed in many small chunks so you can see deltas.');
    expect(messages.at(-1)).toEqual({
      type: 'terminal.completed',
      stopReason: 'end_turn',
      agentStopReason: 'stop',
      usage: usage(123, 18),
      sessionId: '01a22ae0-2cd5-7721-93a8-7b95f33b35b1',
    });
  });

  it('thinking_text: the thought comes once, whole, after the answer, at the end of the turn', async () => {
    const messages = await replay('thinking_text');
    expect(types(messages).slice(-3)).toEqual(['assistant', 'assistant.thought', 'terminal.completed']);
    expect(messages.at(-2)).toEqual({
      type: 'assistant.thought',
      text: 'The user wants a greeting. I will think briefly, step by step, then answer politely.',
    });
  });

  it('tool_call_then_text: text, the call, its output, its result, then the rest of the answer', async () => {
    const messages = await replay('tool_call_then_text');
    const tools = messages.filter((message) => message.type.startsWith('tool.'));
    expect(tools).toEqual([
      { type: 'tool.call', toolCallId: 'call_tool_call_1', name: 'bash', input: { command: 'echo hello' }, kind: 'execute', summary: 'echo hello' },
      { type: 'tool.update', toolCallId: 'call_tool_call_1', name: 'bash', output: 'hello\n' },
      { type: 'tool.completed', toolCallId: 'call_tool_call_1', name: 'bash', output: 'hello\n' },
    ]);
    const callAt = messages.findIndex((message) => message.type === 'tool.call');
    expect(answerOf(messages.slice(0, callAt))).toBe('Let me run a tool first.');
    expect(answerOf(messages.slice(callAt))).toBe('The tool returned: "hello\\n". Done.');
    expect(messages.at(-1)).toMatchObject({ type: 'terminal.completed', stopReason: 'end_turn', agentStopReason: 'stop', usage: usage(246, 21) });
  });

  it('http500: pi retries (agent.retry ×3), then an agent-error carrying pi\'s message, although pi exits 0', async () => {
    const messages = await replay('http500');
    expect(messages.filter((message) => message.type === 'agent.retry')).toEqual([
      { type: 'agent.retry', attempt: 1, maxAttempts: 3, delayMs: 2000, reason: '500 fake internal server error' },
      { type: 'agent.retry', attempt: 2, maxAttempts: 3, delayMs: 4000, reason: '500 fake internal server error' },
      { type: 'agent.retry', attempt: 3, maxAttempts: 3, delayMs: 8000, reason: '500 fake internal server error' },
    ]);
    expect(messages.at(-1)).toEqual({
      type: 'terminal.failed',
      reason: 'agent-error',
      message: 'pi reported an error: 500 fake internal server error',
      exitCode: 0,
      signal: null,
      stderr: '',
      stderrTruncatedBytes: 0,
      invalidOutputLines: [],
      invalidOutputLinesOmitted: 0,
      agentError: '500 fake internal server error',
      httpStatus: 500,
      sessionId: '01a22add-b817-70f0-8086-5995a1e85c23',
    });
  });

  it('http401 and http500_noretry: an agent-error without retries', async () => {
    for (const [name, error] of [
      ['http401', '401 fake invalid api key'],
      ['http500_noretry', '500 fake internal server error'],
    ] as const) {
      const messages = await replay(name);
      expect(types(messages)).toEqual(['session.started', 'terminal.failed']);
      expect(messages.at(-1)).toMatchObject({ reason: 'agent-error', agentError: error, message: expect.stringContaining(error) });
    }
  });

  it('no_prompt: only a session header, so the run is missing its terminal', async () => {
    expect((await replay('no_prompt')).at(-1)).toMatchObject({ type: 'terminal.failed', reason: 'missing-terminal', exitCode: 0 });
  });

  it('cancel_sigterm: pi killed mid-answer (exit 143) is an exit failure that keeps the text already streamed', async () => {
    const messages = await replay('cancel_sigterm', { exit: '143' });
    expect(answerOf(messages)).toBe('This stream will hang forever after a few chunks');
    expect(messages.at(-1)).toMatchObject({ type: 'terminal.failed', reason: 'exit', exitCode: 143, message: 'pi exited with code 143' });
  });

  it('bash_sleep_SIGTERM: a run killed by a signal while a tool runs is an exit failure', async () => {
    const messages = await replay('bash_sleep_SIGTERM', { exit: 'SIGTERM' });
    expect(messages.filter((message) => message.type === 'tool.call')).toHaveLength(1);
    expect(messages.at(-1)).toMatchObject({ reason: 'exit', exitCode: null, signal: 'SIGTERM', message: 'pi was killed by SIGTERM' });
  });

  it('session.resumed when continuing a session or naming one', async () => {
    for (const session of ['continue', { id: '01a22ae0' }] as const) {
      const messages = await replay('session_first', { session });
      expect(messages[0]).toEqual({ type: 'session.resumed', pid: expect.any(Number), processGroup: expect.any(Number), sessionId: '01a22ae0-6416-74dc-bdb8-64519e17d6b3' });
      expect(messages.at(-1)).toMatchObject({ sessionId: '01a22ae0-6416-74dc-bdb8-64519e17d6b3' });
    }
  });
});

describe('runPi and piSession: a pi that cannot be started', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agent-rx-executable-'));
  const notExecutable = join(dir, 'pi-replay.mjs');
  const missing = join(dir, 'no-such-pi');
  writeFileSync(notExecutable, readFileSync(fileURLToPath(new URL('../../examples/replay-agent/pi-replay.mjs', import.meta.url))));
  chmodSync(notExecutable, 0o644);
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  const runFailure = async (options: { readonly executable: string; readonly env?: Readonly<Record<string, string>> }): Promise<string> => {
    const messages = await lastValueFrom(runPi({ prompt: 'x', ...options }).pipe(toArray()));
    expect(messages).toEqual([expect.objectContaining({ type: 'terminal.failed', reason: 'spawn', exitCode: null })]);
    return (messages[0] as TerminalFailed).message;
  };
  const sessionFailure = async (options: { readonly executable: string; readonly env?: Readonly<Record<string, string>> }): Promise<string> => {
    const messages = await lastValueFrom(of<SessionCommand>({ type: 'prompt', text: 'x' }).pipe(piSession(options), toArray()));
    const terminal = messages.find(isTerminal);
    expect(terminal).toMatchObject({ type: 'terminal.failed', reason: 'spawn' });
    return (terminal as TerminalFailed).message;
  };

  it.each([
    ['a run', runFailure],
    ['a session', sessionFailure],
  ])('%s on a file that is not executable says so, and how to make it so; no install hint', async (_name, failure) => {
    expect(await failure({ executable: notExecutable })).toBe(`pi could not be started: ${notExecutable} is not executable (EACCES); \`chmod +x ${notExecutable}\` makes it so.`);
  });

  it.each([
    ['a run', runFailure],
    ['a session', sessionFailure],
  ])('%s on a path that does not exist says so; no install hint', async (_name, failure) => {
    expect(await failure({ executable: missing })).toBe(`pi could not be started: ${missing} does not exist (ENOENT).`);
  });

  it.each([
    ['a run', runFailure],
    ['a session', sessionFailure],
  ])('%s of pi looked up on a PATH without it says how to install it', async (_name, failure) => {
    expect(await failure({ executable: 'pi', env: { PATH: dir } })).toBe(
      'pi could not be started: spawn pi ENOENT. Install pi with `npm install -g @mariozechner/pi-coding-agent`, or pass `executable`.',
    );
  });
});

describe('runPi: failures in the stream', () => {
  it('a missing pi is terminal.failed with reason spawn and says how to install it', async () => {
    const messages = await replay('text', { executable: 'agent-rx-missing-pi', executableArgs: [] });
    expect(messages).toEqual([
      expect.objectContaining({
        type: 'terminal.failed',
        reason: 'spawn',
        exitCode: null,
        message: expect.stringContaining('npm install -g @mariozechner/pi-coding-agent'),
      }),
    ]);
  });

  it('a settings overlay that cannot be made is a setup failure, with its error code once and no install hint', async () => {
    const notAFolder = join(mkdtempSync(join(tmpdir(), 'agent-rx-setup-')), 'file');
    writeFileSync(notAFolder, 'not a folder');
    try {
      const [terminal] = await lastValueFrom(runPi({ prompt: 'x', agentRetry: false, env: { PI_CODING_AGENT_DIR: notAFolder } }).pipe(toArray()));
      expect(terminal).toMatchObject({ type: 'terminal.failed', reason: 'setup', exitCode: null });
      const message = (terminal as TerminalFailed).message;
      expect(message).toMatch(/^the pi run could not be prepared: .*ENOTDIR/);
      expect(message).not.toMatch(/ENOTDIR: ENOTDIR|Install pi/);
    } finally {
      rmSync(dirname(notAFolder), { recursive: true, force: true });
    }
  });

  it('a cwd that is not a folder is a spawn failure without the install hint, its error code once', async () => {
    const notAFolder = join(mkdtempSync(join(tmpdir(), 'agent-rx-cwd-')), 'file');
    writeFileSync(notAFolder, 'not a folder');
    try {
      const terminal = await lastValueFrom(runPi({ prompt: 'x', executable: process.execPath, executableArgs: [fixture('forever.mjs')], cwd: notAFolder }));
      expect(terminal).toMatchObject({ type: 'terminal.failed', reason: 'spawn', exitCode: null });
      const message = (terminal as TerminalFailed).message;
      expect(message).toMatch(/^pi could not be started: /);
      expect(message).not.toContain('Install pi');
      expect(message).not.toMatch(/(E[A-Z]+): \1:/);
    } finally {
      rmSync(dirname(notAFolder), { recursive: true, force: true });
    }
  });

  it('garbage on stdout is kept as bounded diagnostics and the answer is not lost', async () => {
    const messages = await replay('text', { executableArgs: [fixture('fake-pi.mjs'), fixture('pi/garbled.jsonl.txt')] });
    expect(answerOf(messages)).toBe('Hello world');
    expect(messages.at(-1)).toMatchObject({
      type: 'terminal.failed',
      reason: 'invalid-output',
      invalidOutputLines: [
        expect.objectContaining({ lineNumber: 3, reason: 'not-json', text: 'Warning: something printed to stdout' }),
        expect.objectContaining({ lineNumber: 5, reason: 'invalid-event', detail: expect.stringContaining('"message_end" event') }),
      ],
    });
  });

  it('a non-zero exit reports the stderr line that says what is wrong', async () => {
    const messages = await replay('no_prompt', { exit: '1', env: { FAKE_PI_STDERR: "No session found matching 'deadbeef'\n" } });
    expect(messages.at(-1)).toMatchObject({ reason: 'exit', exitCode: 1, message: "pi exited with code 1: No session found matching 'deadbeef'" });
    // pi 0.73.1 without an API key: what it says first, not the docs it points to last.
    const noKey = 'No API key found for the selected model.\n\nUse /login to log into a provider via OAuth or API key. See:\n  /opt/pi/docs/providers.md\n  /opt/pi/docs/models.md\n';
    const failed = await replay('no_prompt', { exit: '1', env: { FAKE_PI_STDERR: noKey } });
    expect(failed.at(-1)).toMatchObject({ reason: 'exit', exitCode: 1, stderr: noKey, message: 'pi exited with code 1: No API key found for the selected model.' });
  });
});

describe('runPi: options and the process', () => {
  it('passes the prompt on stdin, even one that starts with - or @', async () => {
    const messages = await replay('text', { prompt: '-rf @file --help', env: { FAKE_PI_ECHO_STDIN: '1' }, exit: '3' });
    expect(messages.at(-1)).toMatchObject({ reason: 'exit', stderr: 'stdin:-rf @file --help' });
  });

  it('throws TypeError at call time for invalid options', () => {
    expect(() => runPi({ prompt: '' })).toThrow(TypeError);
    expect(() => runPi({ prompt: 'x', thinking: 'max' as 'high' })).toThrow(/thinking must be one of/);
    expect(() => runPi({ prompt: 'x', session: 'latest' as 'new' })).toThrow(TypeError);
    expect(() => runPi({ prompt: 'x', tools: 'bash' as unknown as string[] })).toThrow(TypeError);
    expect(() => runPi({ prompt: 'x', gracePeriodMs: -5 })).toThrow(TypeError);
  });

  it('checks every option at call time with agentRetry: false too, before any settings folder is made', () => {
    const before = overlays();
    expect(() => runPi({ prompt: 'x', agentRetry: false, gracePeriodMs: -1 })).toThrow(/gracePeriodMs/);
    expect(() => runPi({ prompt: 'x', agentRetry: false, idleTimeoutMs: 0 })).toThrow(/idleTimeoutMs/);
    expect(overlays()).toEqual(before);
  });

  it('makes the settings overlay of agentRetry: false inside the host\'s temporary folder and removes it on unsubscribe and on exit', async () => {
    const real = mkdtempSync(join(tmpdir(), 'agent-rx-real-'));
    try {
      const reports: Promise<StopReport>[] = [];
      const start = (script: string) =>
        new Promise<{ unsubscribe: () => void; messages: CliMessage[]; done: Promise<void> }>((resolve) => {
          const messages: CliMessage[] = [];
          let settle!: (report: StopReport) => void;
          reports.push(new Promise((done) => (settle = done)));
          let finish!: () => void;
          const done = new Promise<void>((ended) => (finish = ended));
          const subscription = runPi({
            prompt: 'x',
            agentRetry: false,
            executable: process.execPath,
            executableArgs: [fixture(script)],
            env: { PI_CODING_AGENT_DIR: real },
            onStopped: (report) => {
              settle(report);
            },
          }).subscribe({
            next: (message) => {
              messages.push(message);
            },
            complete: finish,
          });
          resolve({
            unsubscribe: () => {
              subscription.unsubscribe();
            },
            messages,
            done,
          });
        });
      const forever = await start('forever.mjs');
      const finite = await start('lines.mjs');
      expect(overlays().length).toBeGreaterThanOrEqual(1);
      await finite.done;
      forever.unsubscribe();
      await Promise.all(reports);
      expect(overlays()).toEqual([]);
    } finally {
      rmSync(real, { recursive: true, force: true });
    }
  });

  it('stopAllRuns() ends a run still listened to with terminal.failed (stopped), then completion', async () => {
    const messages: CliMessage[] = [];
    const completed = new Promise<void>((resolve) => {
      runPi({ prompt: 'x', executable: process.execPath, executableArgs: [fixture('forever.mjs')] }).subscribe({
        next: (message) => {
          messages.push(message);
        },
        complete: resolve,
      });
    });
    // At once: the process has just been spawned.
    await stopAllRuns();
    await completed;
    expect(messages.filter(isTerminal)).toEqual([expect.objectContaining({ type: 'terminal.failed', reason: 'stopped', message: 'the host stopped the pi run (stopAllRuns)' })]);
    expect(isTerminal(messages.at(-1) as CliMessage)).toBe(true);
  });

  it('timeoutMs and idleTimeoutMs end a run with terminal.failed (timeout) that names the limit', async () => {
    const run = (limits: { timeoutMs?: number; idleTimeoutMs?: number }) =>
      lastValueFrom(runPi({ prompt: 'x', executable: process.execPath, executableArgs: [fixture('ignore-signals.mjs')], gracePeriodMs: 100, ...limits }));
    expect(await run({ timeoutMs: 1000 })).toMatchObject({
      type: 'terminal.failed',
      reason: 'timeout',
      message: 'the pi run took longer than timeoutMs (1000 ms); it was stopped',
      timeout: { limit: 'run', ms: 1000 },
    });
    expect(await run({ idleTimeoutMs: 1000 })).toMatchObject({
      reason: 'timeout',
      message: 'pi printed nothing for idleTimeoutMs (1000 ms); it was stopped',
      timeout: { limit: 'idle', ms: 1000 },
    });
  });

  it('stops pi with SIGTERM on unsubscribe, and nothing is emitted after', async () => {
    const seen: CliMessage[] = [];
    const pid = await new Promise<number>((resolve) => {
      const subscription = runPi({
        prompt: 'x',
        executable: process.execPath,
        executableArgs: [fixture('forever.mjs')],
        onStopped: (report) => {
          resolve(report.pid ?? -1);
        },
      }).subscribe((message) => seen.push(message));
      setImmediate(() => {
        subscription.unsubscribe();
      });
    });
    expect(pid).toBeGreaterThan(0);
    expect(isAlive(pid)).toBe(false);
    expect(seen).toEqual([]);
  });
});
