import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { lastValueFrom, toArray, type Observable } from 'rxjs';
import type { CliMessage } from '../../lib/index.js';
import type { RunEntry } from '../../lib/fleet.js';
import { delay } from '../helpers/tagged-child.js';
import { fleetWorld, type TestWorker } from './fleet-world.js';

const world = fleetWorld();

/** Every reader's promise: exactly one terminal, the last message, then complete; within `ms`. */
function readWithin<T>(source: Observable<T>, ms: number): Promise<T[] | 'timed out'> {
  return Promise.race([lastValueFrom(source.pipe(toArray())), delay(ms).then(() => 'timed out' as const)]);
}

const isTerminal = (message: CliMessage): boolean => message.type === 'terminal.completed' || message.type === 'terminal.failed';

describe('fleet runs under random failures', () => {
  it('always end with exactly one terminal, last, for the caller and for a reader, whatever is killed, cancelled or restarted when', async () => {
    const event = fc.option(fc.integer({ min: 0, max: 1500 }), { nil: undefined });
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('text', 'fake_tool', 'tool_call_then_text'), event, event, event, async (model, killAt, cancelAt, restartAt) => {
        const workers: TestWorker[] = [await world.startWorker('prop-a'), await world.startWorker('prop-b')];
        const dispatcher = world.dispatcher({ lostAfterMs: 2000 });
        const runId = `prop-${String(Date.now())}`;
        const seen: CliMessage[] = [];
        const state = { completed: false };
        // What stops a run that does not end by itself: a kill of the worker running it, or Redis
        // restarted (empty) while it ran. A kill before any worker took it hits an idle worker.
        const stopped = { byKill: false, byRestart: false };
        const running = (): boolean => workers.some((worker) => worker.lines().some((line) => line.runId === runId && line.event === 'started'));
        const subscription = dispatcher.run({ agent: 'pi', options: { prompt: 'hi', model } }, { runId }).subscribe({
          next: (message) => seen.push(message),
          complete: () => {
            state.completed = true;
          },
        });
        const reader = readWithin<RunEntry>(dispatcher.follow(runId), 20_000);
        const actions: Promise<void>[] = [];
        if (killAt !== undefined) {
          actions.push(
            delay(killAt).then(() => {
              // The worker that took it, if any yet; else either.
              const runner = workers.find((worker) => worker.lines().some((line) => line.runId === runId && line.event === 'started'));
              stopped.byKill = runner !== undefined;
              (runner ?? workers[0])?.kill();
            }),
          );
        }
        if (cancelAt !== undefined) {
          actions.push(
            delay(cancelAt).then(() => {
              subscription.unsubscribe();
            }),
          );
        }
        if (restartAt !== undefined) actions.push(delay(restartAt).then(async () => {
          stopped.byRestart = running();
          await world.redis().kill();
          await world.redis().restart();
        }));
        await Promise.all(actions);
        const entries = await reader;
        // A run that is never cancelled ends: fake_tool only when stopped.
        if (cancelAt === undefined && (model !== 'fake_tool' || stopped.byKill || stopped.byRestart)) {
          const deadline = performance.now() + 20_000;
          while (!state.completed && performance.now() < deadline) await delay(20);
          expect(state.completed).toBe(true);
          expect(seen.filter(isTerminal)).toHaveLength(1);
          expect(isTerminal(seen.at(-1) as CliMessage)).toBe(true);
        }
        subscription.unsubscribe();
        if (entries !== 'timed out') {
          const terminals = entries.filter((entry) => isTerminal(entry.message));
          expect(terminals).toHaveLength(1);
          expect(isTerminal((entries.at(-1) as RunEntry).message)).toBe(true);
        } else {
          // Only a run nobody stops can outlast the reader.
          expect(model === 'fake_tool' && !stopped.byKill && !stopped.byRestart && cancelAt === undefined).toBe(true);
        }
        await dispatcher.close();
        for (const worker of workers) worker.process.cleanUp();
        const client = world.redis().client();
        await client.flushall().catch(() => undefined);
        client.disconnect();
      }),
      { numRuns: 8, seed: Number(process.env['FLEET_PROPERTY_SEED'] ?? Date.now() % 100_000), endOnFailure: true },
    );
  }, 400_000);
});
