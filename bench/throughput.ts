import type { PiStream } from './stream.js';
import { baselineRead, PI_ARGS, pipeRead, runPiRead, runPiTextLines, serveCommand } from './readers.js';
import { check, ratios, runWorker, summarize, type Summary } from './util.js';

export type Reader = 'pipe' | 'baseline' | 'runPi' | 'runPiTextLines';

export interface ThroughputRow {
  readonly reader: Reader;
  /** MB/s (10^6 bytes per second), from spawn to the end of the stream. */
  readonly mbps: Summary;
  /** This reader's MB/s over the baseline's, repetition by repetition. */
  readonly vsBaseline: Summary;
  /** This reader's MB/s over the pipe alone's, repetition by repetition: the share of the limit it reaches. */
  readonly vsPipe: Summary;
  /** The reader's time over the baseline's (the inverse of `vsBaseline`), repetition by repetition. */
  readonly timeVsBaseline: Summary;
  /** CPU time of the reading process (user + system) per read, ms: the cost hidden by a slow pipe. */
  readonly cpuMs: Summary;
  /** This reader's CPU time over the baseline's, repetition by repetition. */
  readonly cpuVsBaseline: Summary;
  /** Peak RSS of a fresh process doing one read (only for runs in workers). */
  readonly maxRssMB?: Summary;
}

export interface ThroughputResult {
  readonly deltas: number;
  readonly bytes: number;
  readonly lines: number;
  readonly repetitions: number;
  readonly inWorkers: boolean;
  readonly rows: readonly ThroughputRow[];
  /** Peak RSS of a worker that only loads the modules (the floor), when run in workers. */
  readonly idleRssMB?: Summary;
}

const READERS: readonly Reader[] = ['pipe', 'baseline', 'runPi', 'runPiTextLines'];

/**
 * Reads the stream `repetitions` times with every reader, in this process. The order of the
 * readers rotates from one repetition to the next, so that no reader always runs warm or cold.
 * Fails loudly when an answer is not the expected text.
 */
export async function throughputInProcess(stream: PiStream, repetitions: number, readers: readonly Reader[] = READERS): Promise<ThroughputResult> {
  const { command, args } = serveCommand(stream.path);
  const samples = new Map<Reader, number[]>(readers.map((reader) => [reader, []]));
  const cpu = new Map<Reader, number[]>(readers.map((reader) => [reader, []]));
  for (let rep = 0; rep < repetitions; rep += 1) {
    for (let k = 0; k < readers.length; k += 1) {
      const reader = readers[(rep + k) % readers.length] as Reader;
      const { ms, cpuMs } = await readOnce(reader, command, args, stream);
      samples.get(reader)?.push(stream.bytes / 1e6 / (ms / 1000));
      cpu.get(reader)?.push(cpuMs);
    }
  }
  return { deltas: stream.deltas, bytes: stream.bytes, lines: stream.lines, repetitions, inWorkers: false, rows: rows(readers, samples, cpu) };
}

async function readOnce(reader: Reader, command: string, args: readonly string[], stream: PiStream): Promise<{ ms: number; cpuMs: number }> {
  switch (reader) {
    case 'pipe': {
      const result = await pipeRead(command, [...args, ...PI_ARGS]);
      check(result.bytes === stream.bytes, `the pipe read ${result.bytes} bytes, not ${stream.bytes}`);
      return result;
    }
    case 'baseline': {
      const result = await baselineRead(command, [...args, ...PI_ARGS]);
      check(result.text === stream.expected, 'the baseline did not read the expected answer');
      return result;
    }
    case 'runPi':
    case 'runPiTextLines': {
      const result = await runPiRead(command, args, {}, reader === 'runPi' ? undefined : runPiTextLines);
      check(result.terminal?.type === 'terminal.completed', `${reader} ended with ${JSON.stringify(result.terminal)}`);
      check(result.text === stream.expected, `${reader}: the concatenated assistant deltas are not the expected answer`);
      return result;
    }
  }
}

interface WorkerResult {
  readonly ms: number;
  readonly cpuMs: number;
  readonly maxRssMB: number;
  readonly ok: boolean;
}

/**
 * Like `throughputInProcess`, but every read runs in a fresh Node process (bench/workers/
 * stream-run.ts), which also gives its peak RSS. The worker checks the answer by its SHA-256.
 */
export async function throughputInWorkers(stream: PiStream, repetitions: number, readers: readonly Reader[] = READERS): Promise<ThroughputResult> {
  const samples = new Map<Reader, number[]>(readers.map((reader) => [reader, []]));
  const cpu = new Map<Reader, number[]>(readers.map((reader) => [reader, []]));
  const rss = new Map<Reader, number[]>(readers.map((reader) => [reader, []]));
  const idle: number[] = [];
  for (let rep = 0; rep < repetitions; rep += 1) {
    idle.push((await runWorker<WorkerResult>('stream-run.ts', ['idle'])).maxRssMB);
    for (let k = 0; k < readers.length; k += 1) {
      const reader = readers[(rep + k) % readers.length] as Reader;
      const result = await runWorker<WorkerResult>('stream-run.ts', [reader, stream.path, stream.expectedSha256]);
      check(result.ok, `${reader} (worker) did not read the expected answer`);
      samples.get(reader)?.push(stream.bytes / 1e6 / (result.ms / 1000));
      cpu.get(reader)?.push(result.cpuMs);
      rss.get(reader)?.push(result.maxRssMB);
    }
  }
  return {
    deltas: stream.deltas,
    bytes: stream.bytes,
    lines: stream.lines,
    repetitions,
    inWorkers: true,
    rows: rows(readers, samples, cpu, rss),
    idleRssMB: summarize(idle),
  };
}

function rows(
  readers: readonly Reader[],
  samples: ReadonlyMap<Reader, number[]>,
  cpu: ReadonlyMap<Reader, number[]>,
  rss?: ReadonlyMap<Reader, number[]>,
): ThroughputRow[] {
  const baseline = samples.get('baseline') ?? [];
  const pipe = samples.get('pipe') ?? [];
  const baselineCpu = cpu.get('baseline') ?? [];
  return readers.map((reader) => {
    const values = samples.get(reader) ?? [];
    const cpuMs = cpu.get(reader) ?? [];
    const peak = rss?.get(reader);
    return {
      reader,
      mbps: summarize(values),
      vsBaseline: ratios(values, baseline),
      vsPipe: ratios(values, pipe),
      timeVsBaseline: ratios(baseline, values),
      cpuMs: summarize(cpuMs),
      cpuVsBaseline: ratios(cpuMs, baselineCpu),
      ...(peak === undefined ? {} : { maxRssMB: summarize(peak) }),
    };
  });
}
