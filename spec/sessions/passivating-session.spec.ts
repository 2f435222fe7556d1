import { afterEach, describe, expect, it } from '@jest/globals';
import { map, tap, type OperatorFunction } from 'rxjs';
import { passivatingSession, type ConversationSnapshot, type ConversationStore, type PassivationSpec, type SessionCommand, type SessionMessage } from '../../lib/index.js';
import { SessionDriver, sessionShape } from '../conformance/session-driver.js';
import { fixtureSession } from '../helpers/fixture-session.js';
import { isAlive } from '../helpers/processes.js';
import { createProcessTag, describeProcesses } from '../helpers/tagged-processes.js';

// A session that sleeps when idle, on real child processes (the fixture agent, which announces
// `fixture-<pid>` as its session): its agent's state is the spec's own (a snapshot says how many
// turns it had), the store a map. What the agents' real files and resumes do is in the
// conformance specs (`conversation-suite.ts`).

const TAG = createProcessTag('AGENT_RX_PASSIVATING');
const drivers: SessionDriver[] = [];

afterEach(async () => {
  for (const driver of drivers.splice(0)) driver.unsubscribe();
  expect(describeProcesses(await TAG.waitUntilNone(10_000))).toBe('none');
});

/** A map as a store, whose saves and loads are counted, and whose next save can be made to fail. */
function memoryStore(): ConversationStore & { readonly saved: Map<string, ConversationSnapshot>; failSaves: boolean } {
  const saved = new Map<string, ConversationSnapshot>();
  const store = {
    saved,
    failSaves: false,
    load: (id: string) => Promise.resolve(saved.get(id)),
    save: (id: string, snapshot: ConversationSnapshot) => {
      if (store.failSaves) return Promise.reject(new Error('the disk is full'));
      saved.set(id, snapshot);
      return Promise.resolve();
    },
  };
  return store;
}

/** The fixture agent as each activation's session; one that resumes says `session.resumed` with the id it resumes. */
function spec(store: ConversationStore, more: Partial<PassivationSpec> = {}, restored: ConversationSnapshot[] = []): PassivationSpec {
  return {
    session: (resume): OperatorFunction<SessionCommand, SessionMessage> => (commands) =>
      commands.pipe(
        fixtureSession(() => undefined, { tag: TAG }),
        map((message) => (resume !== undefined && message.type === 'session.started' ? { type: 'session.resumed', sessionId: resume } : message)),
      ),
    take: (sessionId, turns) => Promise.resolve({ version: 1, agent: 'fixture', sessionId, cwd: '/work', takenAt: new Date().toISOString(), turns, files: [{ path: 'state', text: `turns ${String(turns)}` }] }),
    restore: (snapshot) => {
      restored.push(snapshot);
      return Promise.resolve();
    },
    store,
    conversationId: undefined,
    idleMs: 300,
    ...more,
  };
}

function drive(made: PassivationSpec): SessionDriver {
  const driver = new SessionDriver(() => passivatingSession(made));
  drivers.push(driver);
  return driver;
}

/** Resolves once `condition` holds (looked at every 20 ms); rejects after 20 s. */
async function until(condition: () => boolean): Promise<void> {
  const deadline = performance.now() + 20_000;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error('the condition never held');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const rootPid = (message: SessionMessage | undefined): number => Number((message as { sessionId: string }).sessionId.replace('fixture-', ''));

describe('passivatingSession on the fixture agent', () => {
  it('falls asleep all the same when its agent does not exit by itself (stopped after its grace period): a warning, then the sleep', async () => {
    const store = memoryStore();
    const stubborn: PassivationSpec = {
      ...spec(store),
      session: () => fixtureSession(() => undefined, { tag: TAG, env: { STUBBORN: '1' }, gracePeriodMs: 300 }),
    };
    const session = drive(stubborn);
    session.send({ type: 'prompt', text: 'echo:one' });
    const first = rootPid(await session.nextOf('session.started'));
    await session.nextOf('turn.completed');
    expect((await session.nextOf('agent.warning')).message).toContain('did not end by itself');
    await session.nextOf('session.passivated');
    expect(isAlive(first)).toBe(false);
    session.send({ type: 'prompt', text: 'echo:two' });
    expect(await session.nextOf('turn.completed')).toMatchObject({ turn: 2 });
  });

  it('sleeps after idleMs: the conversation saved, the process gone; the next prompt wakes a new process that resumes it, turns numbered on', async () => {
    const store = memoryStore();
    const restored: ConversationSnapshot[] = [];
    const session = drive(spec(store, {}, restored));
    session.send({ type: 'prompt', text: 'echo:one' });
    const started = await session.nextOf('session.started');
    const first = rootPid(started);
    expect(await session.nextOf('turn.completed')).toMatchObject({ turn: 1 });
    const passivated = await session.nextOf('session.passivated');
    expect(passivated).toEqual({ type: 'session.passivated', sessionId: started.sessionId, conversationId: started.sessionId, idleMs: 300, snapshotBytes: expect.any(Number) });
    expect(passivated.snapshotBytes).toBe(Buffer.byteLength(JSON.stringify(store.saved.get(started.sessionId))));
    expect(isAlive(first)).toBe(false);
    expect(TAG.processes()).toEqual([]);

    session.send({ type: 'prompt', text: 'echo:two', id: 'p2' });
    const resumed = await session.nextOf('session.resumed');
    expect(resumed).toEqual({ type: 'session.resumed', sessionId: started.sessionId, resumeMs: expect.any(Number) });
    expect(restored).toEqual([expect.objectContaining({ sessionId: started.sessionId, turns: 1 })]);
    expect(await session.nextOf('turn.completed')).toMatchObject({ turn: 2 });
    expect(session.answer(2)).toBe('two|');
    session.end();
    const messages = await session.done;
    // The fixture agent says its session once its first turn started; the rest is in order.
    expect(sessionShape(messages.filter((message) => message !== started && message !== resumed))).toEqual(
      sessionShape([
        { type: 'input.accepted', kind: 'prompt', as: 'turn', turn: 1, text: 'echo:one' },
        { type: 'turn.started', turn: 1, prompt: 'echo:one' },
        { type: 'assistant', text: 'one|' },
        { type: 'turn.completed', turn: 1, stopReason: 'end_turn' },
        passivated,
        { type: 'input.accepted', kind: 'prompt', as: 'turn', turn: 2, text: 'echo:two', commandId: 'p2' },
        { type: 'turn.started', turn: 2, prompt: 'echo:two', commandId: 'p2' },
        { type: 'assistant', text: 'two|' },
        { type: 'turn.completed', turn: 2, stopReason: 'end_turn' },
        { type: 'terminal.completed', stopReason: 'end_turn' },
      ]),
    );
    expect(messages.filter((message) => message.type.startsWith('terminal.'))).toHaveLength(1);
    expect(messages.at(-1)).toMatchObject({ type: 'terminal.completed', sessionId: started.sessionId });
    // Saved after each turn, and at the sleep: the last snapshot has both turns.
    expect(store.saved.get(started.sessionId)?.turns).toBe(2);
  });

  it('says a turn completed only once its snapshot is saved; a prompt sent meanwhile runs, its messages after that turn.completed', async () => {
    const store = memoryStore();
    // Saves wait until the test lets them through, one by one.
    const gates: (() => void)[] = [];
    const held: ConversationStore = {
      load: (id) => store.load(id),
      save: async (id, snapshot) => {
        await new Promise<void>((resolve) => gates.push(resolve));
        await store.save(id, snapshot);
      },
    };
    // What the process itself says, before the operator holds anything back.
    const raw: SessionMessage[] = [];
    const base = spec(held, { idleMs: Number.POSITIVE_INFINITY });
    const session = drive({ ...base, session: (resume) => (commands) => base.session(resume)(commands).pipe(tap((message) => raw.push(message))) });
    session.send({ type: 'prompt', text: 'echo:one' });
    const sessionId = (await session.nextOf('session.started')).sessionId;
    await until(() => gates.length === 1);
    // Turn 1's save waits: a prompt sent now runs to its end in the process; neither turn is said completed meanwhile.
    session.send({ type: 'prompt', text: 'echo:two' });
    await until(() => raw.some((message) => message.type === 'turn.completed' && message.turn === 2));
    expect(session.messages.filter((message) => message.type === 'turn.completed')).toEqual([]);
    expect(store.saved.size).toBe(0);
    gates.shift()?.();
    expect(await session.nextOf('turn.completed')).toMatchObject({ turn: 1 });
    expect(store.saved.get(sessionId)?.turns).toBe(1);
    await until(() => gates.length === 1);
    expect(session.messages.filter((message) => message.type === 'turn.completed')).toHaveLength(1);
    gates.shift()?.();
    expect(await session.nextOf('turn.completed')).toMatchObject({ turn: 2 });
    expect(store.saved.get(sessionId)?.turns).toBe(2);
    session.end();
    await until(() => gates.length === 1);
    gates.shift()?.();
    const messages = await session.done;
    expect(sessionShape(messages.filter((message) => message.type !== 'session.started'))).toEqual(
      sessionShape([
        { type: 'input.accepted', kind: 'prompt', as: 'turn', turn: 1, text: 'echo:one' },
        { type: 'turn.started', turn: 1, prompt: 'echo:one' },
        { type: 'assistant', text: 'one|' },
        { type: 'turn.completed', turn: 1, stopReason: 'end_turn' },
        { type: 'input.accepted', kind: 'prompt', as: 'turn', turn: 2, text: 'echo:two' },
        { type: 'turn.started', turn: 2, prompt: 'echo:two' },
        { type: 'assistant', text: 'two|' },
        { type: 'turn.completed', turn: 2, stopReason: 'end_turn' },
        { type: 'terminal.completed', stopReason: 'end_turn' },
      ]),
    );
  });

  it('answers an abort and a permission command while asleep without waking it; ending the commands then ends it with no process', async () => {
    const store = memoryStore();
    const session = drive(spec(store));
    session.send({ type: 'prompt', text: 'echo:one' });
    await session.nextOf('session.passivated');
    session.send({ type: 'abort', id: 'a' });
    session.send({ type: 'permission', requestId: 'r1', decision: 'allow' });
    expect(await session.nextOf('input.dropped')).toEqual({ type: 'input.dropped', kind: 'abort', reason: 'no-turn', message: 'no turn is running', commandId: 'a' });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(TAG.processes()).toEqual([]);
    session.end();
    const messages = await session.done;
    expect(messages.filter((message) => message.type === 'input.dropped')).toEqual([
      { type: 'input.dropped', kind: 'abort', reason: 'no-turn', message: 'no turn is running', commandId: 'a' },
      { type: 'input.dropped', kind: 'permission', reason: 'no-request', message: 'no permission request r1 is pending', requestId: 'r1' },
    ]);
    expect(messages.at(-1)).toMatchObject({ type: 'terminal.completed', stopReason: 'end_turn' });
    expect(messages.filter((message) => message.type === 'session.resumed')).toEqual([]);
  });

  it('does not sleep while a turn runs longer than idleMs; once an abort ends it (dropping the follow-up that waited), it sleeps', async () => {
    const session = drive(spec(memoryStore(), { idleMs: 150 }));
    session.send({ type: 'prompt', text: 'hang' });
    await session.nextOf('turn.started');
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(session.messages.filter((message) => message.type === 'session.passivated')).toEqual([]);
    session.send({ type: 'follow-up', text: 'echo:after' });
    session.send({ type: 'abort' });
    // The abort drops the follow-up; then the session is idle and sleeps.
    await session.nextOf('turn.failed');
    await session.nextOf('session.passivated');
    expect(session.messages.filter((message) => message.type === 'turn.started')).toHaveLength(1);
  });

  it('a command that comes while it falls asleep is kept and wakes it once asleep', async () => {
    const session = drive(spec(memoryStore(), { idleMs: 100 }));
    session.send({ type: 'prompt', text: 'echo:one' });
    await session.nextOf('turn.completed');
    // The process is ending now, or is about to: the command waits for the sleep, then wakes it.
    await new Promise((resolve) => setTimeout(resolve, 110));
    session.send({ type: 'prompt', text: 'echo:two' });
    expect(await session.nextOf('turn.completed', 15_000)).toMatchObject({ turn: 2 });
    expect(session.answer(2)).toBe('two|');
  });

  it('an abort that comes as it falls asleep is answered, and does not wake it', async () => {
    // Snapshots that take 400 ms: the sleep is under way from 100 ms to past 800 ms after the turn.
    const slow = spec(memoryStore(), { idleMs: 100 });
    const session = drive({ ...slow, take: async (sessionId, turns) => { await new Promise((resolve) => setTimeout(resolve, 400)); return slow.take(sessionId, turns); } });
    session.send({ type: 'prompt', text: 'echo:one' });
    await session.nextOf('turn.completed');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(session.messages.filter((message) => message.type === 'session.passivated')).toEqual([]);
    session.send({ type: 'abort', id: 'late' });
    const both = (): boolean => session.messages.some((message) => message.type === 'session.passivated') && session.messages.some((message) => message.type === 'input.dropped');
    await session.next(both);
    expect(session.messages.find((message) => message.type === 'input.dropped')).toMatchObject({ kind: 'abort', reason: 'no-turn', commandId: 'late' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(session.messages.filter((message) => message.type === 'session.resumed')).toEqual([]);
    expect(TAG.processes()).toEqual([]);
  });

  it('a conversation id whose snapshot is stored is resumed by the first activation, its turns numbered on from it', async () => {
    const store = memoryStore();
    await store.save('chat-7', { version: 1, agent: 'fixture', sessionId: 'earlier', cwd: '/work', takenAt: '', turns: 4, files: [{ path: 'state', text: '' }] });
    const restored: ConversationSnapshot[] = [];
    const session = drive(spec(store, { conversationId: 'chat-7', idleMs: Number.POSITIVE_INFINITY }, restored));
    session.send({ type: 'prompt', text: 'echo:five' });
    expect(await session.nextOf('session.resumed')).toEqual({ type: 'session.resumed', sessionId: 'earlier', resumeMs: expect.any(Number) });
    expect(await session.nextOf('turn.completed')).toMatchObject({ turn: 5 });
    expect(restored.map((snapshot) => snapshot.sessionId)).toEqual(['earlier']);
    session.end();
    expect((await session.done).at(-1)).toMatchObject({ type: 'terminal.completed', sessionId: 'earlier' });
    expect(store.saved.get('chat-7')?.turns).toBe(5);
  });

  it('a save that fails when it falls asleep ends the session terminal.failed (setup), with no process left', async () => {
    const store = memoryStore();
    const session = drive(spec(store));
    session.send({ type: 'prompt', text: 'echo:one' });
    await session.nextOf('turn.completed');
    store.failSaves = true;
    const messages = await session.done;
    expect(messages.at(-1)).toMatchObject({ type: 'terminal.failed', reason: 'setup', message: 'the conversation could not be saved: the disk is full' });
    expect(messages.filter((message) => message.type === 'session.passivated')).toEqual([]);
    expect(TAG.processes()).toEqual([]);
  });

  it('a save that fails while the session goes on, or as it ends, is an agent.warning: the session and its terminal stay as they were', async () => {
    const store = memoryStore();
    store.failSaves = true;
    const session = drive(spec(store, { idleMs: Number.POSITIVE_INFINITY }));
    session.send({ type: 'prompt', text: 'echo:one' });
    expect(await session.nextOf('agent.warning')).toEqual({ type: 'agent.warning', message: 'the conversation could not be saved after turn 1: the disk is full' });
    session.end();
    const messages = await session.done;
    expect(messages.flatMap((message) => (message.type === 'agent.warning' ? [message.message] : []))).toEqual([
      'the conversation could not be saved after turn 1: the disk is full',
      'the conversation could not be saved at its end: the disk is full',
    ]);
    expect(messages.at(-1)).toMatchObject({ type: 'terminal.completed', stopReason: 'end_turn' });
  });

  it('a store that cannot be read ends the session terminal.failed (setup) before any process starts', async () => {
    const store: ConversationStore = { load: () => Promise.reject(new Error('no such bucket')), save: () => Promise.resolve() };
    const session = drive(spec(store, { conversationId: 'chat-1' }));
    session.send({ type: 'prompt', text: 'echo:one' });
    const messages = await session.done;
    expect(messages).toEqual([expect.objectContaining({ type: 'terminal.failed', reason: 'setup', message: 'the stored conversation could not be read: no such bucket' })]);
  });

  it('unsubscribing while awake stops the process; while asleep there is none to stop', async () => {
    const awake = drive(spec(memoryStore(), { idleMs: 60_000 }));
    awake.send({ type: 'prompt', text: 'hang' });
    await awake.next((message) => message.type === 'session.started' && awake.messages.some((earlier) => earlier.type === 'turn.started'));
    const pid = rootPid(awake.messages.find((message) => message.type === 'session.started'));
    awake.unsubscribe();
    expect(describeProcesses(await TAG.waitUntilNone(10_000))).toBe('none');
    expect(isAlive(pid)).toBe(false);

    const asleep = drive(spec(memoryStore()));
    asleep.send({ type: 'prompt', text: 'echo:one' });
    await asleep.nextOf('session.passivated');
    const count = asleep.messages.length;
    asleep.unsubscribe();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(asleep.messages).toHaveLength(count);
  });
});
