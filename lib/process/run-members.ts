import type { ProcessEntry } from './process-entry.js';
import { bornAfter, sinceOf } from './proc-stat.js';

/** The root of a run: its pid and its start time (`''` where unknown). */
export interface RunRoot {
  readonly pid: number;
  readonly startTime: string;
}

/**
 * Every live process that belongs to a run: the root's descendants and the descendants of
 * `known` processes (by parent pid), members of the root's process group, and processes carrying
 * the run marker (`isMarked`; by default the entry's `marked` flag). A known pid only counts while
 * its start time still matches, and a group member only when it started at or after the root (so
 * a reused pid or group id never makes a stranger one of the run's).
 */
export function runMembers<Entry extends ProcessEntry>(
  table: readonly Entry[],
  root: RunRoot,
  known: ReadonlyMap<number, string>,
  isMarked: (entry: Entry) => boolean = (entry) => entry.marked,
): Map<number, Entry> {
  const rootPid = root.pid;
  const since = sinceOf(root.startTime);
  const children = new Map<number, Entry[]>();
  for (const entry of table) {
    const siblings = children.get(entry.ppid);
    if (siblings === undefined) children.set(entry.ppid, [entry]);
    else siblings.push(entry);
  }
  const members = new Map<number, Entry>();
  const queue: number[] = [rootPid];
  for (const entry of table) {
    if (entry.pid === process.pid || entry.pid === rootPid) continue;
    const recordedStart = known.get(entry.pid);
    const isKnown = recordedStart !== undefined && (recordedStart === '' || recordedStart === entry.startTime);
    if (isKnown || isMarked(entry) || (entry.pgid === rootPid && bornAfter(entry, since))) {
      members.set(entry.pid, entry);
      queue.push(entry.pid);
    }
  }
  while (queue.length > 0) {
    const parent = queue.pop() as number;
    for (const child of children.get(parent) ?? []) {
      if (child.pid === process.pid || child.pid === rootPid || members.has(child.pid)) continue;
      members.set(child.pid, child);
      queue.push(child.pid);
    }
  }
  for (const [pid, entry] of members) if (entry.zombie) members.delete(pid);
  return members;
}
