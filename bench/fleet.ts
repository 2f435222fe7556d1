import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';
import type { Observable, Subscription } from 'rxjs';
import { createRunDispatcher, runKeys, type RunSpec } from '../lib/fleet.js';
import { isTerminal, runPi, type CliMessage } from '../lib/index.js';
import { startRedis, type RedisServer } from '../spec/helpers/redis-server.js';
import { startTaggedNode, type TaggedChild } from '../spec/helpers/tagged-child.js';
import type { PiStream } from './stream.js';
import { check, delay, isAlive, loopSample, ratios, seededRandom, summarize, type LoopSample, type Summary } from './util.js';

/**
 * The fleet (agent-rx/fleet) on this machine: a private redis-server on a unix socket, workers as
 * their own Node processes (`serveRuns` of the library as the bench loads it, see WORKER), and a
 * dispatcher in this process, against runPi in this process in the same run. The agent is the
 * fleet tests' (spec/fleet/fixtures/fleet-agent.mjs): a recording replayed (PI_REPLAY_SPEED), or
 * `fake_tool`, caught in a tool that never ends.
 */
export interface FleetResult {
  readonly replay: readonly ReplayRow[];
  readonly cancel: CancelResult;
  readonly lost: readonly LostRow[];
  readonly lostBaseline: Summary;
  readonly many: ManyResult;
}

export interface ReplayRow {
  readonly label: string;
  readonly messages: number;
  readonly repetitions: number;
  /** Subscribe → first message, ms. */
  readonly localFirst: Summary;
  readonly fleetFirst: Summary;
  /** Subscribe → terminal, ms. */
  readonly localDone: Summary;
  readonly fleetDone: Summary;
  /** Messages / (subscribe → terminal), per second. */
  readonly localRate: Summary;
  readonly fleetRate: Summary;
  /** Fleet time to the terminal / runPi's, per repetition. */
  readonly doneRatio: Summary;
  /** Redis append (the entry id's ms) → the caller's subscriber (Date.now()), every message of every repetition, ms. */
  readonly hop: { readonly mean: number; readonly p50: number; readonly p99: number; readonly max: number; readonly samples: number };
}

export interface CancelResult {
  /** Unsubscribe → the agent and its own-session tool both gone, ms. */
  readonly local: Summary;
  readonly fleet: Summary;
  readonly ratio: Summary;
}

export interface LostRow {
  readonly heartbeatMs: number;
  readonly heartbeatTtlMs: number;
  readonly blockMs: number;
  /** SIGKILL of the worker → the caller's terminal.failed (lost), ms. */
  readonly lost: Summary;
  /** What was left of the run's heartbeat key (PTTL) just before the kill, ms. */
  readonly heartbeatLeft: Summary;
  /** lost − heartbeat left: the dispatcher's detection after the key expired, ms. */
  readonly detection: Summary;
  /** SIGKILL of the worker → its agent and tool gone (the worker's keeper), ms. */
  readonly agentGone: Summary;
}

export interface LoopRow {
  readonly p50: Summary;
  readonly p99: Summary;
  readonly max: Summary;
  /** First subscribe → the last terminal (the idle row: how long it was sampled), ms. */
  readonly wallMs: Summary;
  /** CPU time of this process (user + system) meanwhile, ms. */
  readonly cpuMs: Summary;
}

export interface ManyResult {
  readonly runs: number;
  readonly workers: number;
  readonly concurrency: number;
  readonly replaySpeed: string;
  readonly repetitions: number;
  readonly idle: LoopRow;
  readonly fleet: LoopRow;
  readonly local: LoopRow;
  readonly p99Ratio: Summary;
  readonly wallRatio: Summary;
  readonly cpuRatio: Summary;
  /** Redis used_memory after the runs − before, / runs, bytes. */
  readonly usedMemoryPerRun: Summary;
  /** MEMORY USAGE of one run's keys (stream, end, owner), bytes. */
  readonly keysPerRun: Summary;
  readonly streamEntries: number;
}

export interface FleetSizes {
  /** Repetitions of each replay at PI_REPLAY_SPEED=0, and of the paced one. */
  readonly replays: number;
  readonly pacedReplays: number;
  readonly cancels: number;
  readonly losts: number;
  /** Repetitions of the lost measure with the tests' settings (200 / 1000); 0 to leave it out. */
  readonly testLosts: number;
  readonly manyRuns: number;
  readonly manyRepetitions: number;
}

const AGENT = fileURLToPath(new URL('../spec/fleet/fixtures/fleet-agent.mjs', import.meta.url));
// The library as this process loads it: dist/ under bench/shipped.mjs, else lib/ (the worker runs under tsx too).
const FLEET_LIBRARY = import.meta.resolve('../lib/fleet.js');
const PREFIX = 'agentrx';
const TAG = 'AGENT_RX_BENCH_FLEET';

/**
 * A fleet worker: `serveRuns` with the fleet agent as pi and the library's defaults for what is
 * not set (BullMQ lock and stall check 30 s), its run events as JSON lines, `close()` on SIGTERM.
 * Settings in BENCH_FLEET_WORKER (JSON). Run with `node --input-type=module -e`.
 */
const WORKER = `
const settings = JSON.parse(process.env.BENCH_FLEET_WORKER);
const { serveRuns } = await import(settings.library);
const say = (line) => process.stdout.write(JSON.stringify(line) + '\\n');
const server = serveRuns({
  connection: settings.url,
  queue: settings.queue,
  workerName: settings.workerName,
  concurrency: settings.concurrency,
  heartbeatMs: settings.heartbeatMs,
  heartbeatTtlMs: settings.heartbeatTtlMs,
  agents: { pi: { executable: process.execPath, executableArgs: [settings.agent], env: settings.env } },
  onRunEvent: (event) => say({ event: event.type, runId: event.runId, stopped: event.stopped, at: Date.now() }),
  onError: (error) => say({ event: 'error', message: error.message }),
});
process.on('SIGTERM', () => {
  void server.close({ drainMs: 0 }).then(() => process.exit(0));
});
await server.ready;
say({ event: 'ready', pid: process.pid });
`;

interface WorkerSettings {
  readonly queue: string;
  readonly workerName: string;
  readonly concurrency?: number;
  readonly heartbeatMs?: number;
  readonly heartbeatTtlMs?: number;
  /** The agent's environment: PI_REPLAY_SPEED, PI_REPLAY_TRANSCRIPT. */
  readonly env?: Readonly<Record<string, string>>;
}

interface BenchWorker {
  readonly process: TaggedChild;
  /** SIGTERM (close), then what is left of its tag killed. */
  stop(): Promise<void>;
}

/** The workers' names carry this run's id: a worker's start sweeps only what a worker of its name left. */
const runTag = randomUUID().slice(0, 8);

async function startWorker(redis: RedisServer, settings: WorkerSettings): Promise<BenchWorker> {
  const child = startTaggedNode(['--input-type=module', '-e', WORKER], TAG, {
    BENCH_FLEET_WORKER: JSON.stringify({
      url: redis.url,
      library: FLEET_LIBRARY,
      agent: AGENT,
      concurrency: 1,
      heartbeatMs: 1000,
      heartbeatTtlMs: 3000,
      ...settings,
      workerName: `bench-${runTag}-${settings.workerName}`,
      env: { PI_REPLAY_SPEED: '0', ...settings.env },
    }),
  });
  try {
    await child.waitForLine(/"event":"ready"/, 30_000);
  } catch (error) {
    child.cleanUp();
    throw error;
  }
  return {
    process: child,
    stop: async () => {
      if (child.child.exitCode === null && child.child.signalCode === null) {
        child.child.kill('SIGTERM');
        await child.exitWithin(5000);
      }
      child.cleanUp();
    },
  };
}

/** The messages of one run with their arrival times. */
interface Arrivals {
  readonly subscribedAt: number;
  readonly messages: CliMessage[];
  /** performance.now() of each message. */
  readonly at: number[];
  /** Date.now() of each message (the clock of Redis's entry ids). */
  readonly wall: number[];
}

function collect(source: Observable<CliMessage>): Promise<Arrivals> {
  return new Promise((resolve, reject) => {
    const arrivals: Arrivals = { subscribedAt: performance.now(), messages: [], at: [], wall: [] };
    source.subscribe({
      next: (message) => {
        arrivals.at.push(performance.now());
        arrivals.wall.push(Date.now());
        arrivals.messages.push(message);
      },
      error: reject,
      complete: () => {
        resolve(arrivals);
      },
    });
  });
}

const localRun = (model: string, env: Readonly<Record<string, string>>) =>
  runPi({ prompt: 'bench', model, executable: process.execPath, executableArgs: [AGENT], env });

const spec = (model: string): RunSpec => ({ agent: 'pi', options: { prompt: 'bench', model } });

const types = (arrivals: Arrivals): string => arrivals.messages.map((message) => message.type).join(',');

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}

/** Entry ids' ms of a run's stream, in order. */
async function entryTimes(client: Redis, runId: string): Promise<number[]> {
  const entries = await client.xrange(runKeys(PREFIX, runId).stream, '-', '+');
  return entries.map(([id]) => Number(id.split('-')[0]));
}

interface Workload {
  readonly label: string;
  readonly repetitions: number;
  readonly model: string;
  readonly queue: string;
  /** The agent's environment, the same for the local run and the worker's. */
  readonly env: Readonly<Record<string, string>>;
}

/** Each workload on its own worker (`workers`, in the same order), stopped after its rows. */
async function replays(redis: RedisServer, client: Redis, workloads: readonly Workload[], workers: readonly BenchWorker[]): Promise<ReplayRow[]> {
  const rows: ReplayRow[] = [];
  for (const [i, workload] of workloads.entries()) {
    const worker = workers[i];
    if (worker === undefined) throw new Error(`no worker for ${workload.label}`);
    const dispatcher = createRunDispatcher({ connection: redis.url, queue: workload.queue });
    try {
      const fleetOnce = async (): Promise<{ arrivals: Arrivals; hops: number[] }> => {
        const runId = `bench-${randomUUID()}`;
        const arrivals = await collect(dispatcher.run(spec(workload.model), { runId }));
        const times = await entryTimes(client, runId);
        check(times.length === arrivals.messages.length, `${workload.label}: ${String(times.length)} stream entries, ${String(arrivals.messages.length)} messages`);
        return { arrivals, hops: arrivals.wall.map((wall, i) => wall - (times[i] ?? Number.NaN)) };
      };
      const localOnce = () => collect(localRun(workload.model, workload.env));
      // Warm-up, unmeasured: the connections, the JIT, the file cache.
      const reference = await localOnce();
      const warm = await fleetOnce();
      check(types(warm.arrivals) === types(reference), `${workload.label}: the fleet's messages differ from runPi's:\n${types(warm.arrivals)}\n${types(reference)}`);
      check(reference.messages.at(-1)?.type === 'terminal.completed', `${workload.label}: runPi ended ${reference.messages.at(-1)?.type ?? 'without a message'}`);
      const local: Arrivals[] = [];
      const fleet: Arrivals[] = [];
      const hops: number[] = [];
      const { repetitions } = workload;
      for (let rep = 0; rep < repetitions; rep += 1) {
        for (const which of rep % 2 === 0 ? (['local', 'fleet'] as const) : (['fleet', 'local'] as const)) {
          if (which === 'local') {
            local.push(await localOnce());
          } else {
            const run = await fleetOnce();
            fleet.push(run.arrivals);
            hops.push(...run.hops);
          }
        }
      }
      for (const run of [...local, ...fleet]) check(types(run) === types(reference), `${workload.label}: a run's messages differ`);
      const first = (runs: readonly Arrivals[]) => runs.map((run) => (run.at[0] ?? Number.NaN) - run.subscribedAt);
      const done = (runs: readonly Arrivals[]) => runs.map((run) => (run.at.at(-1) ?? Number.NaN) - run.subscribedAt);
      const rate = (runs: readonly Arrivals[]) => done(runs).map((ms) => (reference.messages.length * 1000) / ms);
      const sorted = [...hops].sort((a, b) => a - b);
      rows.push({
        label: workload.label,
        messages: reference.messages.length,
        repetitions,
        localFirst: summarize(first(local)),
        fleetFirst: summarize(first(fleet)),
        localDone: summarize(done(local)),
        fleetDone: summarize(done(fleet)),
        localRate: summarize(rate(local)),
        fleetRate: summarize(rate(fleet)),
        doneRatio: ratios(done(fleet), done(local)),
        hop: { mean: hops.reduce((sum, ms) => sum + ms, 0) / hops.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1) ?? 0, samples: hops.length },
      });
    } finally {
      await dispatcher.close();
      await worker.stop();
    }
  }
  return rows;
}

/** Polls /proc every millisecond until the pids are gone; ms since `from`. */
async function goneSince(pids: readonly number[], from: number, timeoutMs = 10_000): Promise<number> {
  while (pids.some(isAlive)) {
    if (performance.now() - from > timeoutMs) throw new Error(`bench check failed: still alive after ${String(timeoutMs)} ms: ${pids.filter(isAlive).join(', ')}`);
    await delay(1);
  }
  return performance.now() - from;
}

/** Subscribes, waits for the tool.update with the pids, and calls `then` with them and the subscription. */
function untilPids(source: Observable<CliMessage>, onMessage: (message: CliMessage) => void = () => undefined): Promise<{ pids: number[]; subscription: Subscription }> {
  return new Promise((resolve, reject) => {
    let found = false;
    const subscription = source.subscribe({
      next: (message) => {
        onMessage(message);
        if (found || message.type !== 'tool.update') return;
        found = true;
        const { agentPid, toolPid } = JSON.parse(message.output) as { agentPid: number; toolPid: number };
        // After this call returns: `subscription` is assigned.
        setImmediate(() => {
          resolve({ pids: [agentPid, toolPid], subscription });
        });
      },
      error: reject,
    });
  });
}

async function cancels(redis: RedisServer, worker: BenchWorker, repetitions: number): Promise<CancelResult> {
  const dispatcher = createRunDispatcher({ connection: redis.url, queue: 'cancel' });
  const local: number[] = [];
  const fleet: number[] = [];
  try {
    const once = async (which: 'local' | 'fleet'): Promise<number> => {
      const { pids, subscription } = await untilPids(which === 'local' ? localRun('fake_tool', {}) : dispatcher.run(spec('fake_tool')));
      check(pids.every(isAlive), 'the agent or its tool is not running');
      const unsubscribedAt = performance.now();
      subscription.unsubscribe();
      return goneSince(pids, unsubscribedAt);
    };
    await once('local');
    await once('fleet');
    for (let rep = 0; rep < repetitions; rep += 1) {
      for (const which of rep % 2 === 0 ? (['local', 'fleet'] as const) : (['fleet', 'local'] as const)) {
        (which === 'local' ? local : fleet).push(await once(which));
      }
    }
  } finally {
    await dispatcher.close();
    await worker.stop();
  }
  return { local: summarize(local), fleet: summarize(fleet), ratio: ratios(fleet, local) };
}

async function losts(redis: RedisServer, client: Redis, heartbeatMs: number, heartbeatTtlMs: number, repetitions: number): Promise<LostRow> {
  const lost: number[] = [];
  const left: number[] = [];
  const agentGone: number[] = [];
  const blockMs = 250;
  const random = seededRandom(heartbeatTtlMs);
  for (let rep = 0; rep < repetitions; rep += 1) {
    // A queue per repetition (the killed worker's job stays active in its queue); the same worker
    // name, so that each start sweeps what the killed one may have left.
    const queue = `lost-${String(heartbeatTtlMs)}-${String(rep)}`;
    const worker = await startWorker(redis, { queue, workerName: `lost-${String(heartbeatTtlMs)}`, heartbeatMs, heartbeatTtlMs });
    const dispatcher = createRunDispatcher({ connection: redis.url, queue, blockMs });
    try {
      const runId = `bench-${randomUUID()}`;
      let terminal: ((message: CliMessage) => void) | null = null;
      const ended = new Promise<{ message: CliMessage; at: number }>((resolve) => {
        terminal = (message) => {
          resolve({ message, at: performance.now() });
        };
      });
      const { pids, subscription } = await untilPids(dispatcher.run(spec('fake_tool'), { runId }), (message) => {
        if (isTerminal(message)) terminal?.(message);
      });
      // At a random moment of the beat period: what is left of the heartbeat varies as it would.
      await delay(random() * heartbeatMs);
      const heartbeat = await client.pttl(runKeys(PREFIX, runId).heartbeat);
      const killedAt = performance.now();
      worker.process.child.kill('SIGKILL');
      const gone = goneSince(pids, killedAt);
      const { message, at } = await ended;
      check(message.type === 'terminal.failed' && message.reason === 'lost', `after the worker's kill: ${JSON.stringify(message)}`);
      lost.push(at - killedAt);
      left.push(heartbeat);
      agentGone.push(await gone);
      subscription.unsubscribe();
    } finally {
      await dispatcher.close();
      await worker.stop();
    }
  }
  return {
    heartbeatMs,
    heartbeatTtlMs,
    blockMs,
    lost: summarize(lost),
    heartbeatLeft: summarize(left),
    detection: summarize(lost.map((ms, i) => ms - (left[i] ?? Number.NaN))),
    agentGone: summarize(agentGone),
  };
}

/** The local counterpart: SIGKILL the agent of a runPi run → its terminal.failed. */
async function localKills(repetitions: number): Promise<Summary> {
  const samples: number[] = [];
  for (let rep = 0; rep < repetitions; rep += 1) {
    let terminal: ((at: number, message: CliMessage) => void) | null = null;
    const ended = new Promise<{ at: number; message: CliMessage }>((resolve) => {
      terminal = (at, message) => {
        resolve({ at, message });
      };
    });
    const { pids, subscription } = await untilPids(localRun('fake_tool', {}), (message) => {
      if (isTerminal(message)) terminal?.(performance.now(), message);
    });
    const killedAt = performance.now();
    process.kill(pids[0] ?? 0, 'SIGKILL');
    const { at, message } = await ended;
    check(message.type === 'terminal.failed', `after the agent's kill: ${message.type}`);
    samples.push(at - killedAt);
    subscription.unsubscribe();
    await goneSince(pids, killedAt);
  }
  return summarize(samples);
}

const loopRow = (samples: readonly LoopSample[]): LoopRow => ({
  p50: summarize(samples.map((s) => s.p50)),
  p99: summarize(samples.map((s) => s.p99)),
  max: summarize(samples.map((s) => s.max)),
  wallMs: summarize(samples.map((s) => s.wallMs)),
  cpuMs: summarize(samples.map((s) => s.cpuMs)),
});

async function usedMemory(client: Redis): Promise<number> {
  const info = await client.info('memory');
  return Number(/used_memory:(\d+)/.exec(info)?.[1] ?? Number.NaN);
}

async function many(redis: RedisServer, client: Redis, runs: number, repetitions: number): Promise<ManyResult> {
  const workers = 3;
  const concurrency = Math.ceil(runs / workers);
  const replaySpeed = '1';
  const model = 'tool_call_then_text';
  const env = { PI_REPLAY_SPEED: replaySpeed };
  const started = await Promise.all(Array.from({ length: workers }, (_, i) => startWorker(redis, { queue: 'many', workerName: `many-${String(i + 1)}`, concurrency, env })));
  const dispatcher = createRunDispatcher({ connection: redis.url, queue: 'many' });
  const idle: LoopSample[] = [];
  const fleet: LoopSample[] = [];
  const local: LoopSample[] = [];
  const memory: number[] = [];
  const keys: number[] = [];
  let streamEntries = 0;
  try {
    // Warm-up: a run through every worker (enough at once that each takes one).
    const expected = types(await collect(localRun(model, env)));
    const warm = await Promise.all(Array.from({ length: workers * 2 }, () => collect(dispatcher.run(spec(model)))));
    check(warm.every((run) => types(run) === expected), 'many: a warm-up run differs from runPi');
    const all = <T>(start: () => Promise<T>): Promise<T[]> => Promise.all(Array.from({ length: runs }, start));
    for (let rep = 0; rep < repetitions; rep += 1) {
      idle.push(await loopSample(() => delay(2000)));
      for (const which of rep % 2 === 0 ? (['fleet', 'local'] as const) : (['local', 'fleet'] as const)) {
        if (which === 'fleet') {
          const before = await usedMemory(client);
          const runIds = Array.from({ length: runs }, () => `bench-${randomUUID()}`);
          let next = 0;
          let results: Arrivals[] = [];
          fleet.push(
            await loopSample(async () => {
              results = await all(() => collect(dispatcher.run(spec(model), { runId: runIds[next++] ?? '' })));
            }),
          );
          check(results.every((run) => types(run) === expected), 'many: a fleet run differs from runPi');
          const after = await usedMemory(client);
          memory.push((after - before) / runs);
          const sizes = await Promise.all(
            runIds.slice(0, 20).map(async (runId) => {
              const { stream, end, owner } = runKeys(PREFIX, runId);
              const each = await Promise.all([stream, end, owner].map((key) => client.memory('USAGE', key, 'SAMPLES', 0)));
              return each.reduce<number>((sum, bytes) => sum + (bytes ?? 0), 0);
            }),
          );
          keys.push(...sizes);
          streamEntries = await client.xlen(runKeys(PREFIX, runIds[0] ?? '').stream);
        } else {
          let results: Arrivals[] = [];
          local.push(
            await loopSample(async () => {
              results = await all(() => collect(localRun(model, env)));
            }),
          );
          check(results.every((run) => types(run) === expected), 'many: a local run differs');
        }
      }
    }
  } finally {
    await dispatcher.close();
    await Promise.all(started.map((worker) => worker.stop()));
  }
  return {
    runs,
    workers,
    concurrency,
    replaySpeed,
    repetitions,
    idle: loopRow(idle),
    fleet: loopRow(fleet),
    local: loopRow(local),
    p99Ratio: ratios(
      fleet.map((s) => s.p99),
      local.map((s) => s.p99),
    ),
    wallRatio: ratios(
      fleet.map((s) => s.wallMs),
      local.map((s) => s.wallMs),
    ),
    cpuRatio: ratios(
      fleet.map((s) => s.cpuMs),
      local.map((s) => s.cpuMs),
    ),
    usedMemoryPerRun: summarize(memory),
    keysPerRun: summarize(keys),
    streamEntries,
  };
}

export async function fleetLatencies(long: PiStream, sizes: FleetSizes): Promise<FleetResult> {
  const redis = await startRedis();
  const client = redis.client();
  const started: BenchWorker[] = [];
  try {
    const workloads: Workload[] = [
      { label: '`text` recording', repetitions: sizes.replays, model: 'text', queue: 'text', env: { PI_REPLAY_SPEED: '0' } },
      { label: '`tool_call_then_text` recording', repetitions: sizes.replays, model: 'tool_call_then_text', queue: 'tool', env: { PI_REPLAY_SPEED: '0' } },
      { label: `generated, ${long.deltas.toLocaleString('en')} text deltas`, repetitions: sizes.replays, model: 'long', queue: 'long', env: { PI_REPLAY_SPEED: '0', PI_REPLAY_TRANSCRIPT: long.path } },
      { label: '`text` recording, paced (PI_REPLAY_SPEED=1)', repetitions: sizes.pacedReplays, model: 'text', queue: 'paced', env: { PI_REPLAY_SPEED: '1' } },
    ];
    // Started together (they wait idle for their turn): each start is a second of CPU.
    const settings: WorkerSettings[] = [...workloads.map((workload) => ({ queue: workload.queue, workerName: workload.queue, env: workload.env })), { queue: 'cancel', workerName: 'cancel' }];
    const starts = await Promise.allSettled(settings.map((each) => startWorker(redis, each)));
    started.push(...starts.flatMap((start) => (start.status === 'fulfilled' ? [start.value] : [])));
    const failed = starts.find((start) => start.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    const log = (what: string): void => {
      if (process.env['BENCH_DEBUG'] === '1') console.error(`fleet: ${what} at ${(performance.now() / 1000).toFixed(1)} s`);
    };
    log('workers ready');
    const replay = await replays(redis, client, workloads, started);
    const cancelWorker = started[workloads.length];
    if (cancelWorker === undefined) throw new Error('no worker for the cancels');
    log('replays done');
    const cancel = await cancels(redis, cancelWorker, sizes.cancels);
    log('cancels done');
    const lost = [await losts(redis, client, 1000, 3000, sizes.losts)];
    if (sizes.testLosts > 0) lost.push(await losts(redis, client, 200, 1000, sizes.testLosts));
    log('losts done');
    const lostBaseline = await localKills(sizes.losts);
    const manyResult = await many(redis, client, sizes.manyRuns, sizes.manyRepetitions);
    log('many done');
    return { replay, cancel, lost, lostBaseline, many: manyResult };
  } finally {
    // Stopped already, unless a measure failed.
    await Promise.all(started.map((worker) => worker.stop()));
    client.disconnect();
    await redis.stop();
  }
}
