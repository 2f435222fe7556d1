import { afterEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defer, EMPTY, finalize, from, fromEvent, NEVER, Subject, takeUntil, tap, throwError, type Observable } from 'rxjs';
import {
  collectRun,
  collectRunResult,
  retryAgentRun,
  runPi,
  RunFailedError,
  stopAllRuns,
  type CliMessage,
  type RunResult,
  type StopReport,
  type TerminalFailed,
} from '../../lib/index.js';
import { scheduler, terminalFailed } from '../helpers/items.js';
import { replayClaude } from '../helpers/claude-transcripts.js';
import { replayGemini } from '../helpers/gemini-transcripts.js';
import { replay as replayPi, transcriptFacts } from '../helpers/pi-transcripts.js';
import { fixture, isAlive } from '../helpers/processes.js';

afterEach(async () => {
  await stopAllRuns();
});

const usage = { inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0, totalTokens: 15 };
const rateLimited = terminalFailed({ message: 'pi reported an error: 429 rate limit exceeded', agentError: '429 rate limit exceeded', httpStatus: 429 });
const m = {
  s: { type: 'session.started', sessionId: 'S1' },
  z: { type: 'session.started', sessionId: 'S2' },
  a: { type: 'assistant', text: 'Hel' },
  b: { type: 'assistant', text: 'lo' },
  w: { type: 'assistant.withdrawn', text: 'lo' },
  h: { type: 'assistant.thought', text: 'Say hello.' },
  n: { type: 'agent.warning', message: 'unknown model metadata' },
  y: { type: 'agent.retry', attempt: 1, maxAttempts: 3, delayMs: 2000, reason: '500' },
  t: { type: 'tool.call', toolCallId: 'T1', name: 'bash', input: { command: 'ls' } },
  u: { type: 'tool.update', toolCallId: 'T1', name: 'bash', output: 'a' },
  v: { type: 'tool.update', toolCallId: 'T1', name: 'bash', output: 'a\nb' },
  d: { type: 'tool.completed', toolCallId: 'T1', name: 'bash', output: 'a\nb\n' },
  T: { type: 'tool.call', toolCallId: 'T2', name: 'read', input: { path: 'missing' } },
  F: { type: 'tool.failed', toolCallId: 'T2', name: 'read', output: 'ENOENT' },
  X: { type: 'tool.call', toolCallId: 'T3', name: 'bash', input: { command: 'sleep 60' } },
  r: { type: 'run.retrying', attempt: 2, delayMs: 0, failure: rateLimited },
  c: { type: 'terminal.completed', stopReason: 'end_turn', usage, sessionId: 'S1' },
  e: { type: 'terminal.completed', stopReason: 'end_turn' },
  f: rateLimited,
} satisfies Record<string, CliMessage>;

// A synchronous run of these messages.
const messagesOf = (...messages: CliMessage[]): Observable<CliMessage> => from(messages);

const completed = m.c as Extract<CliMessage, { type: 'terminal.completed' }>;

// A result with neutral defaults: what an empty, cut-off stream gives.
const result = (fields: Partial<Record<keyof RunResult, unknown>> = {}): RunResult =>
  ({
    status: 'incomplete',
    ok: false,
    terminal: undefined,
    text: '',
    finalText: '',
    thoughts: [],
    toolCalls: [],
    warnings: [],
    sessionId: undefined,
    usage: undefined,
    attempts: 1,
    previousAttempts: [],
    ...fields,
  }) as RunResult;

describe('collectRun', () => {
  it('folds a run into one result at its terminal message: text, thoughts, tools, warnings, usage, session id', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold<CliMessage>('-s-a-h-t-d-n-b-(c|)', m);
      expectObservable(source.pipe(collectRun())).toBe('---------------(r|)', {
        r: result({
          status: 'completed',
          ok: true,
          terminal: m.c,
          text: 'Hel\n\nlo',
          finalText: 'lo',
          thoughts: ['Say hello.'],
          toolCalls: [{ toolCallId: 'T1', name: 'bash', input: { command: 'ls' }, status: 'completed', output: 'a\nb\n' }],
          warnings: ['unknown model metadata'],
          sessionId: 'S1',
          usage,
        }),
      });
      expectSubscriptions(source.subscriptions).toBe('^--------------!');
    });
  });

  it('carries a failed run in the result, without erroring: status failed, ok false, the failure as terminal', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<CliMessage>('-s-a-(f|)', m).pipe(collectRun())).toBe('-----(r|)', {
        r: result({ status: 'failed', ok: false, terminal: m.f, text: 'Hel', finalText: 'Hel', sessionId: 'S1' }),
      });
    });
  });

  it('emits at the terminal and unsubscribes from the source, reading nothing after it', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold<CliMessage>('-a-e-b-f-|', m);
      expectObservable(source.pipe(collectRun())).toBe('---(r|)', { r: result({ status: 'completed', ok: true, terminal: m.e, text: 'Hel', finalText: 'Hel' }) });
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });

  it('gives an incomplete result, with what came, when the source completes without a terminal (empty too)', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<CliMessage>('|').pipe(collectRun())).toBe('(r|)', { r: result() });
      expectObservable(cold<CliMessage>('-s-a-t-u-|', m).pipe(collectRun())).toBe('---------(r|)', {
        r: result({
          text: 'Hel',
          finalText: '',
          sessionId: 'S1',
          toolCalls: [{ toolCallId: 'T1', name: 'bash', input: { command: 'ls' }, status: 'running', output: 'a' }],
        }),
      });
    });
  });

  it('forwards the source\'s error and emits no result; stays silent on a source that never ends', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const boom = new Error('boom');
      expectObservable(cold<CliMessage>('-s-a-#', m, boom).pipe(collectRun())).toBe('-----#', undefined, boom);
      expectObservable(cold<CliMessage>('-s-a-', m).pipe(collectRun())).toBe('------');
    });
  });

  it('emits nothing when unsubscribed before the end, and unsubscribes from the source', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold<CliMessage>('-s-a-b-(c|)', m);
      expectObservable(source.pipe(collectRun()), '^--!').toBe('----');
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });

  it('folds each subscription\'s run on its own: two subscriptions share nothing', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const run = cold<CliMessage>('-s-a-t-u-b-(c|)', m).pipe(collectRun());
      const expected = {
        r: result({
          status: 'completed',
          ok: true,
          terminal: m.c,
          text: 'Hel\n\nlo',
          finalText: 'lo',
          sessionId: 'S1',
          usage,
          toolCalls: [{ toolCallId: 'T1', name: 'bash', input: { command: 'ls' }, status: 'running', output: 'a' }],
        }),
      };
      expectObservable(run).toBe('-----------(r|)', expected);
      // A second subscription, later: it starts from nothing, its text is not doubled.
      expectObservable(run, '---^').toBe('--------------(r|)', expected);
    });
  });

  it('takes back withdrawn text from the end of the answer', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const replaced: CliMessage = { type: 'assistant', text: 'p!' };
      expectObservable(cold<CliMessage>('-a-b-w-p-(e|)', { ...m, p: replaced }).pipe(collectRun())).toBe('---------(r|)', {
        r: result({ status: 'completed', ok: true, terminal: m.e, text: 'Help!', finalText: 'Help!' }),
      });
    });
  });

  it('keeps the model messages apart in text: a blank line where text follows a tool message that followed text; finalText is the last message', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const said = (text: string): CliMessage => ({ type: 'assistant', text });
      const values = { ...m, p: said('Let me look.'), q: said('Found'), r: said(' it.'), x: said(''), o: said('Then this.') };
      // Two tool messages in a row, and an empty delta after them, make one boundary; thinking makes none.
      expectObservable(cold<CliMessage>('-p-t-u-x-h-d-q-r-T-F-o-(e|)', values).pipe(collectRun())).toBe('-----------------------(R|)', {
        R: expect.objectContaining({ text: 'Let me look.\n\nFound it.\n\nThen this.', finalText: 'Then this.' }),
      });
      // A tool before any text opens no message: no leading separator; without tools, text is finalText.
      expectObservable(cold<CliMessage>('-t-d-q-r-(e|)', values).pipe(collectRun())).toBe('---------(R|)', {
        R: expect.objectContaining({ text: 'Found it.', finalText: 'Found it.' }),
      });
      // A run that ends after its tool: no trailing separator, and no final answer.
      expectObservable(cold<CliMessage>('-p-t-d-(e|)', values).pipe(collectRun())).toBe('-------(R|)', {
        R: expect.objectContaining({ text: 'Let me look.', finalText: '' }),
      });
      // An update or a result whose call was not seen separates as well.
      expectObservable(cold<CliMessage>('-p-u-q-(e|)', values).pipe(collectRun())).toBe('-------(R|)', {
        R: expect.objectContaining({ text: 'Let me look.\n\nFound', finalText: 'Found' }),
      });
    });
  });

  it('adds only the line breaks a blank line still needs between two messages', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const values = { ...m, n: { type: 'assistant', text: 'One\n' }, N: { type: 'assistant', text: 'One\n\n' }, l: { type: 'assistant', text: '\nTwo' }, w: { type: 'assistant', text: 'Two' } } satisfies Record<string, CliMessage>;
      const texts = { a: 'One\n\nTwo', b: 'One\n\n\nTwo' };
      expectObservable(cold<CliMessage>('-n-t-w-(e|)', values).pipe(collectRun())).toBe('-------(R|)', { R: expect.objectContaining({ text: texts.a, finalText: 'Two' }) });
      expectObservable(cold<CliMessage>('-N-t-w-(e|)', values).pipe(collectRun())).toBe('-------(R|)', { R: expect.objectContaining({ text: texts.a }) });
      expectObservable(cold<CliMessage>('-n-t-l-(e|)', values).pipe(collectRun())).toBe('-------(R|)', { R: expect.objectContaining({ text: texts.a, finalText: '\nTwo' }) });
      // What the agent wrote stays as it is: only the separator is left out.
      expectObservable(cold<CliMessage>('-N-t-l-(e|)', values).pipe(collectRun())).toBe('-------(R|)', { R: expect.objectContaining({ text: texts.b }) });
    });
  });

  it('takes back withdrawn text across a message boundary, and puts the boundary back when the withdrawn messages come again', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const values = {
        ...m,
        A: { type: 'assistant', text: 'First.' },
        B: { type: 'assistant', text: 'Second.' },
        W: { type: 'assistant.withdrawn', text: 'Second.' },
        V: { type: 'assistant.withdrawn', text: ' Second.' },
        C: { type: 'assistant', text: 'Other.' },
        P: { type: 'assistant', text: ' More.' },
      } satisfies Record<string, CliMessage>;
      // The last message replaced: its new text is still that message.
      expectObservable(cold<CliMessage>('-A-t-B-W-C-(e|)', values).pipe(collectRun())).toBe('-----------(R|)', {
        R: expect.objectContaining({ text: 'First.\n\nOther.', finalText: 'Other.' }),
      });
      // The first message grew after the second began: withdrawn back to it, its new text, then the second again.
      expectObservable(cold<CliMessage>('-A-t-B-W-P-B-(e|)', values).pipe(collectRun())).toBe('-------------(R|)', {
        R: expect.objectContaining({ text: 'First. More.\n\nSecond.', finalText: 'Second.' }),
      });
      // The first message changed: the withdrawal reaches over the boundary into it ("." of "First."), then its new end, then the second again.
      const changed: Record<string, CliMessage> = { ...values, V: { type: 'assistant.withdrawn', text: '.Second.' }, P: { type: 'assistant', text: '!' } };
      expectObservable(cold<CliMessage>('-A-t-B-V-P-B-(e|)', changed).pipe(collectRun())).toBe('-------------(R|)', {
        R: expect.objectContaining({ text: 'First!\n\nSecond.', finalText: 'Second.' }),
      });
      // Everything withdrawn: nothing is left, not even a separator.
      const all: Record<string, CliMessage> = { ...values, W: { type: 'assistant.withdrawn', text: 'First.Second.' } };
      expectObservable(cold<CliMessage>('-A-t-B-W-(e|)', all).pipe(collectRun())).toBe('---------(R|)', { R: expect.objectContaining({ text: '', finalText: '' }) });
    });
  });

  it('starts again at a run.retrying boundary and keeps the failed attempt, with its failure, in previousAttempts', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold<CliMessage>('-s-a-h-t-n-r-z-b-(e|)', m);
      expectObservable(source.pipe(collectRun())).toBe('-----------------(R|)', {
        R: result({
          status: 'completed',
          ok: true,
          terminal: m.e,
          text: 'lo',
          finalText: 'lo',
          sessionId: 'S2',
          attempts: 2,
          previousAttempts: [
            {
              text: 'Hel',
              finalText: '',
              thoughts: ['Say hello.'],
              toolCalls: [{ toolCallId: 'T1', name: 'bash', input: { command: 'ls' }, status: 'running', output: undefined }],
              warnings: ['unknown model metadata'],
              sessionId: 'S1',
              failure: rateLimited,
            },
          ],
        }),
      });
    });
  });

  it('reads retryAgentRun\'s boundary: the answer is the last attempt\'s, each attempt counted', () => {
    const testScheduler = scheduler();
    testScheduler.run(({ cold, expectObservable }) => {
      let started = 0;
      const attempts = [cold<CliMessage>('-s-a-(f|)', m), cold<CliMessage>('-z-a-b-(c|)', m)];
      const run = defer(() => attempts[Math.min(started++, 1)] as Observable<CliMessage>);
      const collected = run.pipe(retryAgentRun({ delay: 10, scheduler: testScheduler }), collectRun());
      expectObservable(collected).toBe('22ms (R|)', {
        R: result({
          status: 'completed',
          ok: true,
          terminal: completed,
          text: 'Hello',
          finalText: 'Hello',
          sessionId: 'S1',
          usage,
          attempts: 2,
          previousAttempts: [{ text: 'Hel', finalText: 'Hel', thoughts: [], toolCalls: [], warnings: [], sessionId: 'S1', failure: rateLimited }],
        }),
      });
    });
  });

  it('lists tool calls in call order: the last update\'s output while running, the result\'s at the end, failures marked', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const toolCalls = (...calls: unknown[]) => result({ toolCalls: calls });
      const bash = { toolCallId: 'T1', name: 'bash', input: { command: 'ls' } };
      const read = { toolCallId: 'T2', name: 'read', input: { path: 'missing' } };
      expectObservable(cold<CliMessage>('-t-|', m).pipe(collectRun())).toBe('---(r|)', { r: toolCalls({ ...bash, status: 'running', output: undefined }) });
      expectObservable(cold<CliMessage>('-t-u-v-|', m).pipe(collectRun())).toBe('-------(r|)', { r: toolCalls({ ...bash, status: 'running', output: 'a\nb' }) });
      expectObservable(cold<CliMessage>('-t-T-u-F-d-v-X-|', m).pipe(collectRun())).toBe('---------------(r|)', {
        r: toolCalls(
          { ...bash, status: 'completed', output: 'a\nb\n' },
          { ...read, status: 'failed', output: 'ENOENT' },
          { toolCallId: 'T3', name: 'bash', input: { command: 'sleep 60' }, status: 'running', output: undefined },
        ),
      });
    });
  });

  it('lists a tool whose call it did not see, without input, and ignores what the agent retries within an attempt', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<CliMessage>('-y-u-d-|', m).pipe(collectRun())).toBe('-------(r|)', {
        r: result({ toolCalls: [{ toolCallId: 'T1', name: 'bash', input: undefined, status: 'completed', output: 'a\nb\n' }] }),
      });
    });
  });

  it('takes the session id from session.* messages, and the terminal\'s when it has one', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const resumed: CliMessage = { type: 'session.resumed', sessionId: 'R' };
      expectObservable(cold<CliMessage>('-s-x-(e|)', { ...m, x: resumed }).pipe(collectRun())).toBe('-----(r|)', {
        r: expect.objectContaining({ sessionId: 'R', usage: undefined }),
      });
      const other: CliMessage = { ...rateLimited, sessionId: 'S9' };
      expectObservable(cold<CliMessage>('-s-(x|)', { ...m, x: other }).pipe(collectRun())).toBe('---(r|)', {
        r: expect.objectContaining({ sessionId: 'S9', status: 'failed' }),
      });
    });
  });
});

describe('collectRunResult', () => {
  it('resolves with the result of a completed run', async () => {
    await expect(collectRunResult(messagesOf(m.s, m.a, m.b, m.c))).resolves.toEqual(
      result({ status: 'completed', ok: true, terminal: m.c, text: 'Hello', finalText: 'Hello', sessionId: 'S1', usage }),
    );
  });

  it('resolves with a failed run by default, and rejects with a RunFailedError carrying it with throwOnFailure', async () => {
    await expect(collectRunResult(messagesOf(m.a, m.f))).resolves.toMatchObject({ status: 'failed', ok: false, terminal: rateLimited, text: 'Hel' });

    const error = await collectRunResult(messagesOf(m.a, m.f), { throwOnFailure: true }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RunFailedError);
    expect(error).toMatchObject({
      name: 'RunFailedError',
      message: 'agent-rx: the run failed (agent-error): pi reported an error: 429 rate limit exceeded',
      terminal: rateLimited,
      result: { status: 'failed', text: 'Hel' },
    });
  });

  it('rejects a stream cut short with throwOnFailure, and resolves a completed run with it', async () => {
    const error = await collectRunResult(messagesOf(m.a), { throwOnFailure: true }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RunFailedError);
    expect(error).toMatchObject({ message: 'agent-rx: the run ended without a terminal message', terminal: undefined, result: { status: 'incomplete', text: 'Hel' } });
    const done = await collectRunResult(messagesOf(m.a, m.b, m.e), { throwOnFailure: true });
    expect(done.terminal.stopReason).toBe('end_turn');
  });

  it('resolves with an incomplete result for an empty run, and rejects with the source\'s error', async () => {
    await expect(collectRunResult(EMPTY)).resolves.toEqual(result());
    const boom = new Error('boom');
    await expect(collectRunResult(throwError(() => boom))).rejects.toBe(boom);
  });

  it('never subscribes when the signal is already aborted, and rejects with its reason', async () => {
    let subscribed = 0;
    const run = defer(() => {
      subscribed += 1;
      return messagesOf(m.e);
    });
    const error = await collectRunResult(run, { signal: AbortSignal.abort() }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: 'AbortError' });
    const reason = new Error('shutting down');
    await expect(collectRunResult(run, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(subscribed).toBe(0);
  });

  it('unsubscribes the run on abort and rejects with AbortError (or the reason given)', async () => {
    const messages = new Subject<CliMessage>();
    let unsubscribed = 0;
    const run = messages.pipe(finalize(() => (unsubscribed += 1)));
    const controller = new AbortController();
    const pending = collectRunResult(run, { signal: controller.signal });
    messages.next(m.a);
    expect(messages.observed).toBe(true);
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    expect(unsubscribed).toBe(1);
    expect(messages.observed).toBe(false);

    const other = new AbortController();
    const reason = new Error('user left');
    const second = collectRunResult(NEVER, { signal: other.signal });
    other.abort(reason);
    await expect(second).rejects.toBe(reason);
  });

  it('ends the run when the signal aborts while a synchronous source is being subscribed', async () => {
    const controller = new AbortController();
    let after = 0;
    const run = defer(() => {
      controller.abort();
      return messagesOf(m.a, m.e);
    }).pipe(tap(() => (after += 1)));
    await expect(collectRunResult(run, { signal: controller.signal })).rejects.toMatchObject({ name: 'AbortError' });
    expect(after).toBe(0);
  });

  it('lets the signal go once the promise settles, resolved or rejected: no listener is left on it', async () => {
    const listeners = new Set<unknown>();
    const signal = {
      aborted: false,
      reason: undefined,
      addEventListener: (_type: string, listener: unknown) => listeners.add(listener),
      removeEventListener: (_type: string, listener: unknown) => listeners.delete(listener),
    } as unknown as AbortSignal;
    const messages = new Subject<CliMessage>();
    const pending = collectRunResult(messages, { signal });
    expect(listeners.size).toBe(1);
    messages.next(m.e);
    await expect(pending).resolves.toMatchObject({ ok: true });
    expect(listeners.size).toBe(0);
    await expect(collectRunResult(throwError(() => new Error('x')), { signal })).rejects.toThrow('x');
    expect(listeners.size).toBe(0);
  });

  it.each([
    ['a run that is not an Observable', () => collectRunResult(Promise.resolve() as unknown as Observable<CliMessage>)],
    ['options that are not an object', () => collectRunResult(EMPTY, 'fast' as never)],
    ['a signal that is not an AbortSignal', () => collectRunResult(EMPTY, { signal: {} as AbortSignal })],
    ['a throwOnFailure that is not a boolean', () => collectRunResult(EMPTY, { throwOnFailure: 'yes' as unknown as boolean })],
  ])('throws a TypeError at call time for %s', (_name, call) => {
    expect(call).toThrow(TypeError);
  });
});

const REPLAY = fileURLToPath(new URL('../../examples/replay-agent/pi-replay.mjs', import.meta.url));
const replayOptions = (model: string, env: Record<string, string> = {}) => ({
  prompt: 'Scenario tool_call_then_text please',
  provider: 'fake',
  model,
  executable: process.execPath,
  executableArgs: [REPLAY],
  env: { PI_REPLAY_SPEED: '0', ...env },
});

describe('collectRun over real runs', () => {
  it('folds a recorded pi run, replayed by the replay agent through runPi, into its answer, tools and usage', async () => {
    const facts = transcriptFacts('tool_call_then_text');
    const outcome = await collectRunResult(runPi(replayOptions('tool_call_then_text')), { throwOnFailure: true });
    expect(outcome.text).toBe('Let me run a tool first.\n\nThe tool returned: "hello\\n". Done.');
    expect(outcome.finalText).toBe('The tool returned: "hello\\n". Done.');
    expect(outcome.sessionId).toBe(facts.sessionId);
    expect(outcome.toolCalls.map(({ toolCallId, name, status }) => ({ toolCallId, name, status }))).toEqual(
      [...facts.toolResults].map(([toolCallId, tool]) => ({ toolCallId, name: tool.name, status: tool.isError ? 'failed' : 'completed' })),
    );
    expect(outcome.toolCalls[0]).toMatchObject({ input: { command: 'echo hello' }, output: 'hello\n' });
    expect(outcome.usage?.totalTokens).toBeGreaterThan(0);
    expect(outcome.terminal.usage).toEqual(outcome.usage);
    expect(outcome.attempts).toBe(1);
  });

  it('gives a failed recorded run as a result with its failure, an http 500', async () => {
    const outcome = await collectRunResult(runPi(replayOptions('http500_noretry')));
    expect(outcome).toMatchObject({ status: 'failed', ok: false, terminal: { type: 'terminal.failed', reason: 'agent-error', httpStatus: 500 } });
  });

  it('keeps the 429 attempt in previousAttempts and answers with the retried run', async () => {
    const attemptsDir = mkdtempSync(join(tmpdir(), 'agent-rx-collect-'));
    try {
      const run = runPi({
        prompt: 'Say hello.',
        executable: process.execPath,
        executableArgs: [fixture('fake-pi-attempts.mjs'), fixture('retry/http429.jsonl'), fixture('pi/text.jsonl')],
        env: { FAKE_PI_ATTEMPTS_DIR: attemptsDir },
      });
      const outcome = await collectRunResult(run.pipe(retryAgentRun({ delay: 0 })), { throwOnFailure: true });
      expect(outcome.attempts).toBe(2);
      expect(outcome.previousAttempts).toHaveLength(1);
      expect((outcome.previousAttempts[0]?.failure as TerminalFailed).httpStatus).toBe(429);
      expect(outcome.text).toBe(transcriptFacts('text').answer);
    } finally {
      rmSync(attemptsDir, { recursive: true, force: true });
    }
  });

  it('stops the agent when the signal aborts mid-run, and rejects', async () => {
    const controller = new AbortController();
    let report!: (value: StopReport) => void;
    const stopped = new Promise<StopReport>((resolve) => {
      report = resolve;
    });
    const run = runPi({
      ...replayOptions('text', { PI_REPLAY_SPEED: '5', PI_REPLAY_STARTUP_MS: '0' }),
      onStopped: (value) => {
        report(value);
      },
    });
    // Aborted at the first streamed delta: the replay is slowed down so that it is still running then.
    const watched = run.pipe(
      tap((message) => {
        if (message.type === 'assistant') controller.abort();
      }),
    );
    await expect(collectRunResult(watched, { signal: controller.signal })).rejects.toMatchObject({ name: 'AbortError' });
    const stop = await stopped;
    expect(stop).toMatchObject({ requested: true, cause: 'unsubscribe', confirmed: true });
    expect(stop.pid).not.toBeNull();
    expect(isAlive(stop.pid ?? 0)).toBe(false);
  });

  it('keeps what a run cut short by takeUntil produced, as an incomplete result', async () => {
    const controller = new AbortController();
    const run = runPi(replayOptions('text', { PI_REPLAY_SPEED: '5', PI_REPLAY_STARTUP_MS: '0' }));
    // Cut at the second delta: takeUntil ends the stream before that delta reaches it.
    let deltas = 0;
    const watched = run.pipe(
      tap((message) => {
        if (message.type === 'assistant' && (deltas += 1) === 2) controller.abort();
      }),
      takeUntil(fromEvent(controller.signal, 'abort')),
    );
    const outcome = await collectRunResult(watched);
    expect(outcome).toMatchObject({ status: 'incomplete', ok: false, terminal: undefined });
    expect(outcome.text).toBe('Hello ');
    expect(transcriptFacts('text').answer.startsWith(outcome.text)).toBe(true);
  });
});

describe('collectRun over recorded runs with a tool call: each model message kept apart, the final answer on its own', () => {
  // Each recording replayed through its agent's source; the texts are the recorded ones.
  const fold = async (messages: Promise<CliMessage[]>) => {
    const { text, finalText, status } = await collectRunResult(from(await messages));
    return { text, finalText, status };
  };

  it('pi: text, bash, text', async () => {
    expect(await fold(replayPi('tool_call_then_text'))).toEqual({
      status: 'completed',
      text: 'Let me run a tool first.\n\nThe tool returned: "hello\\n". Done.',
      finalText: 'The tool returned: "hello\\n". Done.',
    });
  });

  it('Claude Code: text, Bash, text, streamed as deltas (tool-partial) or as whole blocks (tool)', async () => {
    const expected = { status: 'completed', text: 'I will run a command.\n\nThe command printed: hello', finalText: 'The command printed: hello' };
    expect(await fold(replayClaude('tool-partial'))).toEqual(expected);
    expect(await fold(replayClaude('tool'))).toEqual(expected);
  });

  it('Claude Code stopped at its turn limit (a failure): the text before the tool, and no final answer', async () => {
    expect(await fold(replayClaude('max-turns'))).toEqual({ status: 'failed', text: 'I will run a command.', finalText: '' });
  });

  it('Gemini CLI: text, run_shell_command, text', async () => {
    const output = '[{\\"output\\":\\"<untrusted_context>\\\\nOutput: hello\\\\nProcess Group PGID: 31468\\\\n</untrusted_context>\\"}]';
    expect(await fold(replayGemini('tool'))).toEqual({
      status: 'completed',
      text: `I will run \`echo hello\`.\n\nThe command ran. Tool output was: "${output}"`,
      finalText: `The command ran. Tool output was: "${output}"`,
    });
  });
});
