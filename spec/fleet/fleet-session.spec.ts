import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { filter, firstValueFrom, lastValueFrom, ReplaySubject, Subject, take, timeout, toArray, type Observable } from 'rxjs';
import { checkSessionSpec, createRunDispatcher, SESSION_ENV, sessionKeys, type RunDispatcher, type SessionEntry } from '../../lib/fleet.js';
import { defineSessionScripts, type SessionRedis } from '../../lib/fleet/session-keys.js';
import { budget, type SessionCommand, type SessionMessage } from '../../lib/index.js';
import { traceSession } from '../../lib/otel.js';
import { memoryTracing, traceparentOf } from '../otel/helpers.js';
import { startFakeModelServer, scenarioMarker, type FakeModelServer } from '../conformance/fake-model-server.js';
import { createPiEnv, OPENAI_PROVIDER, type PiEnv } from '../conformance/pi-env.js';
import { claudeExecutable, createClaudeEnv, type ClaudeEnv } from '../conformance/claude-env.js';
import { isAlive } from '../helpers/processes.js';
import { startRedis, type RedisServer } from '../helpers/redis-server.js';
import { delay, startTaggedNode, type TaggedChild } from '../helpers/tagged-child.js';
import { WORKER_SCRIPT, type WorkerLine, workerLog } from './fleet-world.js';
import { execFile } from 'node:child_process';
import { parseChatArgs } from '../../lib/cli/chat-command.js';
import { ROOT } from '../helpers/tagged-child.js';
import { builtCli } from '../helpers/built-cli.js';

// Conversations on the fleet: sessions addressed by id whose agent (the real pi, against the fake
// model server's `recall` scenario, which answers with the user texts in its context) runs on one
// worker at a time, falls asleep when idle, and wakes on another worker with another home and
// working folder, after a worker's crash, and after a worker was frozen past its lease.

const PI = fileURLToPath(new URL('../../node_modules/.bin/pi', import.meta.url));
const TAG = 'AGENT_RX_FLEET_SESSION';

let server: FakeModelServer;
let redis: RedisServer;
const homes: PiEnv[] = [];
const claudeHomes: ClaudeEnv[] = [];
const workers: TaggedChild[] = [];
const dispatchers: RunDispatcher[] = [];

interface Worker {
  readonly name: string;
  readonly child: TaggedChild;
  says(match: (line: WorkerLine & Readonly<Record<string, unknown>>) => boolean, timeoutMs?: number): Promise<WorkerLine>;
}

/** A worker process with its own pi home and working folder. */
async function startWorker(name: string, settings: Readonly<Record<string, unknown>> = {}): Promise<Worker> {
  const env = await createPiEnv({ baseUrl: server.baseUrl });
  homes.push(env);
  const folder = join(env.root, 'a working folder of', name, 'somewhere else entirely');
  mkdirSync(folder, { recursive: true });
  const child = startTaggedNode([WORKER_SCRIPT], TAG, {
    FLEET_WORKER: JSON.stringify({
      url: redis.url,
      workerName: name,
      concurrency: 2,
      workFolder: folder,
      pi: { executable: PI, provider: OPENAI_PROVIDER, model: 'recall', env: env.env },
      ...settings,
    }),
  });
  workers.push(child);
  const log = workerLog(child, `worker ${name}`);
  await log.waitFor((line) => line.event === 'ready');
  return { name, child, says: (match, timeoutMs = 60_000) => log.waitFor(match as (line: WorkerLine) => boolean, timeoutMs) };
}

/** The pids of the agent processes of a session's activations on this machine (they carry SESSION_ENV). */
function sessionAgents(): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const environ = readFileSync(`/proc/${entry}/environ`, 'latin1');
      if (environ.includes(`${SESSION_ENV}=`) && environ.includes(`${TAG}=`) && isAlive(Number(entry))) found.push(Number(entry));
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

/** The live processes of one session's activations (their SESSION_ENV starts with its id). */
function agentsOf(sessionId: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const environ = readFileSync(`/proc/${entry}/environ`, 'latin1').split('\0');
      if (environ.some((variable) => variable.startsWith(`${TAG}=`)) && environ.some((variable) => variable.startsWith(`${SESSION_ENV}=${sessionId}/`)) && isAlive(Number(entry))) found.push(Number(entry));
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

/** The activations whose agents (and their tools) are alive now: their lease holders (`<worker>/<token>`). */
function liveActivations(): Set<string> {
  const holders = new Set<string>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const environ = readFileSync(`/proc/${entry}/environ`, 'latin1').split('\0');
      if (!environ.some((variable) => variable.startsWith(`${TAG}=`))) continue;
      const holder = environ.find((variable) => variable.startsWith(`${SESSION_ENV}=`));
      if (holder !== undefined && isAlive(Number(entry))) holders.add(holder);
    } catch {
      // gone, or not ours to read
    }
  }
  return holders;
}

async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`not within ${String(timeoutMs)} ms: ${what}`);
    await delay(50);
  }
}

/** A session's attachment driven by hand: commands in, messages recorded. */
class Attachment {
  readonly commands = new Subject<SessionCommand>();
  readonly messages = new ReplaySubject<SessionMessage>();
  readonly seen: SessionMessage[] = [];
  constructor(source: (commands: Observable<SessionCommand>) => Observable<SessionMessage>) {
    source(this.commands).subscribe({
      next: (message) => {
        this.seen.push(message);
        this.messages.next(message);
      },
      complete: () => {
        this.messages.complete();
      },
    });
  }
  next<T extends SessionMessage>(match: (message: SessionMessage) => message is T, timeoutMs = 90_000): Promise<T> {
    return firstValueFrom(this.messages.pipe(filter(match), take(1), timeout(timeoutMs)));
  }
  /** The answer of the turn a prompt starts: the text of its assistant messages once the turn ends. */
  async ask(text: string, timeoutMs = 90_000): Promise<{ readonly turn: number; readonly answer: string; readonly end: SessionMessage }> {
    const from = this.seen.length;
    const id = `c-${String(from)}-${text.slice(0, 12).replace(/\W/g, '')}`;
    this.commands.next({ type: 'prompt', text, id });
    const started = await this.next((message): message is Extract<SessionMessage, { type: 'turn.started' }> => message.type === 'turn.started' && message.commandId === id, timeoutMs);
    // After its start: turn numbers start again after Redis lost a session's state.
    const at = this.seen.indexOf(started);
    const end = await this.next(
      (message): message is Extract<SessionMessage, { type: 'turn.completed' | 'turn.failed' }> => (message.type === 'turn.completed' || message.type === 'turn.failed') && message.turn === started.turn && this.seen.indexOf(message) > at,
      timeoutMs,
    );
    const answer = this.seen
      .slice(from)
      .filter((message): message is Extract<SessionMessage, { type: 'assistant' }> => message.type === 'assistant')
      .map((message) => message.text)
      .join('');
    return { turn: started.turn, answer, end };
  }
}

const SPEC = checkSessionSpec({ agent: 'pi', idleMs: 1500 });
const isPassivated = (message: SessionMessage): message is Extract<SessionMessage, { type: 'session.passivated' }> => message.type === 'session.passivated';
const isResumed = (message: SessionMessage): message is Extract<SessionMessage, { type: 'session.resumed' }> => message.type === 'session.resumed';

beforeAll(async () => {
  server = await startFakeModelServer();
  redis = await startRedis();
}, 60_000);

afterEach(async () => {
  await Promise.all(dispatchers.splice(0).map((dispatcher) => dispatcher.close()));
  for (const worker of workers.splice(0)) worker.cleanUp();
  await until(() => sessionAgents().length === 0, 15_000, `agents left: ${sessionAgents().join(', ')}`);
  const client = redis.client();
  await client.flushall().catch(() => undefined);
  client.disconnect();
});

afterAll(async () => {
  await redis.stop();
  await server.close();
  for (const home of homes.splice(0)) await home.cleanup();
  for (const home of claudeHomes.splice(0)) await home.cleanup();
});

/** The variables that are set (JSON would drop the others anyway). */
function definedOnly(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

const dispatcher = (): RunDispatcher => {
  const made = createRunDispatcher({ connection: redis.url, lostAfterMs: 5000, blockMs: 100 });
  dispatchers.push(made);
  return made;
};

describe('a fleet session (real pi, the recall scenario)', () => {
  it('sleeps when idle (its agent gone), and wakes on another worker, with another home and folder, with the whole conversation', async () => {
    const first = await startWorker('session-a');
    const fleet = dispatcher();
    const chat = new Attachment(fleet.session('chat-move', SPEC));
    const one = await chat.ask('first question');
    expect(one).toMatchObject({ turn: 1, end: { type: 'turn.completed' } });
    expect(one.answer).toContain('User texts in context: 1');
    const passivated = await chat.next(isPassivated);
    expect(passivated).toMatchObject({ conversationId: 'chat-move', idleMs: 1500 });
    expect(passivated.snapshotBytes).toBeGreaterThan(0);
    await first.says((line) => line.event === 'session.deactivated' && line['why'] === 'slept');
    await until(() => sessionAgents().length === 0, 10_000, 'the sleeping session\u2019s agent is gone');

    // The worker that ran it goes away; another one, with another home and folder, takes the next command.
    first.child.cleanUp();
    const second = await startWorker('session-b');
    const two = await chat.ask('second question');
    expect(two.turn).toBe(2);
    expect(two.answer).toContain('User texts in context: 2 ("first question" | "second question")');
    const resumed = chat.seen.find(isResumed);
    expect(resumed?.resumeMs).toBeGreaterThan(0);
    await second.says((line) => line.event === 'session.activated');
    chat.commands.complete();
    const all = await lastValueFrom(chat.messages.pipe(toArray()));
    expect(all.at(-1)).toMatchObject({ type: 'terminal.completed' });
    expect(all.filter((message) => message.type === 'terminal.completed' || message.type === 'terminal.failed')).toHaveLength(1);
  }, 180_000);

  it("ends a turn whose worker was killed with turn.failed 'lost'; the next prompt wakes it on another worker from the last completed turn", async () => {
    const first = await startWorker('crash-a');
    const fleet = dispatcher();
    const chat = new Attachment(fleet.session('chat-crash', checkSessionSpec({ agent: 'pi', idleMs: 60_000 })));
    expect((await chat.ask('kept question')).answer).toContain('User texts in context: 1');
    chat.commands.next({ type: 'prompt', text: `${scenarioMarker('sleep_tool')}a long tool`, id: 'long' });
    await chat.next((message): message is SessionMessage => message.type === 'tool.call');
    // Taken by the activation as a follow-up: it would run after the turn.
    chat.commands.next({ type: 'follow-up', text: 'then this', id: 'queued' });
    await chat.next((message): message is SessionMessage => message.type === 'input.accepted' && message.commandId === 'queued');
    const [agent] = sessionAgents();
    first.child.child.kill('SIGKILL');
    const failed = await chat.next((message): message is Extract<SessionMessage, { type: 'turn.failed' }> => message.type === 'turn.failed', 30_000);
    expect(failed).toMatchObject({ turn: 2, reason: 'lost' });
    expect(await chat.next((message): message is SessionMessage => message.type === 'input.dropped' && message.commandId === 'queued')).toMatchObject({ kind: 'follow-up', reason: 'session-ended' });
    // The killed worker's agent is its own keeper's to end (not this test's): it goes with its worker.
    if (agent !== undefined) await until(() => !isAlive(agent), 20_000, `the killed worker's agent ${String(agent)} is gone`);

    await startWorker('crash-b');
    const three = await chat.ask('after the crash');
    expect(three.turn).toBe(3);
    expect(three.answer).toContain('User texts in context: 2 ("kept question" | "after the crash")');
  }, 180_000);

  it('a budget piped on the attachment aborts the running turn on its worker (turn.failed budget); the session goes on', async () => {
    await startWorker('budget-a');
    const fleet = dispatcher();
    const chat = new Attachment((commands) => commands.pipe(fleet.session('chat-budget', checkSessionSpec({ agent: 'pi', idleMs: 60_000 })), budget({ toolCalls: 0, per: 'turn' })));
    const stopped = await chat.ask(`${scenarioMarker('sleep_tool')}a long tool`);
    expect(stopped.end).toMatchObject({ type: 'turn.failed', turn: 1, reason: 'budget', budget: { limit: 'toolCalls', max: 0, used: 1, per: 'turn' } });
    expect((stopped.end as { message: string }).message).toMatch(/the turn's budget of 0 tool calls was spent \(1 tool call used\): the turn was aborted$/);
    // Aborted on the worker, well before the tool's 30 s: the next turn runs in the same conversation.
    const next = await chat.ask('and then');
    expect(next.end).toMatchObject({ type: 'turn.completed', turn: 2 });
    expect(next.answer).toContain('and then');
    chat.commands.complete();
    await lastValueFrom(chat.messages);
    expect(chat.seen.at(-1)?.type).toBe('terminal.completed');
  }, 180_000);

  it("a traced attachment's context reaches the session's agent on its worker (TRACEPARENT: the caller's session span)", async () => {
    await startWorker('trace-a');
    const fleet = dispatcher();
    const tracing = memoryTracing();
    const chat = new Attachment((commands) => commands.pipe(fleet.session('chat-trace', checkSessionSpec({ agent: 'pi', idleMs: 60_000 })), traceSession({ tracer: tracing.tracer, agent: 'pi' })));
    expect((await chat.ask('hello')).end).toMatchObject({ type: 'turn.completed' });
    const [agent] = agentsOf('chat-trace');
    if (agent === undefined) throw new Error('no agent of chat-trace');
    const traceparent = readFileSync(`/proc/${String(agent)}/environ`, 'latin1')
      .split('\0')
      .find((variable) => variable.startsWith('TRACEPARENT='));
    chat.commands.complete();
    await lastValueFrom(chat.messages);
    expect(traceparent).toBe(`TRACEPARENT=${traceparentOf(tracing.span('agent_rx.session pi'))}`);
  }, 180_000);

  it('a closing worker puts its idle session to sleep; the next command wakes it on another worker', async () => {
    const closing = await startWorker('drain-a', { drainMs: 30_000 });
    const fleet = dispatcher();
    const chat = new Attachment(fleet.session('chat-drain', checkSessionSpec({ agent: 'pi', idleMs: 60_000 })));
    expect((await chat.ask('before the drain')).answer).toContain('User texts in context: 1');
    const [agent] = sessionAgents();
    closing.child.child.kill('SIGTERM');
    expect(await chat.next(isPassivated, 30_000)).toMatchObject({ conversationId: 'chat-drain' });
    await closing.says((line) => line.event === 'session.deactivated' && line['why'] === 'drained');
    await closing.says((line) => line.event === 'closed');
    if (agent !== undefined) expect(isAlive(agent)).toBe(false);
    await startWorker('drain-b');
    const two = await chat.ask('after the drain');
    expect(two.turn).toBe(2);
    expect(two.answer).toContain('User texts in context: 2 ("before the drain" | "after the drain")');
  }, 180_000);

  it('a frozen worker whose lease ran out writes nothing more once thawed, and its agent goes', async () => {
    const frozen = await startWorker('frozen-a');
    const fleet = dispatcher();
    const chat = new Attachment(fleet.session('chat-frozen', checkSessionSpec({ agent: 'pi', idleMs: 60_000 })));
    expect((await chat.ask('before the freeze')).answer).toContain('User texts in context: 1');
    chat.commands.next({ type: 'prompt', text: `${scenarioMarker('sleep_tool')}a long tool`, id: 'long' });
    await chat.next((message): message is SessionMessage => message.type === 'tool.call');
    const agents = sessionAgents();
    expect(agents.length).toBeGreaterThan(0);
    process.kill(frozen.child.child.pid as number, 'SIGSTOP');
    try {
      const failed = await chat.next((message): message is Extract<SessionMessage, { type: 'turn.failed' }> => message.type === 'turn.failed', 30_000);
      expect(failed).toMatchObject({ turn: 2, reason: 'lost' });
      await startWorker('frozen-b');
      const three = await chat.ask('after the freeze');
      expect(three.answer).toContain('User texts in context: 2 ("before the freeze" | "after the freeze")');
    } finally {
      process.kill(frozen.child.child.pid as number, 'SIGCONT');
    }
    const logLength = async (): Promise<number> => {
      const client = redis.client();
      try {
        return await client.xlen(sessionKeys('agentrx', 'chat-frozen').log);
      } finally {
        client.disconnect();
      }
    };
    const before = await logLength();
    // Thawed: its lease is gone; it stops its agent and writes nothing.
    await frozen.says((line) => line.event === 'session.deactivated' && (line['why'] === 'unreachable' || line['why'] === 'fenced'), 30_000);
    for (const pid of agents) await until(() => !isAlive(pid), 20_000, `the frozen worker's agent ${String(pid)} is gone`);
    await delay(1000);
    expect(await logLength()).toBe(before);
    const entries: SessionEntry[] = await lastValueFrom(fleet.followSession('chat-frozen').pipe(take(before), toArray()));
    // The turn the frozen worker ran ended once, as lost: nothing of it after.
    expect(entries.filter((entry) => entry.message.type === 'turn.completed' && entry.message.turn === 2)).toEqual([]);
    expect(entries.filter((entry) => entry.message.type === 'turn.failed' && entry.message.turn === 2)).toHaveLength(1);
  }, 180_000);

  it('two sessions on one worker: the one that falls asleep leaves the other’s agent, mid-turn, alone (their first activations have the same token)', async () => {
    const worker = await startWorker('shared');
    const fleet = dispatcher();
    const sleeper = new Attachment(fleet.session('chat-sleeper', checkSessionSpec({ agent: 'pi', idleMs: 1500 })));
    const busy = new Attachment(fleet.session('chat-busy', checkSessionSpec({ agent: 'pi', idleMs: 60_000 })));
    expect((await sleeper.ask('a short turn')).end.type).toBe('turn.completed');
    busy.commands.next({ type: 'prompt', text: `${scenarioMarker('sleep_tool')}a long tool`, id: 'long' });
    await busy.next((message): message is SessionMessage => message.type === 'tool.call');
    await until(() => agentsOf('chat-busy').length >= 2, 15_000, 'the busy session’s agent and its tool');
    const running = agentsOf('chat-busy');
    await worker.says((line) => line.event === 'session.deactivated' && line['sessionId'] === 'chat-sleeper' && line['why'] === 'slept');
    await sleeper.next(isPassivated);
    // The busy session's agent and its tool were there before the other one's sleep, and are there after it.
    expect(running.length).toBeGreaterThanOrEqual(2);
    expect(running.filter((pid) => !isAlive(pid))).toEqual([]);
    expect(agentsOf('chat-sleeper')).toEqual([]);
    busy.commands.next({ type: 'abort' });
    const ended = await busy.next((message): message is Extract<SessionMessage, { type: 'turn.failed' }> => message.type === 'turn.failed');
    expect(ended).toMatchObject({ turn: 1, reason: 'aborted' });
    expect(busy.seen.filter((message) => message.type === 'terminal.failed')).toEqual([]);
    expect((await busy.ask('still here')).answer).toContain('User texts in context: 2');
  }, 180_000);

  it('a worker that renews its leases every few milliseconds: each sleep is a sleep (a beat as the lease goes back is no fence)', async () => {
    const worker = await startWorker('beating', { heartbeatMs: 2 });
    const fleet = dispatcher();
    const chat = new Attachment(fleet.session('chat-beating', checkSessionSpec({ agent: 'pi', idleMs: 200 })));
    const rounds = 4;
    for (let round = 1; round <= rounds; round += 1) {
      expect((await chat.ask(`round ${String(round)}`)).answer).toContain(`User texts in context: ${String(round)}`);
      await until(() => chat.seen.filter(isPassivated).length === round, 30_000, `sleep ${String(round)}`);
      await until(() => workerLog(worker.child).lines().filter((line) => line.event === 'session.deactivated').length === round, 30_000, `deactivation ${String(round)}`);
    }
    const why = workerLog(worker.child)
      .lines()
      .filter((line) => line.event === 'session.deactivated')
      .map((line) => (line as WorkerLine & Readonly<Record<string, unknown>>)['why']);
    expect(why).toEqual(Array.from({ length: rounds }, () => 'slept'));
  }, 180_000);

  it('Claude Code: a session whose worker was killed wakes on another worker, with another home and folder, and its answer knows the earlier turn', async () => {
    const claudeWorker = async (name: string): Promise<Worker> => {
      const env = createClaudeEnv({ baseUrl: server.baseUrl });
      claudeHomes.push(env);
      return startWorker(name, { claude: { executable: claudeExecutable().command, model: 'recall', env: definedOnly(env.env) } });
    };
    const first = await claudeWorker('claude-a');
    const fleet = dispatcher();
    const chat = new Attachment(fleet.session('claude-chat', checkSessionSpec({ agent: 'claude', idleMs: 60_000 })));
    const one = await chat.ask('first question');
    expect(one).toMatchObject({ turn: 1, end: { type: 'turn.completed' } });
    expect(one.answer).toContain('User texts in context: 1');
    // A turn's end comes once its snapshot is saved: the snapshot is in Redis as the caller sees it,
    // and the worker dies at once.
    first.child.child.kill('SIGKILL');
    const client = redis.client();
    try {
      expect(await client.exists(sessionKeys('agentrx', 'claude-chat').snapshot)).toBe(1);
    } finally {
      client.disconnect();
    }
    await claudeWorker('claude-b');
    const two = await chat.ask('second question');
    expect(two.turn).toBe(2);
    expect(two.answer).toContain('User texts in context: 2 ("first question" | "second question")');
    expect(chat.seen.filter(isResumed)).toHaveLength(1);
    chat.commands.complete();
    const all = await lastValueFrom(chat.messages.pipe(toArray()));
    expect(all.filter((message) => message.type === 'terminal.completed' || message.type === 'terminal.failed')).toEqual([all.at(-1)]);
  }, 180_000);

  it('Redis restarted without its data while a long turn runs: that turn ends lost, a warning says the conversation starts again, the next prompt is answered by an agent started once the old one was gone', async () => {
    await startWorker('epoch-a');
    const fleet = dispatcher();
    const chat = new Attachment(fleet.session('chat-epoch', checkSessionSpec({ agent: 'pi', idleMs: 60_000 })));
    expect((await chat.ask('before the restart')).answer).toContain('User texts in context: 1');
    chat.commands.next({ type: 'prompt', text: `${scenarioMarker('sleep_tool')}a long tool`, id: 'long' });
    await chat.next((message): message is SessionMessage => message.type === 'tool.call');
    const before = agentsOf('chat-epoch');
    expect(before.length).toBeGreaterThan(0);
    let most = 0;
    const sampler = setInterval(() => {
      most = Math.max(most, liveActivations().size);
    }, 50);
    await redis.kill();
    await delay(300);
    await redis.restart();
    const after = await chat.ask('after the restart').finally(() => {
      clearInterval(sampler);
    });
    // The new activation's agent started once the old one's was gone (a first token while Redis is young waits).
    expect(most).toBe(1);
    const lost = chat.seen.find((message) => message.type === 'turn.failed');
    expect(lost).toMatchObject({ turn: 2, reason: 'lost', message: expect.stringContaining('Redis lost the session chat-epoch') });
    expect(chat.seen.filter((message) => message.type === 'agent.warning')).toEqual([expect.objectContaining({ message: expect.stringContaining('its conversation starts again') })]);
    expect(chat.seen.indexOf(lost as SessionMessage)).toBeLessThan(chat.seen.findIndex((message) => message.type === 'turn.started' && message.commandId?.includes('afterthe') === true));
    // The conversation starts again: the answer knows only the prompt sent after the restart.
    expect(after.answer).toContain('User texts in context: 1 ("after the restart")');
    // The old activation found its lease gone and stopped its agent.
    await until(() => before.every((pid) => !isAlive(pid)), 30_000, 'the old activation’s agent gone');
    chat.commands.complete();
    const all = await lastValueFrom(chat.messages.pipe(toArray()));
    expect(all.filter((message) => message.type === 'terminal.completed' || message.type === 'terminal.failed')).toEqual([all.at(-1)]);
    expect(all.at(-1)).toMatchObject({ type: 'terminal.completed' });
  }, 180_000);

  it('a prompt sent while Redis is down goes once Redis is back (here without its data): answered once, in the conversation that starts again', async () => {
    await startWorker('down-a');
    const refused: Error[] = [];
    const fleet = createRunDispatcher({ connection: redis.url, lostAfterMs: 5000, blockMs: 100, onError: (error) => refused.push(error) });
    dispatchers.push(fleet);
    const chat = new Attachment(fleet.session('chat-down', checkSessionSpec({ agent: 'pi', idleMs: 60_000 })));
    expect((await chat.ask('before Redis went down')).answer).toContain('User texts in context: 1');
    await redis.kill();
    refused.length = 0;
    chat.commands.next({ type: 'prompt', text: 'while Redis is down', id: 'down' });
    // The client gives up on what it was asked while Redis is away (the prompt's send among it) after one reconnection attempt.
    await until(() => refused.some((error) => error.name === 'MaxRetriesPerRequestError'), 30_000, 'the first send refused');
    await redis.restart();
    const ended = await chat.next((message): message is Extract<SessionMessage, { type: 'turn.completed' | 'turn.failed' | 'input.dropped' }> =>
      (message.type === 'turn.completed' && chat.seen.some((seen) => seen.type === 'turn.started' && seen.commandId === 'down')) || (message.type === 'input.dropped' && message.commandId === 'down'),
    );
    expect(ended.type).toBe('turn.completed');
    const answer = chat.seen.slice(chat.seen.findIndex((message) => message.type === 'turn.started' && message.commandId === 'down')).filter((message): message is Extract<SessionMessage, { type: 'assistant' }> => message.type === 'assistant').map((message) => message.text).join('');
    expect(answer).toContain('User texts in context: 1 ("while Redis is down")');
    expect(chat.seen.filter((message) => message.type === 'agent.warning')).toEqual([expect.objectContaining({ message: expect.stringContaining('its conversation starts again') })]);
    chat.commands.complete();
    const all = await lastValueFrom(chat.messages.pipe(toArray(), timeout(60_000)));
    expect(answersOf(all, 'down')).toBe(1);
    expect(all.at(-1)).toMatchObject({ type: 'terminal.completed' });
  }, 180_000);

  it('a prompt sent while Redis stays away past lostAfterMs: the attachment ends lost, one terminal, last', async () => {
    const fleet = createRunDispatcher({ connection: redis.url, lostAfterMs: 2000, blockMs: 100 });
    dispatchers.push(fleet);
    const chat = new Attachment(fleet.session('chat-away', checkSessionSpec({ agent: 'pi', idleMs: 60_000 })));
    await redis.kill();
    chat.commands.next({ type: 'prompt', text: 'nobody takes this', id: 'away' });
    try {
      const all = await lastValueFrom(chat.messages.pipe(toArray(), timeout(30_000)));
      expect(all.filter((message) => message.type === 'terminal.completed' || message.type === 'terminal.failed')).toEqual([all.at(-1)]);
      expect(all.at(-1)).toMatchObject({ type: 'terminal.failed', reason: 'lost' });
    } finally {
      await redis.restart();
    }
  }, 60_000);

  it('sending a command again after a failed attempt appends it once: an attempt whose answer was lost may have appended it', async () => {
    const client = redis.client();
    defineSessionScripts(client);
    const keys = sessionKeys('agentrx-send', 'once');
    const send = (key: string, again: '1' | ''): Promise<string> => (client as unknown as SessionRedis).agentRxSessionSend(keys.commands, keys.epoch, JSON.stringify({ type: 'prompt', text: key, id: key }), key, again, 1000, 60, `epoch-of-${key}`);
    expect(await send('a', '')).toBe('epoch-of-a');
    expect(await send('a', '1')).toBe('epoch-of-a');
    expect(await send('b', '1')).toBe('epoch-of-a');
    // A first attempt never looks: a caller that sends the same command again means it.
    expect(await send('b', '')).toBe('epoch-of-a');
    const entries = (await client.xrange(keys.commands, '-', '+')) as [string, string[]][];
    expect(entries.map(([, fields]) => fields[fields.indexOf('k') + 1])).toEqual(['a', 'b', 'b']);
    client.disconnect();
  });

  it('a dispatcher with more than ten followers gives no listener-leak warning (in a process of its own: Node prints it on stderr)', async () => {
    const script = [
      `const { createRunDispatcher } = await import(${JSON.stringify(join(ROOT, 'lib/fleet.ts'))});`,
      `const fleet = createRunDispatcher({ connection: process.env.FLEET_URL, blockMs: 100 });`,
      `const followers = Array.from({ length: 12 }, (_, index) => fleet.followSession('many-' + index).subscribe());`,
      `await new Promise((resolve) => setTimeout(resolve, 300));`,
      `for (const follower of followers) follower.unsubscribe();`,
      `await fleet.close();`,
      `console.log('done');`,
    ].join('\n');
    const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) => {
      execFile(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, env: { ...process.env, FLEET_URL: redis.url } }, (error, out, err) => {
        if (error === null) resolve({ stdout: out, stderr: err });
        else reject(new Error(`${error.message}\n${err}`));
      });
    });
    expect(stdout.trim()).toBe('done');
    expect(stderr).not.toContain('MaxListenersExceededWarning');
  });

  it('agent-rx chat --fleet --session continues a conversation from another chat process: the second chat’s answer knows the first’s', async () => {
    await startWorker('chat-cli');
    const cliMain = await builtCli();
    const chat = (line: string): Promise<{ code: number | null; stdout: string; stderr: string }> =>
      new Promise((resolve) => {
        const child = execFile(process.execPath, [cliMain, 'chat', '--fleet', redis.url, '--session', 'cli-chat', '--no-color'], { cwd: ROOT, env: { ...process.env, NO_COLOR: '1' } }, (error, stdout, stderr) => {
          resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr });
        });
        child.stdin?.end(`${line}\n`);
      });
    const first = await chat('first from the terminal');
    expect(first).toMatchObject({ code: 0 });
    expect(first.stdout).toContain('User texts in context: 1');
    const second = await chat('second from the terminal');
    expect(second).toMatchObject({ code: 0 });
    expect(second.stdout).toContain('User texts in context: 2 ("first from the terminal" | "second from the terminal")');
  }, 180_000);

  it('refuses at call time a fleet session of an agent whose sessions cannot resume in a new process (Gemini CLI), through its definition', () => {
    expect(() => checkSessionSpec({ agent: 'gemini' })).toThrow(new TypeError('agent-rx: not a session spec: Gemini CLI sessions cannot resume a conversation in a new process, which a fleet session needs'));
    const fleet = dispatcher();
    expect(() => fleet.session('gemini-chat', { agent: 'gemini' })).toThrow(TypeError);
    for (const agent of ['pi', 'claude', 'codex', 'qwen'] as const) expect(checkSessionSpec({ agent })).toEqual({ agent });
  });

  it('chat refuses as usage errors --session without --fleet, --fleet without --session, and what is the worker’s to choose', () => {
    expect(parseChatArgs(['--session', 'x'])).toMatchObject({ kind: 'usage-error', message: expect.stringContaining('needs --fleet') });
    expect(parseChatArgs(['--fleet', 'redis://127.0.0.1:1'])).toMatchObject({ kind: 'usage-error', message: expect.stringContaining('needs --session') });
    expect(parseChatArgs(['--fleet', 'redis://127.0.0.1:1', '--session', 'x', '--cwd', '.'])).toMatchObject({ kind: 'usage-error', message: expect.stringContaining("--cwd cannot be given with --fleet") });
    expect(parseChatArgs(['--fleet', 'redis://127.0.0.1:1', '--session', 'x', '--approve', 'ask'])).toMatchObject({ kind: 'usage-error' });
    expect(parseChatArgs(['--fleet', 'redis://127.0.0.1:1', '--session', 'not an id'])).toMatchObject({ kind: 'usage-error', message: expect.stringContaining('session id') });
    expect(parseChatArgs(['--fleet', 'redis://127.0.0.1:1', '--session', 'chat-1', '--model', 'm'])).toMatchObject({ kind: 'chat', description: 'pi on the fleet, session chat-1' });
  });

  it('under random prompts, long turns, sleeps, worker kills and Redis restarts without their data: every command answered once, turns never overlap, at most one live agent at every sample, one terminal', async () => {
    let round = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom('prompt', 'long', 'sleep', 'kill', 'restart'), { minLength: 3, maxLength: 6 }), async (steps) => {
        round += 1;
        const live: Worker[] = [await startWorker(`prop-${String(round)}-0`), await startWorker(`prop-${String(round)}-1`)];
        const fleet = dispatcher();
        const chat = new Attachment(fleet.session(`prop-${String(round)}`, checkSessionSpec({ agent: 'pi', idleMs: 800 })));
        let most = 0;
        const sampler = setInterval(() => {
          most = Math.max(most, liveActivations().size);
        }, 50);
        const sent: string[] = [];
        const answeredOnce = (id: string): boolean => answersOf(chat.seen, id) > 0;
        try {
          for (const [index, step] of steps.entries()) {
            const id = `p${String(index)}`;
            if (step === 'prompt' || step === 'long') {
              sent.push(id);
              chat.commands.next({ type: 'prompt', text: step === 'long' ? `${scenarioMarker('sleep_tool')}step ${String(index)}` : `step ${String(index)}`, id });
              if (step === 'prompt') await until(() => answeredOnce(id), 90_000, `an answer to ${id}`);
              else await until(() => answeredOnce(id) || chat.seen.some((message) => message.type === 'tool.call'), 90_000, `the tool of ${id}`);
            } else if (step === 'sleep') await delay(2000);
            else if (step === 'kill') {
              const [victim] = live.splice(0, 1);
              victim?.child.child.kill('SIGKILL');
              live.push(await startWorker(`prop-${String(round)}-${String(index + 2)}`));
            } else {
              await redis.kill();
              await delay(300);
              await redis.restart();
            }
          }
          chat.commands.complete();
          const all = await lastValueFrom(chat.messages.pipe(toArray(), timeout(120_000)));
          const terminals = all.filter((message) => message.type === 'terminal.completed' || message.type === 'terminal.failed');
          expect(terminals).toHaveLength(1);
          expect(all.at(-1)).toBe(terminals[0]);
          for (const id of sent) expect([id, answersOf(all, id)]).toEqual([id, 1]);
          let open: number | null = null;
          for (const message of all) {
            if (message.type === 'turn.started') {
              expect(open).toBeNull();
              open = message.turn;
            } else if (message.type === 'turn.completed' || message.type === 'turn.failed') {
              expect(message.turn).toBe(open);
              open = null;
            }
          }
          expect(most).toBeLessThanOrEqual(1);
        } finally {
          clearInterval(sampler);
          for (const worker of live) worker.child.cleanUp();
        }
      }),
      { numRuns: 2, endOnFailure: true },
    );
  }, 900_000);
});

/** How many times a command was answered: dropped, or the turn it started ended (the next turn end after its start). */
function answersOf(messages: readonly SessionMessage[], id: string): number {
  let count = 0;
  let mine = false;
  for (const message of messages) {
    if (message.type === 'input.dropped' && message.commandId === id) count += 1;
    else if (message.type === 'turn.started') mine = message.commandId === id;
    else if ((message.type === 'turn.completed' || message.type === 'turn.failed') && mine) {
      count += 1;
      mine = false;
    }
  }
  return count;
}
