import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

export interface Summary {
  readonly runs: number;
  readonly min: number;
  readonly median: number;
  readonly max: number;
}

export function summarize(samples: readonly number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 === 1 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
  return { runs: sorted.length, min: sorted[0] ?? 0, median, max: sorted.at(-1) ?? 0 };
}

/** `min / median / max` with a fixed number of decimals. */
export function spread(summary: Summary, digits = 1): string {
  return `${summary.min.toFixed(digits)} / ${summary.median.toFixed(digits)} / ${summary.max.toFixed(digits)}`;
}

/** Ratios of paired samples (same repetition), summarized. */
export function ratios(numerators: readonly number[], denominators: readonly number[]): Summary {
  return summarize(numerators.map((value, i) => value / (denominators[i] ?? Number.NaN)));
}

export function fixture(name: string): string {
  return fileURLToPath(new URL(`../spec/fixtures/${name}`, import.meta.url));
}

export function benchFile(name: string): string {
  return fileURLToPath(new URL(name, import.meta.url));
}

/** A live, non-zombie process (Linux /proc; elsewhere signal 0). */
export function isAlive(pid: number): boolean {
  try {
    if (process.platform === 'linux') {
      const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
      const state = stat.charAt(stat.lastIndexOf(')') + 2);
      return state !== 'Z' && state !== 'X';
    }
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** mulberry32: a small seeded generator of numbers in [0, 1), so random choices can be replayed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Prints a Markdown table and returns its lines. */
export function table(title: string, header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const lines = [`### ${title}`, '', `| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`];
  for (const row of rows) lines.push(`| ${row.join(' | ')} |`);
  lines.push('');
  console.log(lines.join('\n'));
  return lines;
}

/**
 * Runs a bench worker (a TypeScript file under bench/workers/) in a fresh Node process, with
 * extra Node flags, and parses the JSON it prints on its last stdout line.
 */
export function runWorker<T>(name: string, args: readonly string[], nodeFlags: readonly string[] = []): Promise<T> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [...nodeFlags, '--import', 'tsx', '--import', benchFile('./shipped.mjs'), benchFile(`./workers/${name}`), ...args],
      { maxBuffer: 64 * 1024 * 1024, cwd: fileURLToPath(new URL('..', import.meta.url)) },
      (error, stdout, stderr) => {
        if (error !== null) {
          reject(new Error(`worker ${name} ${args.join(' ')} failed: ${error.message}\n${stderr}`));
          return;
        }
        const last = stdout.trim().split('\n').at(-1) ?? '';
        try {
          resolve(JSON.parse(last) as T);
        } catch {
          reject(new Error(`worker ${name} printed no result: ${stdout}\n${stderr}`));
        }
      },
    );
  });
}

/** Throws (so the bench fails loudly) when a check does not hold. */
export function check(condition: boolean, message: string): asserts condition {
  if (!condition) throw new Error(`bench check failed: ${message}`);
}

/** The event-loop delay (1 ms resolution), wall time and this process's CPU time while `task` runs; ms. */
export interface LoopSample {
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly wallMs: number;
  readonly cpuMs: number;
}

/** Runs `task` while sampling the event-loop delay at 1 ms resolution and timing it. */
export async function loopSample(task: () => Promise<unknown>): Promise<LoopSample> {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  const started = performance.now();
  const cpu = process.cpuUsage();
  await task();
  const { user, system } = process.cpuUsage(cpu);
  const wallMs = performance.now() - started;
  histogram.disable();
  return { p50: histogram.percentile(50) / 1e6, p99: histogram.percentile(99) / 1e6, max: histogram.max / 1e6, wallMs, cpuMs: (user + system) / 1000 };
}
