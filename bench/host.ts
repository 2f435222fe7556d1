import { processLines, stopAllRuns } from '../lib/index.js';
import { fixture, isAlive, ratios, runWorker, summarize, type Summary } from './util.js';

export interface KeeperCost {
  readonly repetitions: number;
  /** Time the host spends starting the keeper (a synchronous spawn). */
  readonly ensureMs: Summary;
  /** Start → the keeper's script runs. */
  readonly keeperReadyMs: Summary;
  readonly keeperRssKB: Summary;
  /** Baseline: spawn of the smallest Node process, → its listener is installed; its RSS. */
  readonly nodeSpawnMs: Summary;
  readonly nodeReadyMs: Summary;
  readonly nodeRssKB: Summary;
  readonly rssRatio: Summary;
  readonly readyRatio: Summary;
}

interface KeeperSample {
  ensureMs: number;
  keeperReadyMs: number;
  keeperRssKB: number;
  nodeSpawnMs: number;
  nodeReadyMs: number;
  nodeRssKB: number;
}

/** The keeper's start-up and memory, each sample in a fresh host, against a second Node process. */
export async function keeperCost(repetitions: number): Promise<KeeperCost> {
  const samples: KeeperSample[] = [];
  for (let i = 0; i < repetitions; i += 1) samples.push(await runWorker<KeeperSample>('keeper-cost.ts', []));
  const of = (key: keyof KeeperSample): number[] => samples.map((sample) => sample[key]);
  return {
    repetitions,
    ensureMs: summarize(of('ensureMs')),
    keeperReadyMs: summarize(of('keeperReadyMs')),
    keeperRssKB: summarize(of('keeperRssKB')),
    nodeSpawnMs: summarize(of('nodeSpawnMs')),
    nodeReadyMs: summarize(of('nodeReadyMs')),
    nodeRssKB: summarize(of('nodeRssKB')),
    rssRatio: ratios(of('keeperRssKB'), of('nodeRssKB')),
    readyRatio: ratios(of('keeperReadyMs'), of('nodeReadyMs')),
  };
}

export interface StopAllRow {
  readonly runs: number;
  readonly fixture: string;
  readonly gracePeriodMs: number;
  /** stopAllRuns() called → every subscriber has its exit item and completed. */
  readonly stopAllMs: Summary;
  /** Baseline: unsubscribe all → every root process gone (the same stop sequence, nobody listening). */
  readonly unsubscribeMs: Summary;
  readonly ratio: Summary;
}

interface Started {
  readonly pid: number;
  readonly completed: Promise<void>;
  unsubscribe(): void;
}

// Starts a fixture that prints `ready <pid>` and resolves once it has.
function start(script: string, gracePeriodMs: number): Promise<Started> {
  return new Promise((resolve, reject) => {
    let done!: () => void;
    const completed = new Promise<void>((ended) => (done = ended));
    const subscription = processLines(process.execPath, [fixture(script)], { gracePeriodMs }).subscribe({
      next: (item) => {
        if (item.kind === 'line' && item.text.startsWith('ready ')) {
          resolve({
            pid: Number(item.text.slice(6)),
            completed,
            unsubscribe: () => {
              subscription.unsubscribe();
            },
          });
        }
        if (item.kind === 'exit' && item.stoppedBy?.kind !== 'host') reject(new Error(`${script} exited before it was ready`));
      },
      complete: done,
    });
  });
}

async function untilGone(pids: readonly number[]): Promise<void> {
  while (pids.some(isAlive)) await new Promise((resolve) => setImmediate(resolve));
}

/**
 * `stopAllRuns()` with `runs` subscribers listening: the time until every one of them has its
 * terminal and completed, against unsubscribing them all and waiting for their processes to go.
 */
export async function stopAllTime(runs: number, script: string, gracePeriodMs: number, repetitions: number): Promise<StopAllRow> {
  const stopAll: number[] = [];
  const unsubscribe: number[] = [];
  for (let rep = 0; rep < repetitions; rep += 1) {
    for (const which of rep % 2 === 0 ? (['stopAll', 'unsubscribe'] as const) : (['unsubscribe', 'stopAll'] as const)) {
      const started = await Promise.all(Array.from({ length: runs }, () => start(script, gracePeriodMs)));
      const t0 = performance.now();
      if (which === 'stopAll') {
        const stopping = stopAllRuns();
        await Promise.all(started.map((run) => run.completed));
        stopAll.push(performance.now() - t0);
        await stopping;
      } else {
        for (const run of started) run.unsubscribe();
        await untilGone(started.map((run) => run.pid));
        unsubscribe.push(performance.now() - t0);
        await stopAllRuns();
      }
    }
  }
  return { runs, fixture: script, gracePeriodMs, stopAllMs: summarize(stopAll), unsubscribeMs: summarize(unsubscribe), ratio: ratios(stopAll, unsubscribe) };
}
