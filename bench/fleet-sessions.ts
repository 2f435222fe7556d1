import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Subject } from 'rxjs';
import { checkSessionSpec, createRunDispatcher, SESSION_ENV, sessionKeys } from '../lib/fleet.js';
import type { SessionCommand, SessionMessage } from '../lib/index.js';
import { readProcessTableSync } from '../lib/process/process-table.js';
import { startFakeModelServer } from '../spec/conformance/fake-model-server.js';
import { createPiEnv, OPENAI_PROVIDER, type PiEnv } from '../spec/conformance/pi-env.js';
import { startRedis } from '../spec/helpers/redis-server.js';
import { startTaggedNode, type TaggedChild } from '../spec/helpers/tagged-child.js';
import { delay, loopSample, seededRandom, summarize, type LoopSample, type Summary } from './util.js';

/**
 * Conversations on the fleet: `sessions` fleet sessions of the real pi (against the fake model
 * server's `recall` scenario on 127.0.0.1) over `workers` worker processes of `concurrency` each
 * (spec/fleet/fixtures/worker.ts with the library's heartbeat, lock and stall-check times, each
 * with its own pi home and working folder), driven from this
 * process by one dispatcher. Each session sends `prompts` prompts, the first at a random moment of
 * the first `spreadMs`, each next one a random 0 to 3 × `idleMs` after the answer to the one
 * before: some find the session awake, some asleep. Measured: the live agent processes (sampled
 * every 100 ms from the process table: those with the activation's variable), prompt → first text
 * by what the prompt found (a new session; awake; asleep, woken on the worker that ran it last;
 * asleep, woken on another), the Redis memory of a sleeping session (MEMORY USAGE of its keys, at
 * the end, all asleep), and this process's event-loop delay over the whole load.
 */
export interface FleetSessionsResult {
  readonly sessions: number;
  readonly prompts: number;
  readonly workers: number;
  readonly concurrency: number;
  readonly idleMs: number;
  readonly wallMs: number;
  /** The most live agent processes seen at once, and how many samples were taken. */
  readonly liveMax: number;
  readonly samples: number;
  /** Prompt → first text, ms, by what the prompt found. */
  readonly firstText: Readonly<Record<Found, Percentiles>>;
  /** Turns that ended otherwise than completed, and prompts dropped: how many, and why (`turn.failed <reason>: <message>`, `input.dropped <reason>`). */
  readonly failedTurns: number;
  readonly failures: readonly string[];
  /** Completed answers that did not list every earlier prompt of their session whose turn completed (the conversation lost). */
  readonly forgetful: number;
  /** The worker events that are not activations and sleeps (a deactivation `fenced`, `unreachable`, `stopped`, an error). */
  readonly workerTrouble: readonly string[];
  /** Bytes of Redis per sleeping session (its keys, MEMORY USAGE), and Redis's used_memory per session. */
  readonly redisBytes: Summary;
  readonly redisUsedPerSession: number;
  readonly loop: LoopSample;
}

export type Found = 'new' | 'awake' | 'woken here' | 'woken elsewhere';

export interface Percentiles extends Summary {
  readonly p50: number;
  readonly p99: number;
}

export interface FleetSessionsOptions {
  readonly sessions: number;
  readonly prompts?: number;
  readonly workers?: number;
  readonly concurrency?: number;
  readonly idleMs?: number;
  readonly spreadMs?: number;
  readonly seed?: number;
}

const WORKER_SCRIPT = fileURLToPath(new URL('../spec/fleet/fixtures/worker.ts', import.meta.url));
const PI = fileURLToPath(new URL('../node_modules/.bin/pi', import.meta.url));
const TAG = 'AGENT_RX_BENCH_FLEET_SESSIONS';

/** One session's prompts as they went. */
interface Turn {
  readonly found: Found;
  readonly firstTextMs: number | null;
  readonly completed: boolean;
  readonly failure: string | null;
  readonly remembers: boolean;
}

export async function fleetSessionLatencies(options: FleetSessionsOptions): Promise<FleetSessionsResult> {
  const { sessions } = options;
  const prompts = options.prompts ?? 3;
  const workerCount = options.workers ?? 3;
  const concurrency = options.concurrency ?? 4;
  const idleMs = options.idleMs ?? 1500;
  const spreadMs = options.spreadMs ?? 10_000;
  const random = seededRandom(options.seed ?? 35);
  const model = await startFakeModelServer();
  const redis = await startRedis();
  const redisStartedAt = performance.now();
  const homes: PiEnv[] = [];
  const workers: TaggedChild[] = [];
  // Which worker ran each session's activations, in order (from the workers' lines).
  const activations = new Map<string, string[]>();
  const workerTrouble: string[] = [];
  const dispatcher = createRunDispatcher({ connection: redis.url, blockMs: 100 });
  let sampler: NodeJS.Timeout | undefined;
  try {
    for (let index = 0; index < workerCount; index += 1) {
      const home = await createPiEnv({ baseUrl: model.baseUrl });
      homes.push(home);
      const name = `bench-w${String(index)}`;
      const folder = join(home.root, 'work', name);
      mkdirSync(folder, { recursive: true });
      const child = startTaggedNode([WORKER_SCRIPT], TAG, {
        FLEET_WORKER: JSON.stringify({ url: redis.url, workerName: name, concurrency, libraryDefaults: true, workFolder: folder, pi: { executable: PI, provider: OPENAI_PROVIDER, model: 'recall', env: home.env } }),
      });
      workers.push(child);
      let pending = '';
      child.child.stdout.on('data', (chunk: Buffer) => {
        pending += chunk.toString('utf8');
        let newline = pending.indexOf('\n');
        while (newline !== -1) {
          const line = pending.slice(0, newline);
          pending = pending.slice(newline + 1);
          newline = pending.indexOf('\n');
          if (process.env['BENCH_DEBUG'] === '1') console.error(`${name}: ${line}`);
          try {
            const event = JSON.parse(line) as { event?: string; sessionId?: string; why?: string; message?: string };
            if (event.event === 'session.activated' && typeof event.sessionId === 'string') activations.set(event.sessionId, [...(activations.get(event.sessionId) ?? []), name]);
            else if ((event.event === 'session.deactivated' && event.why !== 'slept' && event.why !== 'ended') || event.event === 'error' || event.event === 'warning') {
              workerTrouble.push(`${name} ${event.event} ${event.sessionId ?? ''} ${event.why ?? event.message ?? ''}`.trim());
            }
          } catch {
            // not a JSON line
          }
        }
      });
      await child.waitForLine(/"event":"ready"/, 60_000);
    }

    // A first activation while Redis is young waits for any activation from before a restart to
    // stop (the workers' lease, beat and grace: 3 + 1 + 2 s, and half a second): the bench starts after that.
    await delay(Math.max(0, redisStartedAt + 7000 - performance.now()));

    let liveMax = 0;
    let samples = 0;
    sampler = setInterval(() => {
      liveMax = Math.max(liveMax, liveAgents());
      samples += 1;
    }, 100);

    const spec = checkSessionSpec({ agent: 'pi', idleMs });
    const turns: Turn[] = [];
    const started = performance.now();
    const loop = await loopSample(() =>
      Promise.all(
        Array.from({ length: sessions }, async (_, index) => {
          const id = `bench-${String(index)}`;
          const commands = new Subject<SessionCommand>();
          const seen: { readonly at: number; readonly message: SessionMessage }[] = [];
          let wake: () => void = () => undefined;
          const done = new Promise<void>((resolve) => {
            commands.pipe(dispatcher.session(id, spec)).subscribe({
              next: (message) => {
                if (process.env['BENCH_DEBUG'] === '1') console.error(`${id}: ${JSON.stringify(message).slice(0, 300)}`);
                seen.push({ at: performance.now(), message });
                wake();
              },
              complete: resolve,
            });
          });
          // A prompt may wait for a slot behind many sessions' starts: 5 s per session, 300 s at least.
          const patienceMs = Math.max(300_000, sessions * 5000);
          const waitFor = async (check: () => boolean): Promise<void> => {
            const deadline = performance.now() + patienceMs;
            while (!check()) {
              if (performance.now() > deadline) {
                const since = seen.slice(from).map(({ message }) => message.type);
                throw new Error(`session ${id}: no answer within ${String(patienceMs / 1000)} s; since the prompt: ${since.join(', ') || 'nothing'}; activations: ${(activations.get(id) ?? []).join(', ')}`);
              }
              await new Promise<void>((resolve) => {
                wake = resolve;
                setTimeout(resolve, 1000);
              });
            }
          };
          await delay(random() * spreadMs);
          let from = 0;
          let completedBefore = 0;
          for (let number = 1; number <= prompts; number += 1) {
            from = seen.length;
            const workersBefore = activations.get(id)?.length ?? 0;
            const sentAt = performance.now();
            const commandId = `p${String(number)}`;
            commands.next({ type: 'prompt', text: `prompt ${String(number)} of ${id}`, id: commandId });
            let turn: number | null = null;
            await waitFor(() => {
              for (const { message } of seen.slice(from)) {
                if (message.type === 'turn.started' && message.commandId === commandId) turn = message.turn;
                else if (message.type === 'input.dropped' && message.commandId === commandId) return true;
                else if ((message.type === 'turn.completed' || message.type === 'turn.failed') && message.turn === turn) return true;
              }
              return false;
            });
            const mine = seen.slice(from);
            const text = mine.find(({ message }) => message.type === 'assistant');
            const answer = mine.map(({ message }) => (message.type === 'assistant' ? message.text : '')).join('');
            const resumed = mine.some(({ message }) => message.type === 'session.resumed');
            const ran = activations.get(id) ?? [];
            const found: Found = number === 1 ? 'new' : !resumed ? 'awake' : (ran[workersBefore] ?? ran.at(-1)) === ran[workersBefore - 1] ? 'woken here' : 'woken elsewhere';
            const completed = mine.some(({ message }) => message.type === 'turn.completed');
            const failed = mine.find(({ message }) => message.type === 'turn.failed' || message.type === 'input.dropped')?.message;
            turns.push({
              found,
              firstTextMs: text === undefined ? null : text.at - sentAt,
              completed,
              failure: failed === undefined ? null : failed.type === 'turn.failed' ? `turn.failed ${failed.reason}: ${failed.message}` : failed.type === 'input.dropped' ? `input.dropped ${failed.reason}` : failed.type,
              // At least the prompts whose turns completed (a failed turn's prompt may have reached the agent or not).
              remembers: Number(/User texts in context: (\d+)/.exec(answer)?.[1] ?? 0) >= completedBefore + 1,
            });
            if (completed) completedBefore += 1;
            if (number < prompts) await delay(random() * 3 * idleMs);
          }
          commands.complete();
          await done;
        }),
      ),
    );
    const wallMs = performance.now() - started;
    clearInterval(sampler);
    sampler = undefined;

    // Every session asleep: what each keeps in Redis.
    await waitForQuiet(idleMs * 4);
    const client = redis.client();
    const perSession: number[] = [];
    for (let index = 0; index < sessions; index += 1) {
      const keys = sessionKeys('agentrx', `bench-${String(index)}`);
      let bytes = 0;
      for (const key of Object.values(keys) as string[]) bytes += Number((await client.call('MEMORY', 'USAGE', key)) ?? 0);
      perSession.push(bytes);
    }
    const info = await client.info('memory');
    const used = Number(/used_memory:(\d+)/.exec(info)?.[1] ?? 0);
    const before = Number(/used_memory_startup:(\d+)/.exec(info)?.[1] ?? 0);
    client.disconnect();

    const found = (kind: Found): Percentiles => {
      const samplesOf = turns.filter((turn) => turn.found === kind && turn.firstTextMs !== null).map((turn) => turn.firstTextMs ?? 0);
      const sorted = [...samplesOf].sort((a, b) => a - b);
      const at = (q: number): number => (sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0));
      return { ...summarize(samplesOf), p50: at(0.5), p99: at(0.99) };
    };
    return {
      sessions,
      prompts,
      workers: workerCount,
      concurrency,
      idleMs,
      wallMs,
      liveMax,
      samples,
      firstText: { new: found('new'), awake: found('awake'), 'woken here': found('woken here'), 'woken elsewhere': found('woken elsewhere') },
      failedTurns: turns.filter((turn) => !turn.completed).length,
      failures: turns.flatMap((turn) => (turn.failure === null ? [] : [turn.failure])),
      workerTrouble,
      forgetful: turns.filter((turn) => turn.completed && !turn.remembers).length,
      redisBytes: summarize(perSession),
      redisUsedPerSession: (used - before) / sessions,
      loop,
    };
  } finally {
    if (sampler !== undefined) clearInterval(sampler);
    await dispatcher.close();
    for (const worker of workers) {
      worker.child.kill('SIGTERM');
      await worker.exitWithin(10_000);
      worker.cleanUp();
    }
    await redis.stop();
    await model.close();
    for (const home of homes) await home.cleanup();
  }

  // Waits until no agent of the bench's workers is alive (every session asleep), at most `ms`.
  async function waitForQuiet(ms: number): Promise<void> {
    const deadline = performance.now() + ms;
    while (liveAgents() > 0 && performance.now() < deadline) await delay(100);
  }
}

/** The live agent processes of fleet session activations on this machine (they carry SESSION_ENV): only the bench's run here. */
function liveAgents(): number {
  return readProcessTableSync(`${SESSION_ENV}=`).entries.filter((entry) => entry.marked && !entry.zombie).length;
}
