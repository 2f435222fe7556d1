import { errorMessage } from './error-message.js';
import { nextTurn, Pace } from './pace.js';
import type { ProcessEntry, ProcessTable } from './process-entry.js';
import { environHolds, hasProc, procFiles } from './proc-files.js';
import { bornAfter, sinceOf, statOf } from './proc-stat.js';
import { readPsTable, readPsTableSync } from './ps-table.js';

/**
 * Reads the process table: from /proc on Linux (no child process needed), elsewhere from `ps`.
 * Never rejects: a missing `ps` or an unreadable entry gives an empty or partial table.
 * With `token`, entries whose environment holds it (anywhere: it is unique, see run-marker.ts) are
 * flagged `marked`; with `bornSince` (a start time from /proc), only processes started since then
 * are looked at for it, since older ones cannot descend from a process started then.
 */
export async function readProcessTable(token?: string, bornSince?: string): Promise<ProcessTable> {
  if (!hasProc) return readPsTable();
  const read = rowReader(token, bornSince);
  let pids: number[];
  try {
    pids = procFiles.pids();
  } catch (error) {
    return { entries: [], error: `cannot list /proc: ${errorMessage(error)}` };
  }
  const pace = new Pace();
  const entries: ProcessEntry[] = [];
  for (const pid of pids) {
    if (pace.due()) await nextTurn();
    const row = read(pid);
    if (row !== null) entries.push(row);
  }
  return { entries, error: null };
}

/**
 * The same, synchronously, for the moments when nothing asynchronous can run any more (the host's
 * `exit` event). Elsewhere than Linux it runs `ps` synchronously.
 */
export function readProcessTableSync(token?: string, bornSince?: string): ProcessTable {
  if (!hasProc) return readPsTableSync();
  const read = rowReader(token, bornSince);
  let pids: number[];
  try {
    pids = procFiles.pids();
  } catch (error) {
    return { entries: [], error: `cannot list /proc: ${errorMessage(error)}` };
  }
  const entries: ProcessEntry[] = [];
  for (const pid of pids) {
    const row = read(pid);
    if (row !== null) entries.push(row);
  }
  return { entries, error: null };
}

/** Reads one row, flagged `marked` when `token` is given and its environment holds it. */
function rowReader(token: string | undefined, bornSince: string | undefined): (pid: number) => ProcessEntry | null {
  const needle = token === undefined ? null : Buffer.from(token);
  const since = sinceOf(bornSince);
  return (pid) => {
    const stat = statOf(procFiles, pid);
    if (stat === null || needle === null || !bornAfter(stat, since)) return stat;
    return { ...stat, marked: environHolds(pid, needle) };
  };
}
