import type { PiStream } from './stream.js';
import { runWorker } from './util.js';

interface HeapWorkerResult {
  readonly samples: readonly { readonly runs: number; readonly heapMB: number }[];
  readonly msPerRun: number;
  readonly msToComplete: number;
  readonly maxRssMB: number;
}

export interface HeapRow {
  readonly reader: 'runPi' | 'baseline';
  readonly runs: number;
  /** Heap used after a full GC, at the sampled run counts. */
  readonly samples: readonly { readonly runs: number; readonly heapMB: number }[];
  readonly heapAfter100MB: number;
  readonly heapAfterAllMB: number;
  /** Heap after all runs over the heap after the first 100 (1 = no growth). */
  readonly growth: number;
  /** Mean wall time per run, clean-up after exit included (runs are sequential). */
  readonly msPerRun: number;
  /** Mean spawn → completion of the stream. */
  readonly msToComplete: number;
}

export interface HeapResult {
  readonly streamBytes: number;
  readonly rows: readonly HeapRow[];
  /** runPi's growth over the baseline's. */
  readonly growthRatio: number;
}

/** `runs` sequential short runs in a fresh `node --expose-gc` per reader (bench/workers/heap-runs.ts). */
export async function heapAfterRuns(stream: PiStream, runs: number): Promise<HeapResult> {
  const every = Math.max(1, Math.round(runs / 10));
  const rows: HeapRow[] = [];
  for (const reader of ['runPi', 'baseline'] as const) {
    const result = await runWorker<HeapWorkerResult>('heap-runs.ts', [reader, String(runs), String(every), stream.path, stream.expectedSha256], ['--expose-gc']);
    const at = (count: number): number => result.samples.find((sample) => sample.runs >= count)?.heapMB ?? Number.NaN;
    const heapAfter100MB = at(Math.min(100, runs));
    const heapAfterAllMB = result.samples.at(-1)?.heapMB ?? Number.NaN;
    rows.push({ reader, runs, samples: result.samples, heapAfter100MB, heapAfterAllMB, growth: heapAfterAllMB / heapAfter100MB, msPerRun: result.msPerRun, msToComplete: result.msToComplete });
  }
  const [lib, base] = rows;
  return { streamBytes: stream.bytes, rows, growthRatio: (lib?.growth ?? Number.NaN) / (base?.growth ?? Number.NaN) };
}
