import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lastValueFrom, toArray, type Observable } from 'rxjs';
import { Queue } from 'bullmq';
import { createRunDispatcher, WORKER_ENV, type RunDispatcher, type RunEntry } from '../../lib/fleet.js';
import { collectRunResult } from '../../lib/index.js';
import { piSessionProtocol } from '../../lib/agents/pi/session.js';
import { startFakeModelServer, type FakeModelServer } from '../conformance/fake-model-server.js';
import { createPiEnv, OPENAI_PROVIDER, type PiEnv } from '../conformance/pi-env.js';
import { imagesInRequest, JSON_OK_VALUE, scenarioMarker, testPng } from '../conformance/scenarios.js';
import { Answer } from '../conformance/prompt-suite.js';
import { isAlive } from '../helpers/processes.js';
import { startRedis, type RedisServer } from '../helpers/redis-server.js';
import { delay, startTaggedNode, type TaggedChild } from '../helpers/tagged-child.js';
import { WORKER_SCRIPT, type WorkerLine, workerLog } from './fleet-world.js';

// Fleet runs with prompt parts and typed answers: one worker process running the real pi against
// the fake model server; the dispatcher reads the caller's images and files and makes the zod
// schema JSON Schema, the worker validates the answer, the dispatcher checks it again with zod.

const PI = fileURLToPath(new URL('../../node_modules/.bin/pi', import.meta.url));
const WORKER_NAME = 'prompt-1';
const QUEUE = 'agent-rx';

let server: FakeModelServer;
let piEnv: PiEnv;
let redis: RedisServer;
let worker: TaggedChild;
let dispatcher: RunDispatcher;
/** The caller's own folder: what it reads is not the worker's. */
let callerFolder: string;
const png = testPng();

const workerSays = (match: (line: WorkerLine) => boolean, timeoutMs?: number): Promise<WorkerLine> => workerLog(worker).waitFor(match, timeoutMs);

/** The processes of the worker's runs still alive (every one carries the worker's name). */
function agentProcesses(): number[] {
  const needle = Buffer.from(`${WORKER_ENV}=${WORKER_NAME}\0`);
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/environ`).includes(needle) && isAlive(pid);
      } catch {
        return false;
      }
    });
}

const collect = <T>(source: Observable<T>): Promise<T[]> => lastValueFrom(source.pipe(toArray()));
/** The model requests made since `from`. */
const requestsSince = (from: number) => server.requests.slice(from).filter((request) => request.method === 'POST');
/** The run's own stream, as the worker wrote it. */
const workerTerminal = async (runId: string) => (await collect(dispatcher.follow(runId))).map((entry: RunEntry) => entry.message).at(-1);

beforeAll(async () => {
  server = await startFakeModelServer();
  piEnv = await createPiEnv({ baseUrl: server.baseUrl });
  redis = await startRedis();
  callerFolder = mkdtempSync(join(tmpdir(), 'agent-rx-caller-'));
  worker = startTaggedNode([WORKER_SCRIPT], 'AGENT_RX_FLEET_PROMPT', {
    FLEET_WORKER: JSON.stringify({
      url: redis.url,
      workerName: WORKER_NAME,
      queue: QUEUE,
      concurrency: 2,
      allowedCwd: piEnv.cwd,
      pi: { executable: PI, provider: OPENAI_PROVIDER, model: 'recall', session: 'none', env: piEnv.env },
    }),
  });
  await workerSays((line) => line.event === 'ready');
  dispatcher = createRunDispatcher({ connection: redis.url, queue: QUEUE, lostAfterMs: 3000, blockMs: 100 });
}, 60_000);

afterEach(async () => {
  const deadline = performance.now() + 10_000;
  while (agentProcesses().length > 0 && performance.now() < deadline) await delay(50);
  expect(agentProcesses()).toEqual([]);
});

afterAll(async () => {
  await dispatcher.close();
  worker.cleanUp();
  await redis.stop();
  await server.close();
  await piEnv.cleanup();
  rmSync(callerFolder, { recursive: true, force: true });
});

describe('a fleet run with outputSchema (zod)', () => {
  it('json_ok: the worker validates the answer, and output is typed through the zod schema here', async () => {
    const runId = 'typed-ok';
    const result = await collectRunResult(dispatcher.run({ agent: 'pi', options: { prompt: `${scenarioMarker('json_ok')}Answer as JSON.`, outputSchema: Answer } }, { runId }));
    if (!result.ok) throw new Error(`the run failed: ${result.terminal?.message ?? 'incomplete'}`);
    const output: { answer: string; n: number } = result.output;
    expect(output).toEqual(JSON_OK_VALUE);
    // The worker's own terminal already held the validated value.
    expect(await workerTerminal(runId)).toMatchObject({ type: 'terminal.completed', output: JSON_OK_VALUE });
  }, 60_000);

  it('json_ok against a zod refinement the JSON Schema cannot carry: the worker completes, the caller\u2019s check fails it (output-schema)', async () => {
    const runId = 'typed-refined';
    const Big = Answer.refine((value) => value.n > 100, { error: 'n must be above 100' });
    const result = await collectRunResult(dispatcher.run({ agent: 'pi', options: { prompt: `${scenarioMarker('json_ok')}Answer as JSON.`, outputSchema: Big } }, { runId }));
    expect(result.terminal).toMatchObject({ type: 'terminal.failed', reason: 'output-schema', outputIssues: [{ path: '', message: 'n must be above 100' }], answer: JSON.stringify(JSON_OK_VALUE) });
    expect(await workerTerminal(runId)).toMatchObject({ type: 'terminal.completed', output: JSON_OK_VALUE });
  }, 60_000);

  it('json_bad: the worker ends the run with output-schema, naming the field', async () => {
    const runId = 'typed-bad';
    const result = await collectRunResult(dispatcher.run({ agent: 'pi', options: { prompt: `${scenarioMarker('json_bad')}Answer as JSON.`, outputSchema: Answer } }, { runId }));
    expect(result.terminal).toMatchObject({ type: 'terminal.failed', reason: 'output-schema' });
    if (result.terminal?.type !== 'terminal.failed') throw new Error('not failed');
    expect(result.terminal.outputIssues?.map((issue) => issue.path)).toContain('answer');
    expect(await workerTerminal(runId)).toMatchObject({ type: 'terminal.failed', reason: 'output-schema' });
  }, 60_000);
});

describe('a fleet run with prompt parts', () => {
  it("a file read on the caller's machine: its text reaches the model through the worker", async () => {
    const brief = join(callerFolder, 'brief.txt');
    writeFileSync(brief, 'The launch code is ZEBRA-7731.\n');
    const from = server.requests.length;
    const result = await collectRunResult(dispatcher.run({ agent: 'pi', options: { prompt: [`${scenarioMarker('echo')}Summarize the brief.`, { type: 'file', path: brief }] } }));
    expect(result.terminal).toMatchObject({ type: 'terminal.completed' });
    const bodies = requestsSince(from).map((request) => JSON.stringify(request.body));
    expect(bodies.some((body) => body.includes('ZEBRA-7731') && body.includes(JSON.stringify(`<file path=${JSON.stringify(brief)}>`).slice(1, -1)))).toBe(true);
  }, 60_000);

  // pi's sessions take images once its protocol says so (`prompts.image`); until then the worker's
  // run refuses the image in-band, naming pi and the part, so the part reached its run options.
  const piTakesImages = piSessionProtocol().prompts?.image === true;
  it(`an image read on the caller's machine reaches the worker's pi run: ${piTakesImages ? 'its exact bytes reach the model' : "refused in-band (setup) naming pi and the part, until pi's sessions take images"}`, async () => {
    const pixel = join(callerFolder, 'pixel.png');
    writeFileSync(pixel, png.bytes);
    const from = server.requests.length;
    const result = await collectRunResult(dispatcher.run({ agent: 'pi', options: { prompt: [`${scenarioMarker('echo')}What is in this picture?`, { type: 'image', path: pixel }] } }));
    if (piTakesImages) {
      expect(result.terminal).toMatchObject({ type: 'terminal.completed' });
      expect(requestsSince(from).flatMap((request) => imagesInRequest(request.body))).toContainEqual({ mimeType: 'image/png', data: png.base64 });
    } else {
      expect(result.terminal).toMatchObject({ type: 'terminal.failed', reason: 'setup', message: 'the worker refused the run: agent-rx: pi runs cannot take an image (prompt[1])' });
      expect(requestsSince(from)).toEqual([]);
    }
  }, 60_000);

  it('the worker still refuses a folder it does not allow, whatever the parts', async () => {
    const result = await collectRunResult(dispatcher.run({ agent: 'pi', options: { prompt: ['hi', { type: 'image', data: png.bytes, mimeType: 'image/png' }], cwd: callerFolder } }));
    expect(result.terminal).toMatchObject({ type: 'terminal.failed', reason: 'setup', message: `the worker refused the run: the working directory ${callerFolder} is not one this worker allows` });
  });

  it('a part that cannot be read throws a TypeError at call time, before anything is enqueued', () => {
    const missing = join(callerFolder, 'missing.png');
    const run = () => dispatcher.run({ agent: 'pi', options: { prompt: ['x', { type: 'image', path: missing }] } });
    expect(run).toThrow(TypeError);
    expect(run).toThrow(`agent-rx: options.prompt[1]: cannot read ${missing} (ENOENT)`);
  });

  it('a spec put on the queue with an image by path (not through the dispatcher) is refused by the worker with a clear error; nothing runs', async () => {
    const queue = new Queue(QUEUE, { connection: { path: redis.path } });
    const runId = 'raw-path-image';
    try {
      await queue.add('run', { agent: 'pi', options: { prompt: ['x', { type: 'image', path: '/srv/caller/shot.png' }] } }, { jobId: runId, attempts: 1, removeOnComplete: true, removeOnFail: true });
      expect(await workerSays((line) => line.event === 'refused' && line.runId === runId)).toMatchObject({ why: 'invalid' });
      expect(await workerTerminal(runId)).toMatchObject({
        type: 'terminal.failed',
        reason: 'setup',
        message: expect.stringContaining("not a run spec: options.prompt[1] is an image by path: a spec carries images as base64 data with a mimeType") as unknown as string,
      });
    } finally {
      await queue.close();
    }
  });
});
