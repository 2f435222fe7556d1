import { processLines, type StopReport } from '../lib/index.js';
import { fixture, isAlive, summarize, type Summary } from './util.js';

interface Measured {
  readonly label: string;
  readonly summary: Summary;
  readonly survivors: number;
}

/**
 * Unsubscribe → the whole tree gone, measured with a `/proc` poll independent of the library's
 * own report: the root and (when there is one) its grandchild in another session.
 */
async function cancelOnce(script: string, args: readonly string[], gracePeriodMs: number): Promise<{ ms: number; survivors: number }> {
  let unsubscribedAt = 0;
  let pids: number[] = [];
  const report = await new Promise<StopReport>((resolve, reject) => {
    const subscription = processLines(process.execPath, [fixture(script), ...args], { gracePeriodMs, onStopped: resolve }).subscribe({
      next: (item) => {
        if (item.kind !== 'line') return;
        pids = [...item.text.matchAll(/\d+/g)].map((match) => Number(match[0]));
        unsubscribedAt = performance.now();
        subscription.unsubscribe();
      },
      error: reject,
    });
  });
  const all = [...new Set([...pids, report.pid ?? 0])].filter((pid) => pid > 0);
  while (all.some(isAlive) && performance.now() - unsubscribedAt < 10_000) await new Promise((resolve) => setImmediate(resolve));
  const ms = performance.now() - unsubscribedAt;
  return { ms, survivors: all.filter(isAlive).length };
}

async function measure(label: string, script: string, args: readonly string[], runs: number, gracePeriodMs: number): Promise<Measured> {
  const samples: number[] = [];
  let survivors = 0;
  for (let i = 0; i < runs; i += 1) {
    const result = await cancelOnce(script, args, gracePeriodMs);
    samples.push(result.ms);
    survivors += result.survivors;
  }
  return { label, summary: summarize(samples), survivors };
}

export async function cancelLatency(runs = 20): Promise<Measured[]> {
  return [
    await measure('cooperative (exits on SIGINT)', 'forever.mjs', [], runs, 2000),
    await measure('cooperative root + grandchild in its own session', 'detached-grandchild.mjs', [], runs, 2000),
    await measure('hostile tree (ignores SIGTERM/SIGINT), grace 2000 ms', 'detached-grandchild.mjs', ['hostile'], Math.min(runs, 5), 2000),
  ];
}
