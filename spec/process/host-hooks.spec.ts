import { afterEach, describe, expect, it } from '@jest/globals';
import { processLines, stopAllRuns } from '../../lib/index.js';
import { readFileSync } from 'node:fs';
import { installHostExitHooks, removeHostExitHooks } from '../../lib/process/host-exit.js';
import { keeperPid } from '../../lib/process/keeper.js';
import { fixture, startUntil } from '../helpers/processes.js';

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
const counts = () => SIGNALS.map((signal) => process.listenerCount(signal)).concat(process.listenerCount('exit'));

afterEach(async () => {
  await stopAllRuns();
  removeHostExitHooks();
});

describe('host exit hooks', () => {
  it('are installed while a run is active and removed when none is: an idle host is left as it was', async () => {
    const before = counts();
    const run = await startUntil('forever.mjs', [], (text) => text.startsWith('ready'));
    expect(counts()).toEqual(before.map((count) => count + 1));
    run.stop();
    await run.stopped;
    expect(counts()).toEqual(before);
  });

  it('start the keeper with the first run, in a session of its own, and keep it for later runs (Linux)', async () => {
    if (process.platform !== 'linux') return;
    const run = await startUntil('forever.mjs', [], (text) => text.startsWith('ready'));
    const keeper = keeperPid();
    expect(keeper).toBeDefined();
    const stat = readFileSync(`/proc/${String(keeper)}/stat`, 'latin1');
    const [, , pgrp, session] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    expect([Number(pgrp), Number(session)]).toEqual([keeper, keeper]);
    run.stop();
    await run.stopped;
    const again = await startUntil('forever.mjs', [], (text) => text.startsWith('ready'));
    expect(keeperPid()).toBe(keeper);
    again.stop();
    await again.stopped;
  });

  it('keep their signal listener in front of any the host adds later, even with prependOnceListener', async () => {
    installHostExitHooks(() => undefined);
    const hostListener = (): void => undefined;
    process.prependOnceListener('SIGTERM', hostListener);
    process.prependListener('SIGHUP', hostListener);
    // Put back in front on the next microtask.
    await Promise.resolve();
    for (const signal of ['SIGTERM', 'SIGHUP'] as const) {
      // `listeners` unwraps a once listener: the host's is second now, behind the hook's own.
      expect(process.listeners(signal)).toHaveLength(2);
      expect(process.listeners(signal)[1]).toBe(hostListener);
    }
    process.removeListener('SIGTERM', hostListener);
    process.removeListener('SIGHUP', hostListener);
    removeHostExitHooks();
    expect(process.rawListeners('SIGTERM')).toHaveLength(0);
  });

  it('do nothing when a run ends by itself: processLines completes and the hooks are gone', async () => {
    const before = counts();
    const items: unknown[] = [];
    await new Promise<void>((resolve) => {
      processLines(process.execPath, [fixture('lines.mjs'), '2'], {
        onStopped: () => {
          resolve();
        },
      }).subscribe((item) => items.push(item));
    });
    expect(items).toHaveLength(3);
    expect(counts()).toEqual(before);
  });
});
