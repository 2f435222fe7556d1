import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { filter, firstValueFrom, lastValueFrom, NEVER, share, toArray, type Observable } from 'rxjs';
import { checkRunSpec, createRunDispatcher, runKeys, WORKER_ENV, type RunDispatcher, type RunSpec } from '../../lib/fleet.js';
import { parseRunArgs } from '../../lib/cli/run-command.js';
import { AGENT_NAMES, CliMessageSchema, type CliMessage, type PermissionDecision, type PermissionRequested } from '../../lib/index.js';
import { startFakeModelServer, scenarioMarker, TOUCH_TOOL_COMMAND, type FakeModelServer } from '../conformance/fake-model-server.js';
import { createPiEnv, OPENAI_PROVIDER, type PiEnv } from '../conformance/pi-env.js';
import { isAlive } from '../helpers/processes.js';
import { startRedis, type RedisServer } from '../helpers/redis-server.js';
import { delay, ROOT, startTaggedNode, type TaggedChild } from '../helpers/tagged-child.js';
import { WORKER_SCRIPT, type WorkerLine, workerLog } from './fleet-world.js';
import { builtCli } from '../helpers/built-cli.js';

// Fleet runs whose permission requests cross machines: one worker process running the real pi
// (its permission extension, over RPC) against the fake model server, whose `touch_tool` scenario
// makes pi's bash run `touch touched-by-agent.txt` in the worker's folder.

const PI = fileURLToPath(new URL('../../node_modules/.bin/pi', import.meta.url));
const CLI_MAIN = await builtCli();
const TOUCHED = 'touched-by-agent.txt';
const WORKER_NAME = 'permission-1';
const touch = `${scenarioMarker('touch_tool')}touch a file`;

let server: FakeModelServer;
let piEnv: PiEnv;
let redis: RedisServer;
let worker: TaggedChild;
let dispatcher: RunDispatcher;

const workerSays = (match: (line: WorkerLine) => boolean, timeoutMs?: number): Promise<WorkerLine> => workerLog(worker).waitFor(match, timeoutMs);

/** The processes of the worker's runs (every one carries its name in WORKER_ENV), by command and pid. */
const agentProcesses = (): string[] => {
  const needle = Buffer.from(`${WORKER_ENV}=${WORKER_NAME}\0`);
  const found: string[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`).includes(needle) && isAlive(Number(entry))) found.push(`${readFileSync(`/proc/${entry}/comm`, 'utf8').trim()} (${entry})`);
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
};

async function noAgentLeft(timeoutMs = 10_000): Promise<string[]> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const left = agentProcesses();
    if (left.length === 0 || performance.now() > deadline) return left;
    await delay(50);
  }
}

const touched = (): boolean => existsSync(join(piEnv.cwd, TOUCHED));
const collect = <T>(source: Observable<T>): Promise<T[]> => lastValueFrom(source.pipe(toArray()));
const spec = (extra: Partial<RunSpec> = {}): RunSpec => ({ agent: 'pi', options: { prompt: touch }, ...extra }) as RunSpec;
const requestIn = (messages: readonly CliMessage[]): PermissionRequested => {
  const request = messages.find((message): message is PermissionRequested => message.type === 'permission.requested');
  if (request === undefined) throw new Error(`no permission.requested in ${JSON.stringify(messages.map((message) => message.type))}`);
  return request;
};

beforeAll(async () => {
  server = await startFakeModelServer();
  piEnv = await createPiEnv({ baseUrl: server.baseUrl });
  redis = await startRedis();
  worker = startTaggedNode([WORKER_SCRIPT], 'AGENT_RX_FLEET_PERMISSION', {
    FLEET_WORKER: JSON.stringify({
      url: redis.url,
      workerName: WORKER_NAME,
      concurrency: 2,
      allowedCwd: piEnv.cwd,
      pi: { executable: PI, provider: OPENAI_PROVIDER, model: 'recall', session: 'none', env: piEnv.env },
    }),
  });
  await workerSays((line) => line.event === 'ready');
  dispatcher = createRunDispatcher({ connection: redis.url, lostAfterMs: 3000, blockMs: 100 });
}, 60_000);

afterEach(async () => {
  expect(await noAgentLeft()).toEqual([]);
  rmSync(join(piEnv.cwd, TOUCHED), { force: true });
});

afterAll(async () => {
  await dispatcher.close();
  worker.cleanUp();
  await redis.stop();
  await server.close();
  await piEnv.cleanup();
});

describe("a fleet run with permission: 'ask'", () => {
  it('gives each request to the caller\u2019s callback, and its deny goes back to the worker: the tool does not run, the run completes', async () => {
    const asked: PermissionRequested[] = [];
    const messages = await collect(
      dispatcher.run(spec({ permission: 'ask' }), {
        permission: (request) => {
          asked.push(request);
          return 'deny';
        },
      }),
    );
    const request = requestIn(messages);
    expect(request).toMatchObject({ tool: 'bash', kind: 'execute', title: expect.stringContaining(TOUCH_TOOL_COMMAND) });
    expect(asked).toEqual([request]);
    expect(messages.filter((message) => message.type === 'permission.resolved')).toEqual([{ type: 'permission.resolved', requestId: request.requestId, decision: 'deny', by: 'caller' }]);
    expect(messages.at(-1)).toEqual(expect.objectContaining({ type: 'terminal.completed' }));
    expect(touched()).toBe(false);
  });

  it('an allow from the callback (a promise) runs the tool on the worker: the file is made', async () => {
    const messages = await collect(dispatcher.run(spec({ permission: 'ask' }), { permission: () => Promise.resolve<PermissionDecision>('allow') }));
    expect(messages).toContainEqual(expect.objectContaining({ type: 'permission.resolved', decision: 'allow', by: 'caller' }));
    expect(messages.at(-1)).toEqual(expect.objectContaining({ type: 'terminal.completed' }));
    expect(touched()).toBe(true);
  });

  it('no answer: the worker denies at permissionTimeoutMs, the callback\u2019s signal aborts, the run completes', async () => {
    let signal: AbortSignal | undefined;
    const messages = await collect(
      dispatcher.run(spec({ permission: 'ask', permissionTimeoutMs: 1500 }), {
        permission: (_request, given) => {
          signal = given;
          return NEVER;
        },
      }),
    );
    expect(messages).toContainEqual(expect.objectContaining({ type: 'permission.resolved', decision: 'deny', by: 'deadline' }));
    expect(signal?.aborted).toBe(true);
    expect(messages.at(-1)).toEqual(expect.objectContaining({ type: 'terminal.completed' }));
    expect(touched()).toBe(false);
  });

  it('any reader may answer with dispatcher.answer (the first answer counts; others, and unknown requests, are ignored)', async () => {
    const runId = 'answered-by-a-reader';
    const own = dispatcher.run(spec({ permission: 'ask', permissionTimeoutMs: 60_000 }), { runId }).pipe(share());
    const all = collect(own);
    const reader = createRunDispatcher({ connection: redis.url, blockMs: 100 });
    try {
      const { message: request } = await firstValueFrom(reader.follow(runId).pipe(filter((entry) => entry.message.type === 'permission.requested')));
      if (request.type !== 'permission.requested') throw new Error('not a request');
      await reader.answer(runId, 'no-such-request', 'deny');
      await reader.answer(runId, request.requestId, 'allow');
      await reader.answer(runId, request.requestId, 'deny');
      const messages = await all;
      expect(messages.filter((message) => message.type === 'permission.resolved')).toEqual([{ type: 'permission.resolved', requestId: request.requestId, decision: 'allow', by: 'caller' }]);
      expect(messages.at(-1)).toEqual(expect.objectContaining({ type: 'terminal.completed' }));
      expect(touched()).toBe(true);
      // After the run's end an answer is refused quietly.
      await reader.answer(runId, request.requestId, 'allow');
    } finally {
      await reader.close();
    }
  });

  it('an answer whose pub/sub message was lost is found by the worker with its next heartbeat', async () => {
    const runId = 'answer-without-message';
    const messages = dispatcher.run(spec({ permission: 'ask', permissionTimeoutMs: 60_000 }), { runId }).pipe(share());
    const all = collect(messages);
    const request = await firstValueFrom(messages.pipe(filter((message): message is PermissionRequested => message.type === 'permission.requested')));
    const client = redis.client();
    try {
      // What dispatcher.answer keeps, without its message.
      await client.hset(runKeys('agentrx', runId).answers, request.requestId, 'deny');
    } finally {
      client.disconnect();
    }
    const done = await all;
    expect(done).toContainEqual({ type: 'permission.resolved', requestId: request.requestId, decision: 'deny', by: 'caller' });
    expect(done.at(-1)).toEqual(expect.objectContaining({ type: 'terminal.completed' }));
    expect(touched()).toBe(false);
  });

  it('a caller that unsubscribes while a request waits: the run is cancelled, the worker\u2019s agent stopped, no process left', async () => {
    const runId = 'unsubscribed-while-asking';
    const messages = dispatcher.run(spec({ permission: 'ask' }), { runId, permission: () => NEVER }).pipe(share());
    const subscription = messages.subscribe();
    const request = await firstValueFrom(messages.pipe(filter((message): message is PermissionRequested => message.type === 'permission.requested')));
    subscription.unsubscribe();
    const ended = await workerSays((line) => line.event === 'ended' && line.runId === runId);
    expect(ended.stopped).toBe('cancel');
    expect(await noAgentLeft()).toEqual([]);
    // For every reader the request is resolved, once, before the run's end (the cancel's terminal denies it).
    const rest = (await collect(dispatcher.follow(runId))).map((entry) => entry.message);
    expect(rest.filter((message) => message.type === 'permission.resolved')).toEqual([{ type: 'permission.resolved', requestId: request.requestId, decision: 'deny', by: 'run-end' }]);
    expect(rest.at(-2)).toEqual({ type: 'permission.resolved', requestId: request.requestId, decision: 'deny', by: 'run-end' });
    expect(rest.at(-1)).toMatchObject({ type: 'terminal.failed', reason: 'aborted' });
    expect(touched()).toBe(false);
  });

  it('a callback that throws, or gives what is not a decision, errors the caller\u2019s stream and cancels the run', async () => {
    for (const [runId, permission, message] of [
      ['callback-throws', () => {
        throw new Error('no answer here');
      }, 'no answer here'],
      ['callback-not-a-decision', () => 'maybe' as PermissionDecision, 'the permission callback gave "maybe"'],
    ] as const) {
      const error = await collect(dispatcher.run(spec({ permission: 'ask' }), { runId, permission })).then(
        () => null,
        (caught: unknown) => caught,
      );
      expect(String(error)).toContain(message);
      const ended = await workerSays((line) => line.event === 'ended' && line.runId === runId);
      expect(ended.stopped).toBe('cancel');
      expect(await noAgentLeft()).toEqual([]);
    }
    expect(touched()).toBe(false);
  });
});

describe('a fleet run with a preset', () => {
  it("'deny-all' is decided on the worker: the request and its resolution (policy) are in the stream, the tool does not run", async () => {
    const messages = await collect(dispatcher.run(spec({ permission: 'deny-all' })));
    const request = requestIn(messages);
    expect(messages).toContainEqual({ type: 'permission.resolved', requestId: request.requestId, decision: 'deny', by: 'policy' });
    expect(messages.at(-1)).toEqual(expect.objectContaining({ type: 'terminal.completed' }));
    expect(touched()).toBe(false);
  });

  it('refuses at call time: a callback without ask, a decision that is not one; every agent\'s spec takes permission', async () => {
    expect(() => dispatcher.run(spec({ permission: 'deny-all' }), { permission: () => 'allow' })).toThrow("a permission callback needs a spec with permission: 'ask'");
    expect(() => dispatcher.run(spec(), { permission: () => 'allow' })).toThrow(TypeError);
    for (const agent of AGENT_NAMES) expect(() => checkRunSpec({ agent, options: { prompt: 'hi' }, permission: 'ask' })).not.toThrow();
    await expect(dispatcher.answer('some-run', 'some-request', 'maybe' as PermissionDecision)).rejects.toThrow(TypeError);
  });
});

describe('agent-rx run --fleet --approve', () => {
  const cli = (args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> =>
    new Promise((resolve) => {
      execFile(process.execPath, [CLI_MAIN, ...args], { cwd: ROOT, env: { ...process.env, NO_COLOR: '' } }, (error, stdout, stderr) => {
        resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr });
      });
    });

  it('none: the worker denies by policy; exit 0', async () => {
    const result = await cli(['run', '--fleet', redis.url, '--approve', 'none', '--json', touch]);
    expect(result.code).toBe(0);
    const messages = result.stdout
      .trimEnd()
      .split('\n')
      .map((line) => CliMessageSchema.parse(JSON.parse(line)));
    expect(messages).toContainEqual(expect.objectContaining({ type: 'permission.resolved', decision: 'deny', by: 'policy' }));
    expect(touched()).toBe(false);
  });

  it('ask: the terminal asker is the run\u2019s callback, its answer decides on the worker', async () => {
    const asked: PermissionRequested[] = [];
    const request = parseRunArgs(['--fleet', redis.url, '--approve', 'ask', touch], {
      ask: (permission) => {
        asked.push(permission);
        return 'allow';
      },
    });
    if (request.kind !== 'run') throw new Error(`not a run: ${JSON.stringify(request)}`);
    const messages = await collect(request.source());
    await request.stop?.();
    expect(asked).toHaveLength(1);
    expect(messages).toContainEqual(expect.objectContaining({ type: 'permission.resolved', decision: 'allow', by: 'caller' }));
    expect(messages.at(-1)).toEqual(expect.objectContaining({ type: 'terminal.completed' }));
    expect(touched()).toBe(true);
  });

  it('takes --approve for every agent', () => {
    for (const agent of AGENT_NAMES) expect(parseRunArgs(['--fleet', 'redis://127.0.0.1:1', '--agent', agent, '--approve', 'none', 'hi'])).toMatchObject({ kind: 'run', agent });
  });
});
