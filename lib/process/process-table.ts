import { execFile, execFileSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readdirSync, readFile, readSync } from 'node:fs';

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

export const hasProc = process.platform === 'linux';

/**
 * The /proc files a scan reads, each read synchronously: one small file costs an open, a read
 * and a close (Node's asynchronous readFile costs about five thread-pool round trips per file,
 * several times the CPU). Callers that read many pace themselves with `Pace`. Injectable in specs.
 */
export interface ProcFiles {
  /** The pids listed in /proc; throws when /proc cannot be listed. */
  pids(): number[];
  /** /proc/<pid>/stat as text; `null` when it cannot be read (the process is gone). */
  stat(pid: number): string | null;
  /** /proc/<pid>/environ; `null` when it cannot be read. */
  environ(pid: number): Buffer | null;
  /** The thread ids of a process; `null` when it is gone. */
  tasks(pid: number): number[] | null;
  /** /proc/<pid>/task/<tid>/children: the pids of the children that thread forked, space-separated. */
  children(pid: number, tid: number): string | null;
  /** Whether the kernel has the `children` files (CONFIG_PROC_CHILDREN). */
  readonly hasChildren: boolean;
}

let scratch = Buffer.allocUnsafe(16 * 1024);

/** Reads a whole file into `scratch`; its length, or -1 when it cannot be read. */
function readWhole(path: string): number {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return -1;
  }
  try {
    let length = 0;
    for (;;) {
      const room = scratch.length - length;
      const read = readSync(fd, scratch, length, room, null);
      length += read;
      // /proc files hand out all they have in one read: a short read is the end of the file.
      if (read < room) return length;
      const bigger = Buffer.allocUnsafe(scratch.length * 2);
      scratch.copy(bigger, 0, 0, length);
      scratch = bigger;
    }
  } catch {
    return -1;
  } finally {
    closeSync(fd);
  }
}

function readText(path: string): string | null {
  const length = readWhole(path);
  return length === -1 ? null : scratch.toString('latin1', 0, length);
}

let childrenFiles: boolean | undefined;

/** The real /proc. */
export const procFiles: ProcFiles = {
  pids: () => {
    const pids: number[] = [];
    for (const name of readdirSync('/proc')) if (isPid(name)) pids.push(Number(name));
    return pids;
  },
  stat: (pid) => readText(`/proc/${pid}/stat`),
  environ: (pid) => {
    const length = readWhole(`/proc/${pid}/environ`);
    return length === -1 ? null : Buffer.from(scratch.subarray(0, length));
  },
  tasks: (pid) => {
    try {
      return readdirSync(`/proc/${pid}/task`).map(Number);
    } catch {
      return null;
    }
  },
  children: (pid, tid) => readText(`/proc/${pid}/task/${tid}/children`),
  get hasChildren() {
    childrenFiles ??= hasProc && existsSync(`/proc/${process.pid}/task/${process.pid}/children`);
    return childrenFiles;
  },
};

/** Reads of /proc files between two turns of the event loop, and at most this long: about a millisecond. */
const PACE_READS = 64;
const PACE_MS = 1;

/** Paces a long run of synchronous reads: `due()` says when to let the event loop run (`nextTurn()`). */
export class Pace {
  #reads = 0;
  #since = performance.now();

  due(): boolean {
    this.#reads += 1;
    if (this.#reads < PACE_READS && performance.now() - this.#since < PACE_MS) return false;
    this.#reads = 0;
    this.#since = performance.now();
    return true;
  }
}

export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

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
    return { entries: [], error: `cannot list /proc: ${describe(error)}` };
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
  if (!hasProc) {
    try {
      return { entries: parsePs(execFileSync('ps', PS_ARGS, { encoding: 'utf8', maxBuffer: PS_MAX_BUFFER, stdio: ['ignore', 'pipe', 'ignore'] })), error: null };
    } catch (error) {
      return { entries: [], error: `cannot run ps: ${describe(error)}` };
    }
  }
  const read = rowReader(token, bornSince);
  let pids: number[];
  try {
    pids = procFiles.pids();
  } catch (error) {
    return { entries: [], error: `cannot list /proc: ${describe(error)}` };
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
    const length = readWhole(`/proc/${pid}/environ`);
    return { ...stat, marked: length !== -1 && scratch.subarray(0, length).includes(needle) };
  };
}

export function sinceOf(bornSince: string | undefined): number | null {
  return bornSince === undefined || bornSince === '' ? null : Number(bornSince);
}

/** Started at or after `since` (start times in clock ticks); unknown start times count as after. */
export function bornAfter(entry: ProcessEntry, since: number | null): boolean {
  return since === null || entry.startTime === '' || Number(entry.startTime) >= since;
}

/**
 * Now, as a process start time: clock ticks since boot, as /proc/<pid>/stat counts them (USER_HZ,
 * 100 a second on Linux), from /proc/uptime; `''` where there is no /proc. A process started from
 * now on has a start time at or after it (`bornAfter`).
 */
export function startTimeNow(): string {
  const uptime = hasProc ? readText('/proc/uptime') : null;
  const seconds = uptime === null ? Number.NaN : Number.parseFloat(uptime);
  return Number.isFinite(seconds) ? String(Math.floor(seconds * USER_HZ)) : '';
}

const USER_HZ = 100;

/** One process's stat line read through `files`, parsed; `null` when it is gone. */
export function statOf(files: ProcFiles, pid: number): ProcessEntry | null {
  const text = files.stat(pid);
  return text === null ? null : parseStat(text);
}

/** Reads one process's stat line; `null` when it is gone. */
export async function readStat(pid: number): Promise<ProcessEntry | null> {
  const text = await readOrNull(`/proc/${pid}/stat`);
  return text === null ? null : parseStat(text.toString('latin1'));
}

/** The same, synchronously; `null` when it is gone or the platform has no /proc. */
export function readStatSync(pid: number): ProcessEntry | null {
  return hasProc ? statOf(procFiles, pid) : null;
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
