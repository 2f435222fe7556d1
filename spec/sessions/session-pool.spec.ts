import { afterEach, describe, expect, it } from '@jest/globals';
import { Observable, of, Subject, take, toArray, firstValueFrom, type OperatorFunction } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { AGENTS, createAgentPool, poolSessions, stopAllRuns, type SessionCommand, type SessionMessage, type SessionPool } from '../../lib/index.js';
import { SessionDriver } from '../conformance/session-driver.js';
import { fixtureSession } from '../helpers/fixture-session.js';
import { isAlive } from '../helpers/processes.js';
import { createProcessTag, describeProcesses } from '../helpers/tagged-processes.js';

// The pool on real child processes (the fixture agent announces itself with its pid as its
// session id, before any prompt), and its timing on virtual time with a session of the spec's own.

const TAG = createProcessTag('AGENT_RX_SESSION_POOL');
const pools: SessionPool[] = [];
const drivers: SessionDriver[] = [];

function pool(options: Parameters<typeof poolSessions>[1] = {}, gracePeriodMs?: number): SessionPool {
  const made = poolSessions(fixtureSession(() => undefined, { tag: TAG, ...(gracePeriodMs === undefined ? {} : { gracePeriodMs }) }), options);
  pools.push(made);
  return made;
}

function takeFrom(from: SessionPool): SessionDriver {
  const driver = new SessionDriver(() => from.session());
  drivers.push(driver);
  return driver;
}

/** The pids of the tagged agents, once `count` of them run. */
async function agents(count: number): Promise<number[]> {
  for (let waited = 0; waited < 15_000; waited += 25) {
    const pids = TAG.processes().map((entry) => entry.pid);
    if (pids.length === count) return pids.sort();
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`expected ${String(count)} agents, found ${describeProcesses(TAG.processes())}`);
}

const pidOf = (message: SessionMessage): number => Number((message as { sessionId: string }).sessionId.replace('fixture-', ''));

afterEach(async () => {
  for (const driver of drivers.splice(0)) driver.unsubscribe();
  await Promise.all(pools.splice(0).map((made) => made.close()));
  expect(describeProcesses(await TAG.waitUntilNone(10_000))).toBe('none');
});

describe('poolSessions on real processes', () => {
  it('starts size agents before anyone asks; a take gets one of them, its first message first, and a replacement starts', async () => {
    const sessions = pool({ size: 2 });
    const before = await agents(2);
    expect(sessions.waiting).toBe(2);

    const taken = takeFrom(sessions);
    const started = await taken.nextOf('session.started');
    expect(before).toContain(pidOf(started));
    taken.send({ type: 'prompt', text: 'echo:warm' });
    await taken.nextOf('turn.completed');
    expect(taken.answer(1)).toBe('warm|');
    // The replacement: three agents now, two of them waiting.
    const after = await agents(3);
    expect(after).toEqual(expect.arrayContaining(before));
    expect(sessions.waiting).toBe(2);

    // Its commands complete: that agent ends, the others stay.
    taken.end();
    const messages = await taken.done;
    expect(messages.at(-1)?.type).toBe('terminal.completed');
    expect(await agents(2)).not.toContain(pidOf(started));
  });

  it('two takes get two agents that share nothing; a take when none waits starts one', async () => {
    const sessions = pool({ size: 1 });
    await agents(1);
    const first = takeFrom(sessions);
    const second = takeFrom(sessions);
    const [one, two] = [pidOf(await first.nextOf('session.started')), pidOf(await second.nextOf('session.started'))];
    expect(one).not.toBe(two);
    first.send({ type: 'prompt', text: 'echo:one' });
    second.send({ type: 'prompt', text: 'echo:two' });
    await Promise.all([first.nextOf('turn.completed'), second.nextOf('turn.completed')]);
    expect([first.answer(1), second.answer(1)]).toEqual(['one|', 'two|']);
  });

  it('unsubscribing a taken session stops its agent only', async () => {
    const sessions = pool({ size: 1 });
    await agents(1);
    const taken = takeFrom(sessions);
    const pid = pidOf(await taken.nextOf('session.started'));
    taken.send({ type: 'prompt', text: 'hang' });
    await taken.nextOf('assistant');
    await agents(2);
    taken.unsubscribe();
    const left = await agents(1);
    expect(left).not.toContain(pid);
    expect(isAlive(pid)).toBe(false);
    expect(sessions.waiting).toBe(1);
  });

  it('close ends the waiting agents (their input closed) and settles; later takes start when taken and are not replaced', async () => {
    const sessions = pool({ size: 2 });
    const waiting = await agents(2);
    await sessions.close();
    for (const pid of waiting) expect(isAlive(pid)).toBe(false);
    expect(sessions.waiting).toBe(0);

    const late = takeFrom(sessions);
    await late.nextOf('session.started');
    late.send({ type: 'prompt', text: 'echo:late' });
    await late.nextOf('turn.completed');
    expect(await agents(1)).toHaveLength(1);
    expect(sessions.waiting).toBe(0);
  });

  it('a waiting agent that dies is not handed out, nor restarted before the next take', async () => {
    const sessions = pool({ size: 1 });
    const [dead] = await agents(1);
    process.kill(dead as number, 'SIGKILL');
    // The session ends once the process layer has seen the exit.
    for (let waited = 0; sessions.waiting > 0 && waited < 10_000; waited += 25) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(sessions.waiting).toBe(0);
    expect(TAG.processes()).toEqual([]);
    const taken = takeFrom(sessions);
    const pid = pidOf(await taken.nextOf('session.started'));
    expect(pid).not.toBe(dead);
    taken.send({ type: 'prompt', text: 'echo:alive' });
    await taken.nextOf('turn.completed');
    expect(taken.answer(1)).toBe('alive|');
  });

  it('a run of one prompt: of(command) through a taken session ends its agent after the answer', async () => {
    const sessions = pool({ size: 1 });
    await agents(1);
    const command: SessionCommand = { type: 'prompt', text: 'echo:once' };
    const messages = await firstValueFrom(of(command).pipe(sessions.session(), toArray()));
    expect(messages.filter((message) => message.type === 'assistant')).toEqual([{ type: 'assistant', text: 'once|' }]);
    expect(messages.at(-1)?.type).toBe('terminal.completed');
  });

  it('an early unsubscribe while the waiting messages are replayed stops that agent', async () => {
    const sessions = pool({ size: 1 });
    const [pid] = await agents(1);
    // session.started is waiting for the caller: take(1) leaves during the replay.
    await firstValueFrom(new Subject<SessionCommand>().pipe(sessions.session(), take(1)));
    await agents(1);
    for (let waited = 0; isAlive(pid as number) && waited < 10_000; waited += 25) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(isAlive(pid as number)).toBe(false);
  });

  it('waiting agents are runs like any other: stopAllRuns ends them', async () => {
    const sessions = pool({ size: 2 });
    await agents(2);
    await stopAllRuns();
    expect(TAG.processes()).toEqual([]);
    for (let waited = 0; sessions.waiting > 0 && waited < 10_000; waited += 25) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(sessions.waiting).toBe(0);
  });
});

describe('createAgentPool', () => {
  it('refuses session options that resume a conversation, and invalid options, naming them; starts nothing', () => {
    expect(() => createAgentPool({ agent: AGENTS.codex, options: { session: { resume: 'thread-1' } } })).toThrow(/cannot be pooled/);
    expect(() => createAgentPool({ agent: AGENTS.codex, options: { sandbox: 'everything' as 'read-only' } })).toThrow(/sandbox/);
    expect(() => createAgentPool({ agent: AGENTS.codex, size: -1 })).toThrow(/size/);
  });
});

/** A session of the spec's own: each subscription is numbered, says so, answers prompts, ends when its commands do. */
function countingSession(log: string[], now?: () => number): OperatorFunction<SessionCommand, SessionMessage> {
  let made = 0;
  return (commands) =>
    new Observable<SessionMessage>((subscriber) => {
      made += 1;
      const id = `s${String(made)}`;
      log.push(now === undefined ? `start ${id}` : `start ${id} at ${String(now())}`);
      subscriber.next({ type: 'session.started', sessionId: id });
      const input = commands.subscribe({
        next: (command) => {
          if (command.type === 'prompt') subscriber.next({ type: 'assistant', text: `${id}:${command.text}` });
        },
        error: (error: unknown) => {
          subscriber.error(error);
        },
        complete: () => {
          log.push(`end ${id}`);
          subscriber.next({ type: 'terminal.completed', sessionId: id, stopReason: 'end_turn' });
          subscriber.complete();
        },
      });
      return () => {
        input.unsubscribe();
        log.push(`stop ${id}`);
      };
    });
}

describe('poolSessions on virtual time', () => {
  it('idleMs ends a session nobody took, and starts none until the next take', () => {
    new TestScheduler((actual, expected) => {
      expect(actual).toEqual(expected);
    }).run(({ cold, expectObservable, flush }) => {
      const log: string[] = [];
      const sessions = poolSessions(countingSession(log), { size: 1, idleMs: 100 });
      flush();
      expect(log).toEqual(['start s1', 'end s1', 'stop s1']);
      expect(sessions.waiting).toBe(0);
      // The next take starts one when taken (s2) and a replacement after it (s3).
      expectObservable(cold<SessionCommand>('--a|', { a: { type: 'prompt', text: 'hi' } }).pipe(sessions.session())).toBe('100ms s-a(t|)', {
        s: { type: 'session.started', sessionId: 's2' },
        a: { type: 'assistant', text: 's2:hi' },
        t: { type: 'terminal.completed', sessionId: 's2', stopReason: 'end_turn' },
      });
    });
  });

  it('a replacement starts once the taken session answers, or 2 s after the take', () => {
    const testScheduler = new TestScheduler((actual, expected) => {
      expect(actual).toEqual(expected);
    });
    testScheduler.run(({ cold, expectObservable, flush }) => {
      const log: string[] = [];
      const sessions = poolSessions(countingSession(log, () => testScheduler.now()), { size: 1 });
      expectObservable(cold<SessionCommand>('50ms a', { a: { type: 'prompt', text: 'hi' } }).pipe(sessions.session())).toBe('s 49ms a', {
        s: { type: 'session.started', sessionId: 's1' },
        a: { type: 'assistant', text: 's1:hi' },
      });
      flush();
      expect(log).toEqual(['start s1 at 0', 'start s2 at 50']);
      expect(sessions.waiting).toBe(1);
      // s2 is taken and asked nothing: its replacement comes 2 s later.
      const silent = new Subject<SessionCommand>().pipe(sessions.session()).subscribe();
      flush();
      expect(log).toEqual(['start s1 at 0', 'start s2 at 50', 'start s3 at 2050']);
      silent.unsubscribe();
    });
  });

  it("the caller's command stream's error is the session's error; the pool goes on", () => {
    new TestScheduler((actual, expected) => {
      expect(actual).toEqual(expected);
    }).run(({ cold, expectObservable }) => {
      const log: string[] = [];
      const sessions = poolSessions(countingSession(log), { size: 1 });
      const failing = cold<SessionCommand>('--#', undefined, new Error('commands failed'));
      expectObservable(failing.pipe(sessions.session())).toBe('s-#', { s: { type: 'session.started', sessionId: 's1' } }, new Error('commands failed'));
      expectObservable(cold<SessionCommand>('----|').pipe(sessions.session())).toBe('s---(t|)', {
        s: { type: 'session.started', sessionId: 's2' },
        t: { type: 'terminal.completed', sessionId: 's2', stopReason: 'end_turn' },
      });
    });
  });

  it('size 0 keeps nothing: each take starts its own session', () => {
    const log: string[] = [];
    const sessions = poolSessions(countingSession(log), { size: 0 });
    expect(log).toEqual([]);
    const subscription = new Subject<SessionCommand>().pipe(sessions.session()).subscribe();
    subscription.unsubscribe();
    expect(log).toEqual(['start s1', 'stop s1']);
  });

  it('an agent that talks on while it waits is stopped and not handed out', () => {
    let stopped = 0;
    const chatty: OperatorFunction<SessionCommand, SessionMessage> = () =>
      new Observable<SessionMessage>((subscriber) => {
        for (let i = 0; i < 2000 && !subscriber.closed; i += 1) subscriber.next({ type: 'agent.warning', message: `warning ${String(i)}` });
        return () => {
          stopped += 1;
        };
      });
    const sessions = poolSessions(chatty, { size: 1 });
    expect(stopped).toBe(1);
    expect(sessions.waiting).toBe(0);
  });

  it('refuses a size or idleMs that is not one', () => {
    const session = countingSession([]);
    expect(() => poolSessions(session, { size: -1 })).toThrow(TypeError);
    expect(() => poolSessions(session, { size: 1.5 })).toThrow(TypeError);
    expect(() => poolSessions(session, { idleMs: 0 })).toThrow(/idleMs/);
  });
});
