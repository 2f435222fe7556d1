import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defer, lastValueFrom, of, Subject, takeUntil, toArray, type Observable } from 'rxjs';
import { CONTINUE_PROMPT, resumeOptions, retryResumingSession } from '../../examples/retry-resume.js';
import {
  activeRunCount,
  CliMessageSchema,
  isTerminal,
  retryAgentRun,
  runPi,
  stopAllRuns,
  type CliMessage,
  type RunPiOptions,
} from '../../lib/index.js';
import { terminalFailed } from '../helpers/items.js';
import { answerOf, transcriptFacts } from '../helpers/pi-transcripts.js';
import { fixture } from '../helpers/processes.js';

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'agent-rx-retry-'));
});

afterEach(async () => {
  await stopAllRuns();
  rmSync(dir, { recursive: true, force: true });
});

// runPi options for a fake pi whose Nth start plays the Nth transcript (the last one after that).
function fakePi(transcripts: readonly string[], extra: Partial<RunPiOptions> = {}): RunPiOptions {
  return {
    prompt: 'Say hello.',
    executable: process.execPath,
    executableArgs: [fixture('fake-pi-attempts.mjs'), ...transcripts.map((name) => fixture(name))],
    env: { FAKE_PI_ATTEMPTS_DIR: dir },
    ...extra,
  };
}

const starts = (): number => (existsSync(join(dir, 'count')) ? Number(readFileSync(join(dir, 'count'), 'utf8')) : 0);
const started = (attempt: number) => JSON.parse(readFileSync(join(dir, `attempt-${attempt}.json`), 'utf8')) as { args: string[]; stdin: string };
const all = (run: Observable<CliMessage>) => lastValueFrom(run.pipe(toArray()));
const types = (messages: readonly CliMessage[]) => messages.map((message) => message.type);

describe('retryAgentRun with a fake pi', () => {
  it('429, then 500, then success: two run.retrying messages, three processes, one terminal at the end', async () => {
    const run = runPi(fakePi(['retry/http429.jsonl', 'pi/http500_noretry.jsonl', 'pi/text.jsonl']));
    const messages = await all(run.pipe(retryAgentRun({ delay: 20 })));

    expect(starts()).toBe(3);
    for (const message of messages) expect(CliMessageSchema.safeParse(message).success).toBe(true);
    expect(types(messages).filter((type) => type !== 'assistant')).toEqual([
      'session.started',
      'run.retrying',
      'session.started',
      'run.retrying',
      'session.started',
      'terminal.completed',
    ]);
    expect(messages.filter((message) => message.type === 'run.retrying')).toEqual([
      {
        type: 'run.retrying',
        attempt: 2,
        delayMs: 20,
        failure: expect.objectContaining({ reason: 'agent-error', agentError: '429 fake rate limit exceeded', exitCode: 0 }),
      },
      {
        type: 'run.retrying',
        attempt: 3,
        delayMs: 20,
        failure: expect.objectContaining({ reason: 'agent-error', agentError: '500 fake internal server error', exitCode: 0 }),
      },
    ]);
    expect(messages.filter(isTerminal)).toEqual([expect.objectContaining({ type: 'terminal.completed', stopReason: 'end_turn', agentStopReason: 'stop' })]);
    expect(answerOf(messages)).toBe(transcriptFacts('text').answer);
    // A plain retry resubscribes the same cold run: every attempt is a new pi process with the same prompt.
    expect([1, 2, 3].map((attempt) => started(attempt).stdin)).toEqual(['Say hello.', 'Say hello.', 'Say hello.']);
  });

  it('401: the failure is forwarded as it came, after one attempt', async () => {
    const messages = await all(runPi(fakePi(['pi/http401.jsonl', 'pi/text.jsonl'])).pipe(retryAgentRun({ delay: 0 })));

    expect(starts()).toBe(1);
    expect(types(messages)).toEqual(['session.started', 'terminal.failed']);
    expect(messages.at(-1)).toMatchObject({ reason: 'agent-error', agentError: '401 fake invalid api key' });
  });

  it('forwards the last failure when every attempt fails', async () => {
    const messages = await all(runPi(fakePi(['pi/http500_noretry.jsonl'])).pipe(retryAgentRun({ maxAttempts: 2, delay: 0 })));

    expect(starts()).toBe(2);
    expect(types(messages)).toEqual(['session.started', 'run.retrying', 'session.started', 'terminal.failed']);
    expect(messages.at(-1)).toMatchObject({ reason: 'agent-error', agentError: '500 fake internal server error' });
  });

  it('starts no further process when unsubscribed during the wait', async () => {
    const seen: CliMessage[] = [];
    await new Promise<void>((resolve) => {
      const subscription = runPi(fakePi(['pi/http500_noretry.jsonl', 'pi/text.jsonl']))
        .pipe(retryAgentRun({ delay: 200 }))
        .subscribe((message) => {
          seen.push(message);
          if (message.type !== 'run.retrying') return;
          setImmediate(() => {
            subscription.unsubscribe();
            resolve();
          });
        });
    });
    // Proving that nothing starts takes waiting past the delay: twice the delay, and more.
    await new Promise((resolve) => setTimeout(resolve, 600));

    expect(starts()).toBe(1);
    expect(types(seen)).toEqual(['session.started', 'run.retrying']);
  });
});

describe('examples/retry-resume.ts', () => {
  it('resumes the failed attempt\'s session: the retry runs pi with --session <id> and the continue prompt', async () => {
    const base = fakePi(['pi/http500_noretry.jsonl', 'pi/text.jsonl'], { prompt: 'Fix the bug.' });
    const messages = await all(retryResumingSession((resume) => runPi(resumeOptions(base, resume)), { delay: 0 }));

    const failedSession = transcriptFacts('http500_noretry').sessionId as string;
    expect(types(messages).filter((type) => type !== 'assistant')).toEqual(['session.started', 'run.retrying', 'session.resumed', 'terminal.completed']);
    expect(started(1)).toEqual({ args: ['--mode', 'json'], stdin: 'Fix the bug.' });
    expect(started(2)).toEqual({ args: ['--mode', 'json', '--session', failedSession], stdin: CONTINUE_PROMPT });
  });

  it('starts over in a new session when the failed attempt left none to resume', async () => {
    const base = fakePi(['pi/no_prompt.jsonl', 'pi/text.jsonl']);
    const messages = await all(
      retryResumingSession((resume) => runPi(resumeOptions(base, resume)), { delay: 0, isRetryable: (failure) => failure.reason === 'missing-terminal' }),
    );

    expect(types(messages).filter((type) => type !== 'assistant')).toEqual(['session.started', 'run.retrying', 'session.started', 'terminal.completed']);
    expect(started(2)).toEqual({ args: ['--mode', 'json'], stdin: 'Say hello.' });
  });
});

describe('retryAgentRun and host shutdown', () => {
  it('takeUntil(shutdown$) during a backoff ends the wait: the stream completes and no attempt starts', async () => {
    const failure = terminalFailed({ message: 'pi reported an error: 429 slow down', agentError: '429 slow down' });
    let attempts = 0;
    const source = defer(() => {
      attempts += 1;
      return of(failure);
    });
    const shutdown$ = new Subject<void>();
    const seen: string[] = [];
    const done = new Promise<void>((resolve) => {
      source.pipe(retryAgentRun({ delay: 100 }), takeUntil(shutdown$)).subscribe({ next: (message) => seen.push(message.type), complete: resolve });
    });
    // A wait holds no process: the process layer does not count it.
    expect(activeRunCount()).toBe(0);
    shutdown$.next();
    await done;
    // Proving that nothing starts takes waiting past the delay.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(seen).toEqual(['run.retrying']);
    expect(attempts).toBe(1);
  });
});
