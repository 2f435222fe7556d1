import { readProcessTable } from './process-table.js';
import { sendSignal } from './signals.js';

/**
 * SIGKILLs every process whose environment holds `name=value` (an exact variable, Linux: read
 * from /proc), this process aside, until two scans in a row find none or `rounds` run out: what a
 * host that was killed without warning left behind (a fleet worker's agents, whose keeper died
 * with the machine's cgroup gone or never there). Never rejects. The pids killed.
 */
export async function sweepMarked(name: string, value: string, rounds = 20): Promise<number[]> {
  const killed = new Set<number>();
  // The variable and its end: `NAME=value` followed by the NUL that ends it in /proc/<pid>/environ.
  const token = `${name}=${value}\0`;
  let empty = 0;
  for (let round = 0; round < rounds && empty < 2; round += 1) {
    const table = await readProcessTable(token);
    const marked = table.entries.filter((entry) => entry.marked && !entry.zombie && entry.pid !== process.pid);
    for (const entry of marked) {
      killed.add(entry.pid);
      sendSignal(entry.pid, 'SIGKILL');
    }
    empty = marked.length === 0 ? empty + 1 : 0;
    if (marked.length > 0) await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return [...killed];
}
