import { spawn } from 'node:child_process';
import split2 from 'split2';
import type { PiStream } from './stream.js';
import { PI_ARGS, runPiRead, serveCommand } from './readers.js';
import { check, loopSample, ratios, summarize, type LoopSample, type Summary } from './util.js';

export interface ConcurrencyResult {
  readonly concurrent: number;
  readonly streamBytes: number;
  readonly repetitions: number;
  /** Event-loop delay percentiles (ms) while the runs are in flight, per repetition. */
  readonly runPi: LoopFigures;
  readonly baseline: LoopFigures;
  readonly p99Ratio: Summary;
  readonly wallRatio: Summary;
}

export interface LoopFigures {
  readonly p50: Summary;
  readonly p99: Summary;
  readonly max: Summary;
  /** Start of the first run → the end of the last (ms). */
  readonly wallMs: Summary;
}

/** The baseline reader, without the bookkeeping of readers.ts: child_process + split2 + JSON.parse. */
function baselineText(command: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'ignore'] });
    child.stdin.on('error', () => undefined);
    child.stdin.end('prompt');
    child.on('error', reject);
    child.stdout.pipe(split2()).on('data', (line: string) => {
      try {
        const event = JSON.parse(line) as { type?: unknown; assistantMessageEvent?: { type?: unknown; delta?: unknown } };
        const update = event.assistantMessageEvent;
        if (event.type === 'message_update' && update?.type === 'text_delta' && typeof update.delta === 'string') text += update.delta;
      } catch {
        // Not JSON: ignored.
      }
    });
    child.on('close', () => {
      resolve(text);
    });
  });
}

/**
 * `concurrent` runs of a short replay at once, runPi against the baseline, alternating which goes
 * first. runPi runs count until their clean-up after exit has finished (the library's whole
 * footprint); the baseline until its children have closed.
 */
export async function concurrency(stream: PiStream, concurrent: number, repetitions: number): Promise<ConcurrencyResult> {
  const { command, args } = serveCommand(stream.path);
  const lib: LoopSample[] = [];
  const base: LoopSample[] = [];
  const many = <T>(start: () => Promise<T>): Promise<T[]> => Promise.all(Array.from({ length: concurrent }, start));
  for (let rep = 0; rep < repetitions; rep += 1) {
    for (const which of rep % 2 === 0 ? (['lib', 'base'] as const) : (['base', 'lib'] as const)) {
      if (which === 'lib') {
        lib.push(
          await loopSample(async () => {
            const results = await many(() => runPiRead(command, args));
            check(results.every((result) => result.text === stream.expected), 'concurrent runPi: wrong answer');
          }),
        );
      } else {
        base.push(
          await loopSample(async () => {
            const texts = await many(() => baselineText(command, [...args, ...PI_ARGS]));
            check(texts.every((text) => text === stream.expected), 'concurrent baseline: wrong answer');
          }),
        );
      }
    }
  }
  const figures = (samples: readonly LoopSample[]): LoopFigures => ({
    p50: summarize(samples.map((s) => s.p50)),
    p99: summarize(samples.map((s) => s.p99)),
    max: summarize(samples.map((s) => s.max)),
    wallMs: summarize(samples.map((s) => s.wallMs)),
  });
  return {
    concurrent,
    streamBytes: stream.bytes,
    repetitions,
    runPi: figures(lib),
    baseline: figures(base),
    p99Ratio: ratios(
      lib.map((s) => s.p99),
      base.map((s) => s.p99),
    ),
    wallRatio: ratios(
      lib.map((s) => s.wallMs),
      base.map((s) => s.wallMs),
    ),
  };
}
