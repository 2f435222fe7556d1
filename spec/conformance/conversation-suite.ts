import { afterAll, afterEach, beforeAll, expect, it } from '@jest/globals';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OperatorFunction } from 'rxjs';
import { folderStore, type ConversationOptions, type ConversationStore, type SessionCommand, type SessionMessage } from '../../lib/index.js';
import { isAlive } from '../helpers/processes.js';
import { describeProcesses, type ProcessTag } from '../helpers/tagged-processes.js';
import { parentOf, SessionDriver } from './session-driver.js';

/** A place an agent's session runs in: its own home and working folder, as another host would have. */
export interface ConversationPlace {
  /** A session there, in the `recall` scenario (each answer lists the user texts in context), with these conversation options. */
  session(conversation: ConversationOptions): OperatorFunction<SessionCommand, SessionMessage>;
  /** The working folder (for the record: the move case uses a long one). */
  readonly cwd: string;
  cleanup(): Promise<void>;
}

/** One agent's sessions whose conversations outlive their processes. */
export interface ConversationAgent {
  readonly name: string;
  /** Carried by every process of the agent's sessions. */
  readonly tag: ProcessTag;
  /** The spec's usual home and working folder. */
  here(): ConversationPlace;
  /** A fresh home, under a working folder of another path (long enough to test how the agent names its folders). */
  elsewhere(): Promise<ConversationPlace>;
}

/** The session's root process: the tagged process whose parent is this test process. */
function rootOf(tag: ProcessTag): number | undefined {
  return tag.processes().find((entry) => parentOf(entry.pid) === process.pid)?.pid;
}

/**
 * Cases of sessions whose conversation outlives the agent's process, against the real CLI and the
 * fake model server's `recall` scenario: the answer after a sleep, and after a move to another
 * home and working folder, proves the earlier turns are in the agent's context.
 */
export function conversationConformance(agent: () => ConversationAgent): void {
  let storeFolder: string;
  let store: ConversationStore;
  const drivers: SessionDriver[] = [];
  const places: ConversationPlace[] = [];
  const keptFiles: string[] = [];
  // What the cases measured, said once at the end: snapshot sizes and resume times.
  const measured: string[] = [];

  beforeAll(async () => {
    storeFolder = await mkdtemp(join(tmpdir(), 'agent-rx-conversations-'));
    store = folderStore(storeFolder);
  });
  afterEach(async () => {
    for (const driver of drivers.splice(0)) driver.unsubscribe();
    expect(describeProcesses(await agent().tag.waitUntilNone(15_000))).toBe('none');
    for (const place of places.splice(0)) await place.cleanup();
    for (const file of keptFiles.splice(0)) await rm(file, { force: true });
  });
  afterAll(async () => {
    await rm(storeFolder, { recursive: true, force: true });
    if (measured.length > 0) process.stdout.write(`\n${agent().name} conversations: ${measured.join('; ')}\n`);
  });

  const drive = (session: OperatorFunction<SessionCommand, SessionMessage>): SessionDriver => {
    const driver = new SessionDriver(() => session);
    drivers.push(driver);
    return driver;
  };

  it('idleMs: after its turn the session sleeps (its agent gone by pid); the next prompt resumes the conversation in a new process, with the first turn in context (the default store)', async () => {
    const session = drive(agent().here().session({ idleMs: 1_000 }));
    session.send({ type: 'prompt', text: 'first question' });
    const started = await session.nextOf('session.started', 60_000);
    expect(await session.nextOf('turn.completed', 60_000)).toMatchObject({ turn: 1 });
    const first = rootOf(agent().tag);
    const passivated = await session.nextOf('session.passivated', 60_000);
    expect(passivated).toEqual({ type: 'session.passivated', sessionId: started.sessionId, conversationId: started.sessionId, idleMs: 1_000, snapshotBytes: expect.any(Number) });
    expect(passivated.snapshotBytes).toBeGreaterThan(0);
    // The default store: a folder in the system's temporary folder, a file per conversation id.
    const kept = join(tmpdir(), 'agent-rx-conversations', `${encodeURIComponent(started.sessionId)}.json`);
    keptFiles.push(kept);
    expect(JSON.parse(await readFile(kept, 'utf8'))).toMatchObject({ agent: expect.any(String), sessionId: started.sessionId, turns: 1 });
    expect(first === undefined || !isAlive(first)).toBe(true);
    expect(describeProcesses(agent().tag.processes())).toBe('none');

    session.send({ type: 'prompt', text: 'second question', id: 'q2' });
    const resumed = await session.nextOf('session.resumed', 60_000);
    expect(resumed).toMatchObject({ sessionId: started.sessionId, resumeMs: expect.any(Number) });
    measured.push(`slept with a snapshot of ${String(passivated.snapshotBytes)} bytes, woke in ${String(resumed.resumeMs)} ms`);
    expect(await session.nextOf('turn.completed', 60_000)).toMatchObject({ turn: 2 });
    expect(session.answer(2)).toBe('User texts in context: 2 ("first question" | "second question").');
    session.end();
    const messages = await session.done;
    expect(messages.filter((message) => message.type === 'session.started')).toEqual([started]);
    expect(messages.flatMap((message) => (message.type === 'turn.started' ? [message.turn] : []))).toEqual([1, 2]);
    expect(messages.filter((message) => message.type.startsWith('terminal.'))).toHaveLength(1);
    expect(messages.at(-1)).toMatchObject({ type: 'terminal.completed', sessionId: started.sessionId });
  });

  it('a conversation by its id: ended in one home and working folder, resumed from the store in a fresh home under another working folder, its turns in context and numbered on', async () => {
    const conversationId = `moved-${String(process.pid)}-${String(Date.now())}`;
    const before = drive(agent().here().session({ conversationId, store }));
    before.send({ type: 'prompt', text: 'remember the tulips' });
    expect(await before.nextOf('turn.completed', 60_000)).toMatchObject({ turn: 1 });
    before.end();
    const first = await before.done;
    expect(first.at(-1)?.type).toBe('terminal.completed');
    expect(describeProcesses(await agent().tag.waitUntilNone(15_000))).toBe('none');

    const place = await agent().elsewhere();
    places.push(place);
    const after = drive(place.session({ conversationId, store }));
    after.send({ type: 'prompt', text: 'what did I say?' });
    const resumed = await after.nextOf('session.resumed', 60_000);
    expect(resumed.sessionId).toBe((first[0] as { sessionId?: string }).sessionId);
    measured.push(`moved to a fresh home and resumed in ${String(resumed.resumeMs)} ms`);
    expect(await after.nextOf('turn.completed', 60_000)).toMatchObject({ turn: 2 });
    expect(after.answer(2)).toBe('User texts in context: 2 ("remember the tulips" | "what did I say?").');
    after.end();
    expect((await after.done).at(-1)).toMatchObject({ type: 'terminal.completed' });
  });
}
