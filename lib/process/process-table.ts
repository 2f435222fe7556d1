import { execFile, execFileSync } from 'node:child_process';
import { readdir, readdirSync, readFile, readFileSync } from 'node:fs';

/** One row of the process table. */
export interface ProcessEntry {
  readonly pid: number;
  readonly ppid: number;
  readonly pgid: number;
  /** Start time in clock ticks since boot (Linux); `''` where the platform does not say. */
  readonly startTime: string;
  readonly zombie: boolean;
  /** The process carries the run marker in its environment (Linux only). */
  readonly marked: boolean;
}

export interface ProcessTable {
  readonly entries: readonly ProcessEntry[];
  /** Why the table is empty or partial (no /proc and no `ps`), for diagnostics. */
  readonly error: string | null;
}

const hasProc = process.platform === 'linux';

/**
 * Reads the process table: from /proc on Linux (no child process needed), elsewhere from `ps`.
 * Never rejects: a missing `ps` or an unreadable entry gives an empty or partial table.
 * With `token`, entries whose environment holds it (anywhere: it is unique, see run-marker.ts) are
 * flagged `marked`; with `bornSince` (a start time from /proc), only processes started since then
 * are looked at for it, since older ones cannot descend from a process started then.
 */
export async function readProcessTable(token?: string, bornSince?: string): Promise<ProcessTable> {
  return hasProc ? readProc(token, bornSince) : readPsTable();
}

async function readProc(token: string | undefined, bornSince: string | undefined): Promise<ProcessTable> {
  let names: string[];
  try {
    names = await new Promise<string[]>((resolve, reject) => {
      readdir('/proc', (error, list) => {
        if (error === null) resolve(list);
        else reject(error);
      });
    });
  } catch (error) {
    return { entries: [], error: `cannot list /proc: ${describe(error)}` };
  }
  const needle = token === undefined ? null : Buffer.from(token);
  const since = sinceOf(bornSince);
  const rows = await Promise.all(
    names.filter(isPid).map(async (name) => {
      const stat = await readStat(Number(name));
      if (stat === null || needle === null || !bornAfter(stat, since)) return stat;
      const environ = await readOrNull(`/proc/${name}/environ`);
      return { ...stat, marked: environ !== null && environ.includes(needle) };
    }),
  );
  return { entries: rows.filter((row): row is ProcessEntry => row !== null), error: null };
}

/**
 * The same, synchronously, for the moments when nothing asynchronous can run any more (the host's
 * `exit` event). Elsewhere than Linux it runs `ps` synchronously.
 */
export function readProcessTableSync(token?: string, bornSince?: string): ProcessTable {
  if (!hasProc) {
    try {
      return { entries: parsePs(execFileSync('ps', PS_ARGS, { encoding: 'utf8', maxBuffer: PS_MAX_BUFFER, stdio: ['ignore', 'pipe', 'ignore'] })), error: null };
    } catch (error) {
      return { entries: [], error: `cannot run ps: ${describe(error)}` };
    }
  }
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch (error) {
    return { entries: [], error: `cannot list /proc: ${describe(error)}` };
  }
  const needle = token === undefined ? null : Buffer.from(token);
  const since = sinceOf(bornSince);
  const entries: ProcessEntry[] = [];
  for (const name of names) {
    if (!isPid(name)) continue;
    const stat = readStatSync(Number(name));
    if (stat === null) continue;
    if (needle === null || !bornAfter(stat, since)) {
      entries.push(stat);
      continue;
    }
    const environ = readOrNullSync(`/proc/${name}/environ`);
    entries.push({ ...stat, marked: environ !== null && environ.includes(needle) });
  }
  return { entries, error: null };
}

function sinceOf(bornSince: string | undefined): number | null {
  return bornSince === undefined || bornSince === '' ? null : Number(bornSince);
}

/** Started at or after `since` (start times in clock ticks); unknown start times count as after. */
function bornAfter(entry: ProcessEntry, since: number | null): boolean {
  return since === null || entry.startTime === '' || Number(entry.startTime) >= since;
}

/** Reads one process's stat line; `null` when it is gone. */
export async function readStat(pid: number): Promise<ProcessEntry | null> {
  const text = await readOrNull(`/proc/${pid}/stat`);
  return text === null ? null : parseStat(text.toString('latin1'));
}

/** The same, synchronously; `null` when it is gone or the platform has no /proc. */
export function readStatSync(pid: number): ProcessEntry | null {
  if (!hasProc) return null;
  const text = readOrNullSync(`/proc/${pid}/stat`);
  return text === null ? null : parseStat(text.toString('latin1'));
}

/** Parses /proc/<pid>/stat; the command name may hold spaces and parentheses. */
export function parseStat(text: string): ProcessEntry | null {
  const close = text.lastIndexOf(')');
  if (close === -1) return null;
  const pid = Number.parseInt(text, 10);
  // After "pid (comm) ": state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt
  // utime stime cutime cstime priority nice num_threads itrealvalue starttime ...
  const fields = text.slice(close + 2).split(' ');
  const state = fields[0];
  const ppid = Number(fields[1]);
  const pgid = Number(fields[2]);
  const startTime = fields[19] ?? '';
  if (!Number.isInteger(pid) || !Number.isInteger(ppid) || !Number.isInteger(pgid)) return null;
  return { pid, ppid, pgid, startTime, zombie: state === 'Z' || state === 'X', marked: false };
}

function readOrNullSync(path: string): Buffer | null {
  try {
    return readFileSync(path);
  } catch {
    return null;
  }
}

// The callback API: fs/promises' readFile costs three times as much per small /proc file.
function readOrNull(path: string): Promise<Buffer | null> {
  return new Promise((resolve) => {
    readFile(path, (error, data) => {
      resolve(error === null ? data : null);
    });
  });
}

const PS_ARGS = ['-A', '-o', 'pid=,ppid=,pgid=,stat='];
const PS_MAX_BUFFER = 16 * 1024 * 1024;

/** Reads the table with `ps`; a missing `ps` gives an empty table and a reason. */
export function readPsTable(command = 'ps'): Promise<ProcessTable> {
  return new Promise((resolve) => {
    try {
      execFile(command, PS_ARGS, { maxBuffer: PS_MAX_BUFFER }, (error, stdout) => {
        if (error !== null) {
          resolve({ entries: [], error: `cannot run ps: ${describe(error)}` });
          return;
        }
        resolve({ entries: parsePs(stdout), error: null });
      });
    } catch (error) {
      resolve({ entries: [], error: `cannot run ps: ${describe(error)}` });
    }
  });
}

/** Parses `ps -o pid=,ppid=,pgid=,stat=` output. */
export function parsePs(stdout: string): ProcessEntry[] {
  const entries: ProcessEntry[] = [];
  for (const line of stdout.split('\n')) {
    const [pid, ppid, pgid, stat] = line.trim().split(/\s+/);
    if (pid === undefined || ppid === undefined || pgid === undefined) continue;
    const row = { pid: Number(pid), ppid: Number(ppid), pgid: Number(pgid) };
    if (!Number.isInteger(row.pid) || !Number.isInteger(row.ppid) || !Number.isInteger(row.pgid)) continue;
    entries.push({ ...row, startTime: '', zombie: stat?.startsWith('Z') === true, marked: false });
  }
  return entries;
}

/** The root of a run: its pid and its start time (`''` where unknown). */
export interface RunRoot {
  readonly pid: number;
  readonly startTime: string;
}

/**
 * Every live process that belongs to a run: the root's descendants and the descendants of
 * `known` processes (by parent pid), members of the root's process group, and processes carrying
 * the run marker. A known pid only counts while its start time still matches, and a group member
 * only when it started at or after the root (so a reused pid or group id never makes a stranger
 * one of the run's).
 */
export function runMembers(table: readonly ProcessEntry[], root: RunRoot, known: ReadonlyMap<number, string>): Map<number, ProcessEntry> {
  const rootPid = root.pid;
  const since = sinceOf(root.startTime);
  const children = new Map<number, ProcessEntry[]>();
  for (const entry of table) {
    const siblings = children.get(entry.ppid);
    if (siblings === undefined) children.set(entry.ppid, [entry]);
    else siblings.push(entry);
  }
  const members = new Map<number, ProcessEntry>();
  const queue: number[] = [rootPid];
  for (const entry of table) {
    if (entry.pid === process.pid || entry.pid === rootPid) continue;
    const recordedStart = known.get(entry.pid);
    const isKnown = recordedStart !== undefined && (recordedStart === '' || recordedStart === entry.startTime);
    if (isKnown || entry.marked || (entry.pgid === rootPid && bornAfter(entry, since))) {
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

function isPid(name: string): boolean {
  const code = name.charCodeAt(0);
  return code >= 48 && code <= 57;
}

/** An error as one line: its code first, unless its message starts with it already (Node's fs errors do). */
export function describe(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === undefined || error.message.startsWith(code) ? error.message : `${code}: ${error.message}`;
  }
  return String(error);
}
