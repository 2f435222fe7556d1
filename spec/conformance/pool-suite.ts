import { afterEach, expect, it } from '@jest/globals';
import { collectRunResult, type AgentPool } from '../../lib/index.js';
import { isAlive } from '../helpers/processes.js';
import { describeProcesses, type ProcessTag } from '../helpers/tagged-processes.js';
import type { FakeModelServer } from './fake-model-server.js';
import { Answer } from './prompt-suite.js';
import { imagesInRequest, JSON_OK_VALUE, scenarioMarker, testPng } from './scenarios.js';
import { parentOf, SessionDriver } from './session-driver.js';

/** One agent as the shared pool cases need it. */
export interface PoolAgent {
  readonly name: string;
  /** Carried by every process of the pool's sessions. */
  readonly tag: ProcessTag;
  readonly server: FakeModelServer;
  /** `createAgentPool` of the agent, with its session options of the spec (the `recall` scenario by default). */
  pool(size: number): AgentPool;
}

/** The agents' root processes (the tagged processes this test process started), sorted. */
function roots(tag: ProcessTag): number[] {
  return tag
    .processes()
    .filter((entry) => parentOf(entry.pid) === process.pid)
    .map((entry) => entry.pid)
    .sort();
}

/** Waits until `count` agents run (at most 60 s); their pids. */
async function rootsWhen(tag: ProcessTag, count: number): Promise<number[]> {
  for (let waited = 0; waited < 60_000; waited += 25) {
    const found = roots(tag);
    if (found.length === count) return found;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`expected ${String(count)} agents; found ${describeProcesses(tag.processes())}`);
}

/** Waits until `pid` has exited (at most 30 s). */
async function gone(pid: number): Promise<boolean> {
  for (let waited = 0; isAlive(pid) && waited < 30_000; waited += 25) await new Promise((resolve) => setTimeout(resolve, 25));
  return !isAlive(pid);
}

/**
 * What every agent does from a pool (`createAgentPool`): a process started before anyone asked
 * serves the first run or session taken, and only it: a typed run with an image, a session's turns;
 * a replacement is started; `close` ends the rest. (Unsubscribing a taken session stops its process
 * only: the pool's own spec shows it on real processes, the session cases on each agent.)
 */
export function poolConformance(agent: () => PoolAgent): void {
  const pools: AgentPool[] = [];
  const drivers: SessionDriver[] = [];

  afterEach(async () => {
    for (const driver of drivers.splice(0)) driver.unsubscribe();
    await Promise.all(pools.splice(0).map((pool) => pool.close()));
    expect(describeProcesses(await agent().tag.waitUntilNone(15_000))).toBe('none');
  });

  it('a pooled run (an image, a schema) and a pooled session are each served by a process started before they were taken', async () => {
    const { tag, server } = agent();
    const pool = agent().pool(1);
    pools.push(pool);
    const [first] = await rootsWhen(tag, 1);
    const png = testPng();
    const from = server.requests.length;
    const result = await collectRunResult(pool.run([`${scenarioMarker('json_ok')}Answer as JSON.`, { type: 'image', data: png.bytes, mimeType: 'image/png' }], { outputSchema: Answer }));
    if (!result.ok) throw new Error(`the pooled run failed: ${result.terminal?.message ?? 'incomplete'}`);
    const output: { answer: string; n: number } = result.output;
    expect(output).toEqual(JSON_OK_VALUE);
    const requests = server.requests.slice(from).filter((request) => request.method === 'POST');
    expect(requests.flatMap((request) => imagesInRequest(request.body))).toContainEqual({ mimeType: 'image/png', data: png.base64 });
    // The process that was waiting served the run, and ended with it; its replacement waits.
    expect(await gone(first as number)).toBe(true);
    const [second] = await rootsWhen(tag, 1);
    expect(second).not.toBe(first);

    const session = new SessionDriver(() => pool.session());
    drivers.push(session);
    session.send({ type: 'prompt', text: 'first question' });
    expect(await session.nextOf('turn.completed', 90_000)).toMatchObject({ turn: 1 });
    expect(session.answer(1)).toBe('User texts in context: 1 ("first question").');
    session.end();
    expect((await session.done).at(-1)?.type).toBe('terminal.completed');
    expect(await gone(second as number)).toBe(true);
  });
}
