import { afterAll, afterEach, beforeAll } from '@jest/globals';
import { fileURLToPath } from 'node:url';
import { firstValueFrom, filter, type Observable } from 'rxjs';
import { createRunDispatcher, type RunDispatcher, type RunDispatcherOptions } from '../../lib/fleet.js';
import { isToolUpdate, type CliMessage } from '../../lib/index.js';
import { isAlive } from '../helpers/processes.js';
import { startRedis, type RedisServer } from '../helpers/redis-server.js';
import { delay, startTaggedNode, type TaggedChild } from '../helpers/tagged-child.js';

export const WORKER_SCRIPT = fileURLToPath(new URL('./fixtures/worker.ts', import.meta.url));
export const FLEET_AGENT = fileURLToPath(new URL('./fixtures/fleet-agent.mjs', import.meta.url));

/** What a test worker printed: its run events (`started`, `refused`, `ended`), `error`, `warning`, `unhandled`, `ready`, `closed`. */
export interface WorkerLine {
  readonly event: string;
  readonly runId?: string;
  readonly worker?: string;
  readonly why?: string;
  readonly stopped?: string | null;
  readonly message?: string;
  /** A warning's code. */
  readonly code?: string;
}

export interface TestWorker {
  readonly name: string;
  readonly process: TaggedChild;
  lines(): WorkerLine[];
  /** Resolves with the first line for which `match` holds. */
  waitFor(match: (line: WorkerLine) => boolean, timeoutMs?: number): Promise<WorkerLine>;
  /** SIGKILL, as a crash. */
  kill(): void;
}

export interface WorkerSettings {
  readonly queue?: string;
  readonly concurrency?: number;
  readonly heartbeatMs?: number;
  readonly heartbeatTtlMs?: number;
  readonly drainMs?: number;
  readonly allowedCwd?: string;
  /** The replay agent's pace (PI_REPLAY_SPEED): 0.2 unless told. */
  readonly replaySpeed?: string;
  /** Its onError throws on every call (after the error is printed). */
  readonly onErrorThrows?: boolean;
  /** The worker's pi settings (JSON), instead of the test agent's: e.g. the real pi and its configuration. */
  readonly pi?: Readonly<Record<string, unknown>>;
  /** The folder of its runs and sessions (with another folder, a session wakes under another path). */
  readonly workFolder?: string;
  /** The worker's catalog of MCP servers (`serveRuns({ mcpServers })`). */
  readonly mcpServers?: Readonly<Record<string, unknown>>;
  /** The worker traces its runs, its spans exported over OTLP/HTTP to this endpoint. */
  readonly otlpEndpoint?: string;
}

/** One Redis and the workers and dispatchers of a suite, all ended after it (workers and their agents by tag). */
export interface FleetWorld {
  readonly redis: () => RedisServer;
  startWorker(name: string, settings?: WorkerSettings): Promise<TestWorker>;
  dispatcher(options?: Partial<RunDispatcherOptions>): RunDispatcher;
}

export function fleetWorld(): FleetWorld {
  let redis: RedisServer | null = null;
  const workers: TestWorker[] = [];
  const dispatchers: RunDispatcher[] = [];
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterEach(async () => {
    await Promise.all(dispatchers.splice(0).map((dispatcher) => dispatcher.close()));
    for (const worker of workers.splice(0)) worker.process.cleanUp();
    // A fresh keyspace for the next test (the queue's jobs included).
    if (redis !== null) {
      const client = redis.client();
      await client.flushall().catch(() => undefined);
      client.disconnect();
    }
  });
  afterAll(async () => {
    await redis?.stop();
  });
  const server = (): RedisServer => {
    if (redis === null) throw new Error('Redis is not started');
    return redis;
  };
  return {
    redis: server,
    startWorker: async (name, settings = {}) => {
      const child = startTaggedNode([WORKER_SCRIPT], 'AGENT_RX_FLEET_TEST', {
        FLEET_WORKER: JSON.stringify({ url: server().url, workerName: name, ...settings }),
      });
      const log = workerLog(child, `worker ${name}`);
      const worker: TestWorker = {
        name,
        process: child,
        lines: log.lines,
        waitFor: log.waitFor,
        kill: () => {
          child.child.kill('SIGKILL');
        },
      };
      workers.push(worker);
      await worker.waitFor((line) => line.event === 'ready');
      return worker;
    },
    dispatcher: (options = {}) => {
      const dispatcher = createRunDispatcher({ connection: server().url, lostAfterMs: 3000, blockMs: 100, ...options });
      dispatchers.push(dispatcher);
      return dispatcher;
    },
  };
}

/** The pids the fixture agent tells in its tool.update: the agent's and its own-session tool's. */
export async function agentPids(messages: Observable<CliMessage>): Promise<{ agentPid: number; toolPid: number }> {
  const update = await firstValueFrom(messages.pipe(filter(isToolUpdate)));
  return JSON.parse(update.output) as { agentPid: number; toolPid: number };
}

/** Resolves once none of the pids is alive; rejects after `timeoutMs` naming the survivors. */
export async function gone(pids: readonly number[], timeoutMs = 10_000): Promise<number> {
  const started = performance.now();
  for (;;) {
    const alive = pids.filter(isAlive);
    if (alive.length === 0) return performance.now() - started;
    if (performance.now() - started > timeoutMs) throw new Error(`still alive after ${String(timeoutMs)} ms: ${alive.join(', ')}`);
    await delay(10);
  }
}

/** A worker process's JSON lines on stdout, and a wait for the first that matches (`who` names it in the error). */
export function workerLog(child: TaggedChild, who = 'the worker'): Pick<TestWorker, 'lines' | 'waitFor'> {
  const lines = (): WorkerLine[] =>
    child
      .stdout()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as WorkerLine);
  return {
    lines,
    waitFor: async (match, timeoutMs = 20_000) => {
      const deadline = performance.now() + timeoutMs;
      for (;;) {
        const found = lines().find(match);
        if (found !== undefined) return found;
        if (performance.now() > deadline) throw new Error(`${who}: no such line within ${String(timeoutMs)} ms; stdout:\n${child.stdout()}\nstderr:\n${child.stderr()}`);
        await delay(20);
      }
    },
  };
}
