import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PiStream } from './stream.js';
import { baselineRead, PI_ARGS, runPiRead } from './readers.js';
import { check, ratios, summarize, type Summary } from './util.js';

/**
 * A writer that notes the monotonic clock (system-wide on Linux, the same clock as
 * `process.hrtime` in the parent) right before it writes its first stdout byte, in a side file.
 * Usage: node -e WRITER -- <stream file> <side file>
 */
const WRITER = `
const { readFileSync, writeFileSync } = require('node:fs');
const data = readFileSync(process.argv[1]);
const before = process.hrtime.bigint();
process.stdout.write(data);
writeFileSync(process.argv[2], String(before));
`;

export interface FirstMessageResult {
  readonly repetitions: number;
  /** First stdout byte written by the child → first CliMessage (runPi) / first parsed event (baseline), ms. */
  readonly byteToFirst: { readonly runPi: Summary; readonly baseline: Summary; readonly ratio: Summary };
  /** Subscribe / spawn → the same, ms (includes starting the child, the same for both). */
  readonly spawnToFirst: { readonly runPi: Summary; readonly baseline: Summary; readonly ratio: Summary };
}

export async function firstMessage(stream: PiStream, repetitions: number): Promise<FirstMessageResult> {
  const dir = mkdtempSync(join(tmpdir(), 'agent-rx-bench-first-'));
  const side = join(dir, 'first-byte');
  const written = (): bigint => BigInt(readFileSync(side, 'utf8'));
  const byte = { runPi: [] as number[], baseline: [] as number[] };
  const spawn = { runPi: [] as number[], baseline: [] as number[] };
  try {
    for (let rep = 0; rep < repetitions; rep += 1) {
      for (const reader of rep % 2 === 0 ? (['runPi', 'baseline'] as const) : (['baseline', 'runPi'] as const)) {
        rmSync(side, { force: true });
        const args = ['-e', WRITER, '--', stream.path, side];
        const result = reader === 'runPi' ? await runPiRead(process.execPath, args) : await baselineRead(process.execPath, [...args, ...PI_ARGS]);
        check(result.text === stream.expected, `${reader}: wrong answer in the first-message run`);
        byte[reader].push(Number(result.firstAt - written()) / 1e6);
        spawn[reader].push(result.firstMs);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return {
    repetitions,
    byteToFirst: { runPi: summarize(byte.runPi), baseline: summarize(byte.baseline), ratio: ratios(byte.runPi, byte.baseline) },
    spawnToFirst: { runPi: summarize(spawn.runPi), baseline: summarize(spawn.baseline), ratio: ratios(spawn.runPi, spawn.baseline) },
  };
}
