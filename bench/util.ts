import { readFileSync } from 'node:fs';
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

export function fixture(name: string): string {
  return fileURLToPath(new URL(`../spec/fixtures/${name}`, import.meta.url));
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
