import { describe, expect, it } from '@jest/globals';
import { lastValueFrom, toArray } from 'rxjs';
import { budget } from '../../lib/index.js';
import { fleetWorld } from './fleet-world.js';

// A budget piped on a fleet run: there is no local process to stop, so the run is unsubscribed (the
// dispatcher cancels it, the worker stops its agent) and the budget's own terminal ends it.

const world = fleetWorld();

describe('a budget on a fleet run', () => {
  it('cancels the run on its worker at the limit, and ends the stream with reason budget and the figures', async () => {
    const worker = await world.startWorker('budget-1', { queue: 'budget' });
    const run = world
      .dispatcher({ queue: 'budget' })
      .run({ agent: 'pi', options: { prompt: 'hi', model: 'fake_tool' } }, { runId: 'budgeted' })
      .pipe(budget({ toolCalls: 0 }));
    const messages = await lastValueFrom(run.pipe(toArray()));
    expect(messages.at(-1)).toMatchObject({ type: 'terminal.failed', reason: 'budget', budget: { limit: 'toolCalls', max: 0, used: 1 } });
    expect(messages.filter((message) => message.type === 'terminal.failed')).toHaveLength(1);
    // Its processes are gone when the worker says it ended.
    const ended = await worker.waitFor((line) => line.event === 'ended' && line.runId === 'budgeted');
    expect(ended.stopped).toBe('cancel');
  });
});
