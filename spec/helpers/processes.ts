import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Observable, lastValueFrom, toArray } from 'rxjs';
import { processLines } from '../../lib/index.js';
import type { ProcessItem, ProcessOptions, StopReport } from '../../lib/index.js';

/** Absolute path of a fixture script. */
export function fixture(name: string): string {
  return fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));
}

/** Whether a pid is a live (non-zombie) process. Linux: /proc; elsewhere: signal 0. */
export function isAlive(pid: number): boolean {
  if (process.platform === 'linux') {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      return state !== 'Z' && state !== 'X';
    } catch {
      return false;
    }
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Pids started by a test, ended after it whatever happened (only these, by pid). */
export const startedPids = new Set<number>();

export function killLeftovers(): void {
  for (const pid of startedPids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  startedPids.clear();
}

export function collect(source: Observable<ProcessItem>): Promise<ProcessItem[]> {
  return lastValueFrom(source.pipe(toArray()));
}

export interface StartedRun {
  /** Items seen before the stop. */
  readonly items: ProcessItem[];
  /** Resolves with the stop report. */
  readonly stopped: Promise<StopReport>;
  /** Resolves when the stream completes (a run stopped by the host or a time limit still does). */
  readonly completed: Promise<void>;
  /** Unsubscribes. */
  stop(): void;
}

/**
 * Subscribes to `processLines(node fixture)` and resolves once `ready(line)` is true for a line,
 * keeping the subscription open; the caller then stops it.
 */
export function startUntil(
  script: string,
  args: readonly string[],
  ready: (text: string) => boolean,
  options: ProcessOptions = {},
): Promise<StartedRun> {
  let resolveReport!: (report: StopReport) => void;
  const stopped = new Promise<StopReport>((resolve) => {
    resolveReport = resolve;
  });
  let resolveCompleted!: () => void;
  const completed = new Promise<void>((resolve) => {
    resolveCompleted = resolve;
  });
  return new Promise((resolve, reject) => {
    const items: ProcessItem[] = [];
    const subscription = processLines(process.execPath, [fixture(script), ...args], {
      ...options,
      onStopped: (report) => {
        if (report.pid !== null) startedPids.add(report.pid);
        resolveReport(report);
      },
    }).subscribe({
      next: (item) => {
        items.push(item);
        if (item.kind === 'line' && ready(item.text)) {
          resolve({
            items,
            stopped,
            completed,
            stop: () => {
              subscription.unsubscribe();
            },
          });
        }
        if (item.kind === 'exit') reject(new Error(`exited before ready: ${JSON.stringify(item)}`));
      },
      error: reject,
      complete: resolveCompleted,
    });
  });
}

/** Reads `{"grandchild": pid}` from a line. */
export function grandchildOf(items: readonly ProcessItem[]): number {
  for (const item of items) {
    if (item.kind === 'line' && item.text.startsWith('{')) {
      const pid = (JSON.parse(item.text) as { grandchild?: number }).grandchild;
      if (typeof pid === 'number') {
        startedPids.add(pid);
        return pid;
      }
    }
  }
  throw new Error('no grandchild pid in the output');
}

export function pidOfReady(items: readonly ProcessItem[]): number {
  for (const item of items) {
    if (item.kind === 'line' && item.text.startsWith('ready ')) {
      const pid = Number(item.text.slice('ready '.length));
      startedPids.add(pid);
      return pid;
    }
  }
  throw new Error('no ready line');
}
