import { afterEach, describe, expect, it } from '@jest/globals';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { activeRunCount, isTerminal, processLines, runPi, stopAllRuns, type CliMessage, type ProcessItem, type StopReport } from '../../lib/index.js';
import { spawnPacer, TURN_BUDGET_MS } from '../../lib/process/spawn-pacer.js';
import { collect, fixture, killLeftovers } from '../helpers/processes.js';

const node = process.execPath;

afterEach(async () => {
  await stopAllRuns();
  killLeftovers();
});

/** Spends this event-loop turn's spawn budget, so that the next runs subscribed in this turn wait for a later one. */
function spendTurnBudget(): void {
  const withdraw = spawnPacer.pace(() => {
    const until = performance.now() + TURN_BUDGET_MS + 2;
    while (performance.now() < until) {
      // Busy: a spawn as slow as a whole turn's budget.
    }
  });
  expect(withdraw).toBeNull();
}

/** A node script that creates `path` when it starts, then prints one line. */
const marksStart = (path: string): string[] => ['-e', `require('fs').writeFileSync(${JSON.stringify(path)}, 'started'); console.log('up')`];

/**
 * Lets a few event-loop turns and `ms` pass: the checks after it are of something that must not
 * happen (a spawn), so there is no event to await; the waiting spawn would have run in the first turn.
 */
async function turnsAndTime(ms: number): Promise<void> {
  for (let turn = 0; turn < 5; turn += 1) await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setTimeout(resolve, ms));
}

describe('spawns of a burst are paced over event-loop turns', () => {
  it('a run subscribed after the turn spent its spawn budget spawns in a later turn, with its whole output', async () => {
    spendTurnBudget();
    const items = collect(processLines(node, [fixture('lines.mjs'), '50']));
    expect(spawnPacer.waiting).toBe(1);
    const all: ProcessItem[] = await items;
    expect(all.flatMap((item) => (item.kind === 'line' ? [item.text] : []))).toEqual(Array.from({ length: 50 }, (_, i) => `line ${i}`));
    expect(all.at(-1)).toMatchObject({ kind: 'exit', exitCode: 0, startError: null });
  });

  it('40 runs that all wait start in order over later turns, each with its whole output', async () => {
    spendTurnBudget();
    const runs = Array.from({ length: 40 }, (_, i) => collect(processLines(node, [fixture('lines.mjs'), String(i + 1)])));
    expect(spawnPacer.waiting).toBe(40);
    const results = await Promise.all(runs);
    results.forEach((items, i) => {
      expect(items.filter((item) => item.kind === 'line')).toHaveLength(i + 1);
      expect(items.at(-1)).toMatchObject({ kind: 'exit', exitCode: 0 });
    });
    expect(spawnPacer.waiting).toBe(0);
  });

  it('unsubscribed while it waits: nothing is spawned, and the stop report says so', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agent-rx-pacing-'));
    try {
      const marker = join(dir, 'started');
      const reports: StopReport[] = [];
      spendTurnBudget();
      const subscription = processLines(node, marksStart(marker), {
        gracePeriodMs: 50,
        onStopped: (stop) => {
          reports.push(stop);
        },
      }).subscribe();
      expect(spawnPacer.waiting).toBe(1);
      subscription.unsubscribe();
      expect(spawnPacer.waiting).toBe(0);
      expect(reports).toEqual([expect.objectContaining({ pid: null, requested: true, cause: 'unsubscribe', killed: [], survivors: [], confirmed: true })]);
      await turnsAndTime(300);
      expect(existsSync(marker)).toBe(false);
      expect(activeRunCount()).toBe(0);
      expect(reports).toHaveLength(1);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it.each([
    ['at once', false],
    ['in a later turn', true],
  ])('a spawn that throws (an argument with a NUL byte) ends in-band with a start error, %s', async (_when, waits) => {
    const reports: StopReport[] = [];
    if (waits) spendTurnBudget();
    const items = collect(
      processLines(node, ['-e', 'a\0b'], {
        onStopped: (stop) => {
          reports.push(stop);
        },
      }),
    );
    expect(spawnPacer.waiting).toBe(waits ? 1 : 0);
    expect(await items).toEqual([expect.objectContaining({ kind: 'exit', pid: null, exitCode: null, startError: expect.objectContaining({ stage: 'spawn', code: 'EUNEXPECTED' }) })]);
    expect(reports).toEqual([expect.objectContaining({ pid: null, requested: false, killed: [] })]);
    expect(activeRunCount()).toBe(0);
  });

  it('stopAllRuns() while a runPi waits: terminal.failed (stopped), completion, and no process', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agent-rx-pacing-'));
    try {
      const marker = join(dir, 'started');
      const messages: CliMessage[] = [];
      const reports: StopReport[] = [];
      spendTurnBudget();
      const completed = new Promise<void>((resolve) => {
        runPi({
          prompt: 'x',
          executable: node,
          executableArgs: marksStart(marker),
          // Short: a second stop sequence would report within the wait below.
          gracePeriodMs: 50,
          onStopped: (stop) => {
            reports.push(stop);
          },
        }).subscribe({ next: (message) => messages.push(message), complete: resolve });
      });
      expect(spawnPacer.waiting).toBe(1);
      await stopAllRuns();
      await completed;
      expect(messages.filter(isTerminal)).toEqual([expect.objectContaining({ type: 'terminal.failed', reason: 'stopped' })]);
      expect(isTerminal(messages.at(-1) as CliMessage)).toBe(true);
      expect(reports).toEqual([expect.objectContaining({ pid: null, requested: true, cause: 'host' })]);
      // The teardown after the terminal finds the run over: no second stop, no grace timer left behind.
      await turnsAndTime(300);
      expect(existsSync(marker)).toBe(false);
      expect(reports).toHaveLength(1);
      expect(activeRunCount()).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
