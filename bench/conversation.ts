import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Subject, type OperatorFunction } from 'rxjs';
import {
  AGENTS,
  claudeCodeSession,
  codexSession,
  folderStore,
  geminiSession,
  piSession,
  qwenSession,
  type ConversationOptions,
  type ConversationStore,
  type SessionCommand,
  type SessionMessage,
} from '../lib/index.js';
import { readProcessTable } from '../lib/process/process-table.js';
import { claudeExecutable, createClaudeEnv } from '../spec/conformance/claude-env.js';
import { createCodexEnv } from '../spec/conformance/codex-env.js';
import { startFakeModelServer, type FakeModelServer } from '../spec/conformance/fake-model-server.js';
import { createGeminiEnv, geminiCommand } from '../spec/conformance/gemini-env.js';
import { createPiEnv, OPENAI_PROVIDER } from '../spec/conformance/pi-env.js';
import { createQwenEnv, qwenCommand } from '../spec/conformance/qwen-env.js';
import { createProcessTag, type ProcessTag } from '../spec/helpers/tagged-processes.js';
import { benchFile, check, delay, ratios, summarize, type Summary } from './util.js';

/**
 * Conversations that outlive their process, on the real CLIs and the fake model server on
 * 127.0.0.1 (the `recall` scenario: each answer lists the user texts the agent sent, so a wake
 * that lost the conversation fails the bench). Per agent and repetition, two sessions with the
 * same options and store, one after the other:
 * - the baseline, a session without `idleMs` (it stays awake): `subscribe` + prompt → first text
 *   (a cold start of a new session), then the prompt of turn 2 → its first text (a later turn);
 * - a session with `idleMs`: turn 1, its sleep (the idle timer's end, `turn.completed` + `idleMs`,
 *   → `session.passivated`, with `snapshotBytes`), the prompt of turn 2 → `session.resumed`
 *   (`resumeMs`) → its first text (the wake), turn 3 at once in the same process, and its sleep
 *   (`snapshotBytes` after 3 turns).
 * And in one host process (a fresh Node process running this file): the resident memory of its
 * whole tree, the host and every process under it (the process table, then each one's
 * /proc/<pid>/status and smaps_rollup), with no session, with N pi sessions alive and idle after a
 * turn, and with N pi sessions asleep after a turn.
 */
export interface ConversationRow {
  readonly agent: string;
  /** `snapshotBytes` of `session.passivated` after turn 1. */
  readonly snapshotBytes1: Summary;
  /** The same after turn 3. */
  readonly snapshotBytes3: Summary;
  /** The idle timer's end (`turn.completed` + `idleMs`) → `session.passivated`, ms (both sleeps of a repetition). */
  readonly sleep: Summary;
  /** `session.resumed.resumeMs` of the wake (the command → the new process's resumed session), ms. */
  readonly resume: Summary;
  /** The wake: the prompt after the sleep → its first text, ms. */
  readonly wake: Summary;
  /** Baseline: a later turn of a session that stayed awake, the prompt → its first text, ms. */
  readonly awake: Summary;
  /** Baseline: a new session, `subscribe` + prompt → the first text, ms. */
  readonly cold: Summary;
  /** The wake over the later awake turn, repetition by repetition. */
  readonly wakeOverAwake: Summary;
  /** The wake over the cold start, repetition by repetition. */
  readonly wakeOverCold: Summary;
}

/** The tree of one host process: the host itself and every process under it, summed. */
export interface TreeMemory {
  readonly processes: number;
  /** The host's own VmRSS, MB. */
  readonly hostRssMB: number;
  /** VmRSS of every process under the host, summed, MB. */
  readonly agentsRssMB: number;
  /** VmRSS of the whole tree, summed (shared pages counted in each process), MB. */
  readonly treeRssMB: number;
  /** Pss of the whole tree (shared pages split between their processes), MB. */
  readonly treePssMB: number;
}

export interface MemoryRow {
  readonly state: 'empty' | 'alive' | 'asleep';
  readonly processes: Summary;
  readonly hostRssMB: Summary;
  readonly agentsRssMB: Summary;
  readonly treeRssMB: Summary;
  readonly treePssMB: Summary;
  /** (the tree − the empty host's tree, same repetition) / N, MB; not for `empty`. */
  readonly perSessionRssMB?: Summary;
  readonly perSessionPssMB?: Summary;
  /** The host's `go` → every session at rest (each turn completed; asleep: each passivated), ms. */
  readonly settleMs?: Summary;
}

export interface ConversationMemory {
  readonly agent: string;
  readonly sessions: number;
  readonly repetitions: number;
  readonly rows: readonly MemoryRow[];
  /** The whole tree, N sessions alive / N asleep (RSS, then Pss), repetition by repetition. */
  readonly aliveOverAsleepRss: Summary;
  readonly aliveOverAsleepPss: Summary;
}

export interface ConversationResult {
  readonly idleMs: number;
  readonly rows: readonly ConversationRow[];
  /** Agents left out: their sessions cannot sleep yet. */
  readonly skipped: readonly string[];
  /** The memory of N sessions in one host, or why it could not be measured. */
  readonly memory: ConversationMemory | { readonly error: string };
}

/** A place an agent's sessions run in: its home and working folder against the server. */
interface Place {
  session(conversation: ConversationOptions, tag: ProcessTag): OperatorFunction<SessionCommand, SessionMessage>;
  cleanup(): Promise<void>;
}

/**
 * The agents measured. One whose definition keeps no conversation (its sessions refuse `idleMs`:
 * Gemini CLI and Qwen Code for now) is skipped, and comes in here as soon as its definition says
 * where its CLI keeps a conversation.
 */
interface Agent {
  readonly name: string;
  /** Its definition: `conversation` says where its CLI keeps a conversation, when it does. */
  readonly definition: { readonly conversation?: unknown };
  place(server: FakeModelServer): Promise<Place>;
}

const AGENT_LIST: readonly Agent[] = [
  {
    name: 'pi',
    definition: AGENTS.pi,
    place: async (server) => {
      const env = await createPiEnv({ baseUrl: server.baseUrl });
      return {
        session: (conversation, tag) =>
          piSession({ executable: benchFile('../node_modules/.bin/pi'), provider: OPENAI_PROVIDER, model: 'recall', session: 'new', cwd: env.cwd, env: { ...env.env, ...tag.env }, ...conversation }),
        cleanup: () => env.cleanup(),
      };
    },
  },
  {
    name: 'Claude Code',
    definition: AGENTS.claude,
    place: (server) => {
      const env = createClaudeEnv({ baseUrl: server.baseUrl });
      const exe = claudeExecutable();
      return Promise.resolve({
        session: (conversation, tag) => claudeCodeSession({ executable: exe.command, executableArgs: exe.args, model: 'recall', cwd: env.cwd, env: { ...env.env, ...tag.env }, ...conversation }),
        cleanup: () => env.cleanup(),
      });
    },
  },
  {
    name: 'Codex',
    definition: AGENTS.codex,
    place: (server) => {
      const env = createCodexEnv({ baseUrl: server.baseUrl, requestMaxRetries: 0, streamMaxRetries: 0 });
      return Promise.resolve({
        session: (conversation, tag) => codexSession({ cwd: env.cwd, env: { ...env.env, ...tag.env }, extraArgs: ['-c', env.baseUrlOverride('recall')], ...conversation }),
        cleanup: () => env.cleanup(),
      });
    },
  },
  {
    name: 'Gemini CLI',
    definition: AGENTS.gemini,
    place: (server) => {
      const env = createGeminiEnv({ baseUrl: server.baseUrl, scenario: 'recall', maxAttempts: 1 });
      const exe = geminiCommand();
      return Promise.resolve({
        session: (conversation, tag) => geminiSession({ executable: exe.command, executableArgs: exe.args, cwd: env.cwd, env: { ...env.env, ...tag.env }, ...conversation }),
        cleanup: () => env.cleanup(),
      });
    },
  },
  {
    name: 'Qwen Code',
    definition: AGENTS.qwen,
    place: (server) => {
      const env = createQwenEnv({ baseUrl: server.openaiBaseUrl });
      const exe = qwenCommand();
      return Promise.resolve({
        session: (conversation, tag) => qwenSession({ executable: exe.command, executableArgs: exe.args, model: 'recall', cwd: env.cwd, env: { ...env.env, ...tag.env }, ...conversation }),
        cleanup: () => env.cleanup(),
      });
    },
  },
];

type Of<T extends SessionMessage['type']> = Extract<SessionMessage, { type: T }>;

/** A session driven one command at a time; every message is kept with its arrival time. */
class Driver {
  readonly #commands = new Subject<SessionCommand>();
  readonly messages: { readonly message: SessionMessage; readonly at: number }[] = [];
  #waiters: (() => void)[] = [];
  #completed = false;
  readonly #subscription;

  constructor(
    readonly name: string,
    session: OperatorFunction<SessionCommand, SessionMessage>,
  ) {
    this.#subscription = this.#commands.pipe(session).subscribe({
      next: (message) => {
        this.messages.push({ message, at: performance.now() });
        this.#wakeWaiters();
      },
      error: (error: unknown) => {
        this.#completed = true;
        this.messages.push({ message: { type: 'terminal.failed', reason: 'exit', message: String(error), exitCode: null, signal: null, stderr: '', invalidOutputLines: [] } as unknown as SessionMessage, at: performance.now() });
        this.#wakeWaiters();
      },
      complete: () => {
        this.#completed = true;
        this.#wakeWaiters();
      },
    });
  }

  #wakeWaiters(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const waiter of waiters) waiter();
  }

  /** The index the next message will have. */
  mark(): number {
    return this.messages.length;
  }

  send(command: SessionCommand): number {
    const at = performance.now();
    this.#commands.next(command);
    return at;
  }

  end(): void {
    this.#commands.complete();
  }

  /** The first message of `type` at index `from` or later (waiting for it), with its arrival time; a failure ends the wait. */
  async after<T extends SessionMessage['type']>(from: number, type: T, timeoutMs = 120_000): Promise<{ readonly message: Of<T>; readonly at: number }> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      for (let i = from; i < this.messages.length; i += 1) {
        const entry = this.messages[i];
        if (entry === undefined) continue;
        if (entry.message.type === type) return { message: entry.message as Of<T>, at: entry.at };
        if (type !== 'terminal.failed' && (entry.message.type === 'terminal.failed' || entry.message.type === 'turn.failed')) {
          throw new Error(`${this.name}: ${entry.message.type} while waiting for ${type}: ${JSON.stringify(entry.message).slice(0, 600)}`);
        }
      }
      if (this.#completed) throw new Error(`${this.name}: the session completed before ${type}`);
      const left = deadline - performance.now();
      if (left <= 0) throw new Error(`${this.name}: no ${type} within ${String(timeoutMs)} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** The assistant text between index `from` and the next `turn.completed`. */
  textAfter(from: number): string {
    let text = '';
    for (const { message } of this.messages.slice(from)) {
      if (message.type === 'turn.completed') break;
      if (message.type === 'assistant') text += message.text;
    }
    return text;
  }

  close(): void {
    this.#subscription.unsubscribe();
  }
}

/** Sends a prompt and waits for its first text and its turn's end: the times from the send, ms. */
async function turn(driver: Driver, text: string): Promise<{ readonly sentAt: number; readonly firstText: number; readonly from: number; readonly completedAt: number }> {
  const from = driver.mark();
  const sentAt = driver.send({ type: 'prompt', text });
  const first = await driver.after(from, 'assistant');
  const completed = await driver.after(from, 'turn.completed');
  return { sentAt, firstText: first.at - sentAt, from, completedAt: completed.at };
}

/** What the `recall` scenario answers when the conversation holds `count` user texts. */
const recalls = (count: number): string => `User texts in context: ${String(count)} (`;

/** Ends a session: its commands complete, then its terminal (the session saves once more, its process exits). */
async function finish(driver: Driver): Promise<void> {
  const from = driver.mark();
  driver.end();
  await driver.after(from, 'terminal.completed');
  driver.close();
}

export async function conversationLatencies(repetitions: number, memory: { readonly sessions: number; readonly repetitions: number }): Promise<ConversationResult> {
  const idleMs = 500;
  const server = await startFakeModelServer();
  const storeFolder = mkdtempSync(join(tmpdir(), 'agent-rx-bench-conversations-'));
  const store = folderStore(storeFolder);
  const agents = AGENT_LIST.filter((agent) => agent.definition.conversation !== undefined);
  const skipped = AGENT_LIST.filter((agent) => agent.definition.conversation === undefined).map((agent) => agent.name);
  const places: Place[] = [];
  try {
    const rows: ConversationRow[] = [];
    for (const agent of agents) {
      const place = await agent.place(server);
      places.push(place);
      rows.push(await measure(agent.name, place, store, idleMs, repetitions));
    }
    const pi = await createPiEnv({ baseUrl: server.baseUrl });
    try {
      try {
        return { idleMs, rows, skipped, memory: await memoryOfSessions(pi, storeFolder, idleMs, memory.sessions, memory.repetitions) };
      } catch (error) {
        return { idleMs, rows, skipped, memory: { error: error instanceof Error ? error.message : String(error) } };
      }
    } finally {
      await pi.cleanup();
    }
  } finally {
    await server.close();
    for (const place of places) await place.cleanup();
    rmSync(storeFolder, { recursive: true, force: true });
  }
}

async function measure(name: string, place: Place, store: ConversationStore, idleMs: number, repetitions: number): Promise<ConversationRow> {
  const tag = createProcessTag('AGENT_RX_BENCH_CONVERSATION');
  const bytes1: number[] = [];
  const bytes3: number[] = [];
  const sleeps: number[] = [];
  const resumes: number[] = [];
  const wakes: number[] = [];
  const awakes: number[] = [];
  const colds: number[] = [];
  const log = (what: string): void => {
    if (process.env['BENCH_DEBUG'] === '1') console.error(`${name}: ${what}`);
  };
  for (let i = 0; i < repetitions; i += 1) {
    // The baseline: a session that stays awake (the same options and store, no idleMs).
    const awake = new Driver(name, place.session({ store }, tag));
    try {
      const first = await turn(awake, `first question ${String(i)}`);
      colds.push(first.firstText);
      const later = await turn(awake, `second question ${String(i)}`);
      awakes.push(later.firstText);
      check(awake.textAfter(later.from).startsWith(recalls(2)), `${name}: the awake session's second answer: ${awake.textAfter(later.from)}`);
      await finish(awake);
    } finally {
      awake.close();
    }
    log(`awake ${String(i)} done`);

    // The session that sleeps after idleMs.
    const sleeping = new Driver(name, place.session({ store, idleMs }, tag));
    try {
      const first = await turn(sleeping, `first question ${String(i)}`);
      const slept = await sleeping.after(first.from, 'session.passivated');
      sleeps.push(slept.at - first.completedAt - idleMs);
      bytes1.push(slept.message.snapshotBytes);
      check(tag.processes().length === 0, `${name}: agent processes alive after session.passivated`);
      log(`asleep after turn 1, ${String(slept.message.snapshotBytes)} bytes`);

      const woken = await turn(sleeping, `second question ${String(i)}`);
      const resumed = await sleeping.after(woken.from, 'session.resumed');
      check(resumed.message.resumeMs !== undefined, `${name}: session.resumed without resumeMs`);
      resumes.push(resumed.message.resumeMs);
      wakes.push(woken.firstText);
      check(sleeping.textAfter(woken.from).startsWith(recalls(2)), `${name}: the answer after the wake: ${sleeping.textAfter(woken.from)}`);

      const third = await turn(sleeping, `third question ${String(i)}`);
      check(sleeping.textAfter(third.from).startsWith(recalls(3)), `${name}: the third answer: ${sleeping.textAfter(third.from)}`);
      const sleptAgain = await sleeping.after(third.from, 'session.passivated');
      sleeps.push(sleptAgain.at - third.completedAt - idleMs);
      bytes3.push(sleptAgain.message.snapshotBytes);
      log(`asleep after turn 3, ${String(sleptAgain.message.snapshotBytes)} bytes`);
      await finish(sleeping);
    } finally {
      sleeping.close();
    }
  }
  const left = await tag.waitUntilNone(15_000);
  check(left.length === 0, `${name}: processes left after the benchmark: ${left.map((entry) => `${String(entry.pid)} ${entry.comm}`).join(', ')}`);
  return {
    agent: name,
    snapshotBytes1: summarize(bytes1),
    snapshotBytes3: summarize(bytes3),
    sleep: summarize(sleeps),
    resume: summarize(resumes),
    wake: summarize(wakes),
    awake: summarize(awakes),
    cold: summarize(colds),
    wakeOverAwake: ratios(wakes, awakes),
    wakeOverCold: ratios(wakes, colds),
  };
}

/** A field of /proc/<pid>/<file> in kB (0 when the process is gone). */
function procKB(pid: number, file: string, field: string): number {
  try {
    return Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(readFileSync(`/proc/${String(pid)}/${file}`, 'latin1'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** The host and every process under it, from the process table. */
async function treeOf(host: number): Promise<number[]> {
  const { entries } = await readProcessTable();
  const children = new Map<number, number[]>();
  for (const entry of entries) {
    if (entry.zombie) continue;
    children.set(entry.ppid, [...(children.get(entry.ppid) ?? []), entry.pid]);
  }
  const tree = [host];
  for (let i = 0; i < tree.length; i += 1) tree.push(...(children.get(tree[i] ?? -1) ?? []));
  return tree;
}

/** The CPU time of a set of processes, clock ticks. */
function cpuTicks(pids: readonly number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const fields = readFileSync(`/proc/${String(pid)}/stat`, 'latin1').split(') ')[1]?.split(' ') ?? [];
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // gone
    }
  }
  return ticks;
}

/** Waits until the tree's make-up and CPU time stay the same for 500 ms (at most 60 s), then reads its memory. */
async function settledMemory(host: number): Promise<TreeMemory> {
  const deadline = performance.now() + 60_000;
  let last = '';
  let since = performance.now();
  while (performance.now() < deadline) {
    await delay(100);
    const tree = await treeOf(host);
    const now = `${tree.join(',')}:${String(cpuTicks(tree))}`;
    if (now !== last) {
      last = now;
      since = performance.now();
    } else if (performance.now() - since >= 500) break;
  }
  const tree = await treeOf(host);
  const hostRss = procKB(host, 'status', 'VmRSS');
  let agentsRss = 0;
  let pss = 0;
  for (const pid of tree) {
    if (pid !== host) agentsRss += procKB(pid, 'status', 'VmRSS');
    pss += procKB(pid, 'smaps_rollup', 'Pss');
  }
  return { processes: tree.length, hostRssMB: hostRss / 1024, agentsRssMB: agentsRss / 1024, treeRssMB: (hostRss + agentsRss) / 1024, treePssMB: pss / 1024 };
}

interface HostSpec {
  readonly state: 'alive' | 'asleep';
  readonly sessions: number;
  readonly idleMs: number;
  readonly executable: string;
  readonly cwd: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly storeFolder: string;
}

/**
 * One host with N sessions, in a fresh Node process (this file, `host <spec>`): its tree's memory
 * with no session yet, then with the N sessions at rest. The host says where it is on stdout; it
 * goes on when told on stdin.
 */
async function hostMemory(spec: HostSpec, tag: ProcessTag): Promise<{ readonly empty: TreeMemory; readonly loaded: TreeMemory; readonly settleMs: number }> {
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', '--import', benchFile('./shipped.mjs'), fileURLToPath(import.meta.url), 'host', JSON.stringify(spec)], {
    cwd: fileURLToPath(new URL('..', import.meta.url)),
    env: { ...process.env, ...tag.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-4000);
  });
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  const lines = createInterface({ input: child.stdout });
  const reported: { state: string; settleMs?: number }[] = [];
  let notify = (): void => undefined;
  lines.on('line', (line) => {
    try {
      reported.push(JSON.parse(line) as { state: string; settleMs?: number });
      notify();
    } catch {
      // not a report
    }
  });
  const until = async (state: string): Promise<{ state: string; settleMs?: number }> => {
    const deadline = performance.now() + 300_000;
    for (;;) {
      const found = reported.find((entry) => entry.state === state);
      if (found !== undefined) return found;
      if (child.exitCode !== null || performance.now() > deadline) throw new Error(`the host never said ${state}: ${stderr}`);
      await new Promise<void>((resolve) => {
        notify = resolve;
        setTimeout(resolve, 1000);
      });
    }
  };
  const host = child.pid;
  check(host !== undefined, 'the host process started');
  try {
    await until('empty');
    const empty = await settledMemory(host);
    child.stdin.write('go\n');
    const rested = await until('rested');
    const loaded = await settledMemory(host);
    child.stdin.write('end\n');
    await until('done');
    const code = await exited;
    check(code === 0, `the host exited with ${String(code)}: ${stderr}`);
    return { empty, loaded, settleMs: rested.settleMs ?? 0 };
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
}

/** The host's side: N pi sessions, each with one turn, then left alive or asleep. */
async function runHost(spec: HostSpec): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  const say = (report: object): void => {
    process.stdout.write(`${JSON.stringify(report)}\n`);
  };
  const input = createInterface({ input: process.stdin });
  const told: string[] = [];
  let notify = (): void => undefined;
  input.on('line', (line) => {
    told.push(line.trim());
    notify();
  });
  const heard = async (word: string): Promise<void> => {
    while (!told.includes(word)) await new Promise<void>((resolve) => (notify = resolve));
  };
  const store = folderStore(spec.storeFolder);
  gc?.();
  say({ state: 'empty' });
  await heard('go');
  const started = performance.now();
  const drivers = Array.from({ length: spec.sessions }, (_, index) => {
    const conversation: ConversationOptions = spec.state === 'asleep' ? { store, idleMs: spec.idleMs } : { store };
    return new Driver(`pi ${String(index)}`, piSession({ executable: spec.executable, provider: OPENAI_PROVIDER, model: 'recall', session: 'new', cwd: spec.cwd, env: { ...spec.env }, ...conversation }));
  });
  await Promise.all(
    drivers.map(async (driver, index) => {
      const from = driver.mark();
      driver.send({ type: 'prompt', text: `question ${String(index)}` });
      await driver.after(from, 'turn.completed', 300_000);
      if (spec.state === 'asleep') await driver.after(from, 'session.passivated', 300_000);
    }),
  );
  const settleMs = performance.now() - started;
  gc?.();
  say({ state: 'rested', settleMs });
  await heard('end');
  await Promise.all(drivers.map((driver) => finish(driver)));
  say({ state: 'done' });
  input.close();
}

async function memoryOfSessions(pi: Awaited<ReturnType<typeof createPiEnv>>, storeFolder: string, idleMs: number, sessions: number, repetitions: number): Promise<ConversationMemory> {
  const tag = createProcessTag('AGENT_RX_BENCH_CONVERSATION_HOST');
  const samples: { empty: TreeMemory[]; alive: TreeMemory[]; asleep: TreeMemory[]; aliveSettle: number[]; asleepSettle: number[] } = { empty: [], alive: [], asleep: [], aliveSettle: [], asleepSettle: [] };
  const perSession = { alive: { rss: [] as number[], pss: [] as number[] }, asleep: { rss: [] as number[], pss: [] as number[] } };
  for (let i = 0; i < repetitions; i += 1) {
    // Alternating which comes first.
    const order: ('alive' | 'asleep')[] = i % 2 === 0 ? ['alive', 'asleep'] : ['asleep', 'alive'];
    for (const state of order) {
      const measured = await hostMemory({ state, sessions, idleMs, executable: benchFile('../node_modules/.bin/pi'), cwd: pi.cwd, env: pi.env, storeFolder }, tag);
      samples.empty.push(measured.empty);
      samples[state].push(measured.loaded);
      samples[state === 'alive' ? 'aliveSettle' : 'asleepSettle'].push(measured.settleMs);
      perSession[state].rss.push((measured.loaded.treeRssMB - measured.empty.treeRssMB) / sessions);
      perSession[state].pss.push((measured.loaded.treePssMB - measured.empty.treePssMB) / sessions);
      const left = await tag.waitUntilNone(15_000);
      check(left.length === 0, `processes left after a host of ${String(sessions)} ${state} sessions: ${left.map((entry) => `${String(entry.pid)} ${entry.comm}`).join(', ')}`);
    }
  }
  const row = (state: MemoryRow['state'], list: readonly TreeMemory[]) => ({
    state,
    processes: summarize(list.map((entry) => entry.processes)),
    hostRssMB: summarize(list.map((entry) => entry.hostRssMB)),
    agentsRssMB: summarize(list.map((entry) => entry.agentsRssMB)),
    treeRssMB: summarize(list.map((entry) => entry.treeRssMB)),
    treePssMB: summarize(list.map((entry) => entry.treePssMB)),
  });
  return {
    agent: 'pi',
    sessions,
    repetitions,
    rows: [
      row('empty', samples.empty),
      { ...row('alive', samples.alive), perSessionRssMB: summarize(perSession.alive.rss), perSessionPssMB: summarize(perSession.alive.pss), settleMs: summarize(samples.aliveSettle) },
      { ...row('asleep', samples.asleep), perSessionRssMB: summarize(perSession.asleep.rss), perSessionPssMB: summarize(perSession.asleep.pss), settleMs: summarize(samples.asleepSettle) },
    ],
    aliveOverAsleepRss: ratios(samples.alive.map((entry) => entry.treeRssMB), samples.asleep.map((entry) => entry.treeRssMB)),
    aliveOverAsleepPss: ratios(samples.alive.map((entry) => entry.treePssMB), samples.asleep.map((entry) => entry.treePssMB)),
  };
}

if (process.argv[2] === 'host' && process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  await runHost(JSON.parse(process.argv[3] ?? '{}') as HostSpec);
}
