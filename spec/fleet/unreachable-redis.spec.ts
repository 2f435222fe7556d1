import { describe, expect, it } from '@jest/globals';
import { fileURLToPath } from 'node:url';
import { lastValueFrom, toArray, type Observable } from 'rxjs';
import { createRunDispatcher, type RunDispatcher } from '../../lib/fleet.js';
import { isRetryableFailure, retryAgentRun, type CliMessage, type TerminalFailed } from '../../lib/index.js';
import { unusedPort } from '../helpers/redis-server.js';
import { delay, startTaggedNode, type TaggedChild } from '../helpers/tagged-child.js';
import { fleetWorld } from './fleet-world.js';

const world = fleetWorld();
const collect = <T>(source: Observable<T>): Promise<T[]> => lastValueFrom(source.pipe(toArray()));
const spec = { agent: 'pi', options: { prompt: 'hi', model: 'text' } } as const;

/** A dispatcher of Redis at `connection`, closed by the test. */
async function using<T>(connection: string, lostAfterMs: number, test: (dispatcher: RunDispatcher) => Promise<T>): Promise<T> {
  const dispatcher = createRunDispatcher({ connection, lostAfterMs, blockMs: 100 });
  try {
    return await test(dispatcher);
  } finally {
    await dispatcher.close();
  }
}

describe('a fleet run whose Redis cannot be reached', () => {
  it('ends setup when Redis never answered: what failed, where, and why; not retryable, and retryAgentRun does not retry it', async () => {
    const port = await unusedPort();
    await using(`redis://127.0.0.1:${String(port)}`, 1000, async (dispatcher) => {
      const startedAt = performance.now();
      const messages = await collect(dispatcher.run(spec).pipe(retryAgentRun({ delay: 0 })));
      const expected = `the fleet's Redis at 127.0.0.1:${String(port)} could not be reached: connect ECONNREFUSED 127.0.0.1:${String(port)}`;
      expect(messages).toEqual([expect.objectContaining({ type: 'terminal.failed', reason: 'setup', message: expected })]);
      expect(isRetryableFailure(messages[0] as TerminalFailed)).toBe(false);
      // It waited for Redis to come up (lostAfterMs), once: not a new attempt per retry.
      expect(performance.now() - startedAt).toBeGreaterThanOrEqual(900);
      const [entry] = await collect(dispatcher.follow('never-enqueued'));
      expect(entry?.message).toMatchObject({ type: 'terminal.failed', reason: 'setup', message: expected });
    });
  });

  it('stops waiting for a Redis that never answered when the dispatcher is closed: the run ends stopped', async () => {
    const port = String(await unusedPort());
    const dispatcher = createRunDispatcher({ connection: `redis://127.0.0.1:${port}`, lostAfterMs: 600_000 });
    const messages = collect(dispatcher.run(spec));
    await delay(300);
    await dispatcher.close();
    expect(await messages).toEqual([expect.objectContaining({ type: 'terminal.failed', reason: 'stopped', message: 'the dispatcher was closed before the run was put on the queue' })]);
  });

  it('waits lostAfterMs for a Redis that never answered yet: one that comes up a moment later runs the run', async () => {
    await world.redis().kill();
    await using(world.redis().url, 10_000, async (dispatcher) => {
      const messages = collect(dispatcher.run(spec));
      await delay(1500);
      await world.redis().restart();
      await world.startWorker('late-redis');
      expect((await messages).at(-1)).toMatchObject({ type: 'terminal.completed' });
    }).finally(async () => {
      if (world.redis().pid() === -1) await world.redis().restart();
    });
  });

  it('ends lost, retryable, when Redis answered and went away, with the connection\u2019s error rather than ioredis\u2019s retry count', async () => {
    await using(world.redis().url, 1000, async (dispatcher) => {
      // Answered once: a reader of a run nobody knows is told so by Redis.
      expect((await collect(dispatcher.follow('unknown'))).map((entry) => entry.message)).toEqual([expect.objectContaining({ reason: 'lost', message: expect.stringContaining('no run unknown is known') })]);
      await world.redis().kill();
      try {
        const messages: CliMessage[] = await collect(dispatcher.run(spec));
        expect(messages).toEqual([
          expect.objectContaining({ type: 'terminal.failed', reason: 'lost', message: `the run could not be put on the queue at ${world.redis().path}: connect ECONNREFUSED ${world.redis().path}` }),
        ]);
        expect(isRetryableFailure(messages[0] as TerminalFailed)).toBe(true);
      } finally {
        await world.redis().restart();
      }
    });
  });
});

const CLOSING_WORKER = fileURLToPath(new URL('./fixtures/closing-worker.ts', import.meta.url));

/** A worker process that closes on SIGTERM and must then end by itself. */
function closingWorker(url: string): TaggedChild {
  return startTaggedNode([CLOSING_WORKER], 'AGENT_RX_FLEET_TEST', { FLEET_WORKER: JSON.stringify({ url, drainMs: 2000 }) });
}

/** close() settles, and leaves nothing behind that keeps the process alive: it ends by itself, well within a generous bound. */
async function closesAndEnds(worker: TaggedChild): Promise<void> {
  worker.child.kill('SIGTERM');
  expect(await worker.exitWithin(10_000)).toEqual({ code: 0, signal: null });
  expect(worker.stdout()).toMatch(/"event":"closed"/);
}

describe('a worker (serveRuns) whose Redis cannot be reached', () => {
  it('closes when it never reached Redis: ready and close() settle at once, and nothing is left to keep its process alive', async () => {
    const port = String(await unusedPort());
    const worker = closingWorker(`redis://127.0.0.1:${port}`);
    try {
      await worker.waitForLine(/"event":"error".*ECONNREFUSED/);
      await closesAndEnds(worker);
      expect(worker.stdout()).not.toMatch(/"event":"ready"/);
    } finally {
      worker.cleanUp();
    }
  });

  it('closes when Redis died under it: close() settles, and nothing is left to keep its process alive', async () => {
    const worker = closingWorker(world.redis().url);
    try {
      await worker.waitForLine(/"event":"ready"/);
      await world.redis().kill();
      await worker.waitForLine(/"event":"error"/);
      await closesAndEnds(worker);
    } finally {
      worker.cleanUp();
      await world.redis().restart();
    }
  });
});
