import { describe, expect, it } from '@jest/globals';
import { fileURLToPath } from 'node:url';
import { lastValueFrom, toArray } from 'rxjs';
import type { CliMessage } from '../../lib/index.js';
import { unusedPort } from '../helpers/redis-server.js';
import { startTaggedNode, type TaggedChild } from '../helpers/tagged-child.js';
import { fleetWorld, gone } from './fleet-world.js';

const world = fleetWorld();
const THROWING = fileURLToPath(new URL('./fixtures/throwing-on-error.ts', import.meta.url));
/** The code of the warning told the first time an onError throws. */
const ON_ERROR_THREW = 'AGENT_RX_ON_ERROR_THREW';

interface Line {
  readonly event: string;
  /** The run's message (`message` lines), or what an error or a warning said. */
  readonly message?: CliMessage | string;
  readonly code?: string;
  readonly calls?: number;
}

/** A dispatcher or a worker whose onError throws on every call, in a process of its own. */
function throwing(settings: { readonly side: 'dispatcher' | 'worker'; readonly url: string; readonly lostAfterMs?: number; readonly model?: string }): TaggedChild {
  return startTaggedNode([THROWING], 'AGENT_RX_FLEET_TEST', { FLEET_THROWING: JSON.stringify(settings) });
}

function lines(child: TaggedChild): Line[] {
  return child
    .stdout()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Line);
}

const messages = (child: TaggedChild): CliMessage[] => lines(child).flatMap((line) => (line.event === 'message' ? [line.message as CliMessage] : []));
const warnings = (child: TaggedChild): Line[] => lines(child).filter((line) => line.event === 'warning' && line.code === ON_ERROR_THREW);

describe('an onError that throws on every call', () => {
  it('does not crash a dispatcher whose Redis never answered: its run ends in-band (setup), it closes, and its process ends by itself', async () => {
    const child = throwing({ side: 'dispatcher', url: `redis://127.0.0.1:${String(await unusedPort())}`, lostAfterMs: 1000 });
    try {
      expect(await child.exitWithin(20_000)).toEqual({ code: 0, signal: null });
      expect(messages(child)).toEqual([expect.objectContaining({ type: 'terminal.failed', reason: 'setup', message: expect.stringContaining('ECONNREFUSED') })]);
      expect(lines(child).find((line) => line.event === 'closed')?.calls).toBeGreaterThan(1);
      expect(warnings(child)).toHaveLength(1);
    } finally {
      child.cleanUp();
    }
  });

  it('does not crash a worker that never reached Redis: it goes on through every error, and closes on SIGTERM', async () => {
    const child = throwing({ side: 'worker', url: `redis://127.0.0.1:${String(await unusedPort())}` });
    try {
      await child.waitForLine(/"event":"error","call":3/);
      child.child.kill('SIGTERM');
      expect(await child.exitWithin(10_000)).toEqual({ code: 0, signal: null });
      expect(lines(child).find((line) => line.event === 'closed')?.calls).toBeGreaterThanOrEqual(3);
      expect(warnings(child)).toHaveLength(1);
    } finally {
      child.cleanUp();
    }
  });

  it('crashes neither side when Redis dies under a run: the run ends lost in-band, the worker fences its agent and serves again', async () => {
    const worker = await world.startWorker('throwing-worker', { onErrorThrows: true });
    const dispatcher = throwing({ side: 'dispatcher', url: world.redis().url, lostAfterMs: 1500, model: 'fake_tool' });
    try {
      const update = JSON.parse(await dispatcher.waitForLine(/"type":"tool.update"/)) as { message: { output: string } };
      const { agentPid, toolPid } = JSON.parse(update.message.output) as { agentPid: number; toolPid: number };
      await world.redis().kill();
      // The caller's side: its run ends lost, in-band; it closes and its process ends by itself.
      expect(await dispatcher.exitWithin(20_000)).toEqual({ code: 0, signal: null });
      expect(messages(dispatcher).at(-1)).toMatchObject({ type: 'terminal.failed', reason: 'lost' });
      expect(warnings(dispatcher)).toHaveLength(1);
      // The worker's side: it stops the agent it can no longer vouch for, and lives on.
      await worker.waitFor((line) => line.event === 'ended' && line.stopped === 'unreachable');
      await gone([agentPid, toolPid]);
      await world.redis().restart();
      const again = await lastValueFrom(world.dispatcher({ lostAfterMs: 10_000 }).run({ agent: 'pi', options: { prompt: 'hi', model: 'text' } }).pipe(toArray()));
      expect(again.at(-1)).toMatchObject({ type: 'terminal.completed' });
      expect(worker.process.child.exitCode).toBeNull();
      expect(worker.lines().filter((line) => line.event === 'unhandled')).toEqual([]);
      expect(worker.lines().filter((line) => line.event === 'warning' && line.code === ON_ERROR_THREW)).toHaveLength(1);
    } finally {
      dispatcher.cleanUp();
      if (world.redis().pid() === -1) await world.redis().restart();
    }
  });
});
