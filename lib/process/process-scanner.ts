import { asError, errorMessage } from './error-message.js';
import { nextTurn, Pace } from './pace.js';
import type { ProcessEntry } from './process-entry.js';
import { hasProc, procFiles, type ProcFiles } from './proc-files.js';
import { bornAfter, statOf } from './proc-stat.js';
import { readPsTable } from './ps-table.js';
import type { RunRoot } from './run-members.js';
import { hostToken } from './run-marker.js';

/** A row of a shared scan: `marked` is unset; `tokens` are the run tokens of this host in its environment. */
export interface ScannedEntry extends ProcessEntry {
  /** Every `[<host>.<n>]` of this host found in the process's environment (run-marker.ts). */
  readonly tokens: readonly string[];
}

export interface ScannedTable {
  readonly entries: readonly ScannedEntry[];
  /** Why the table is empty or partial, for diagnostics. */
  readonly error: string | null;
}

const NO_TOKENS: readonly string[] = Object.freeze([]);

/**
 * Coalesces reads: `scan()` resolves with a read that started after the call. A call while no read
 * runs starts one; calls while one runs all wait for the next, which starts when the running one
 * ends and serves them all. So however many callers need a fresh look, at most one read runs, and
 * a caller that acted (a kill) and then asks never gets a read from before its act.
 */
export class SharedScan<T> {
  readonly #read: () => Promise<T>;
  #running = false;
  #queued: { promise: Promise<T>; resolve: (value: Promise<T>) => void } | null = null;
  /** How many reads were started. */
  started = 0;

  constructor(read: () => Promise<T>) {
    this.#read = read;
  }

  scan(): Promise<T> {
    if (!this.#running) return this.#begin();
    if (this.#queued === null) {
      let resolve!: (value: Promise<T>) => void;
      const promise = new Promise<T>((settle) => {
        resolve = settle;
      });
      this.#queued = { promise, resolve };
    }
    return this.#queued.promise;
  }

  #begin(): Promise<T> {
    this.#running = true;
    this.started += 1;
    let read: Promise<T>;
    try {
      read = this.#read();
    } catch (error) {
      read = Promise.reject(asError(error));
    }
    const done = (): void => {
      this.#running = false;
      const queued = this.#queued;
      this.#queued = null;
      if (queued !== null) queued.resolve(this.#begin());
    };
    read.then(done, done);
    return read;
  }
}

interface Seen {
  readonly startTime: string;
  readonly tokens: readonly string[];
  /** The last scan that listed it. */
  scan: number;
}

/**
 * The process table, read for every active run at once. Each row carries the run tokens of this
 * host found in the process's environment. An environment is read once per process (pid and start
 * time), and only for processes started since this host (no older one can carry its tokens): a
 * process keeps the environment it started with, and one forked by a run's process starts with
 * its parent's, the marker included. The only process that gains a marker later is a run's root
 * (forked by the host, then given the marker at exec), and a root is always known by its pid.
 * Elsewhere than Linux the table comes from `ps`, without tokens.
 */
export class ProcessScanner {
  readonly #files: ProcFiles | null;
  readonly #shared = new SharedScan(() => this.#read());
  readonly #seen = new Map<number, Seen>();
  #hostStart: number | null | undefined;
  #needle: Buffer | undefined;
  #generation = 0;

  /** `files`: where /proc is read (`null`: use `ps`). */
  constructor(files: ProcFiles | null = hasProc ? procFiles : null) {
    this.#files = files;
  }

  /** A table read by a scan that started after this call, shared with every caller waiting at that moment. */
  scan(): Promise<ScannedTable> {
    return this.#shared.scan();
  }

  /** How many scans were started. */
  get scans(): number {
    return this.#shared.started;
  }

  /** The tokens cached for `pid` (from the last scan that listed it), `undefined` when none are. */
  tokensOf(pid: number): readonly string[] | undefined {
    return this.#seen.get(pid)?.tokens;
  }

  async #read(): Promise<ScannedTable> {
    const files = this.#files;
    if (files === null) {
      const table = await readPsTable();
      return { entries: table.entries.map((entry) => ({ ...entry, tokens: NO_TOKENS })), error: table.error };
    }
    let pids: number[];
    try {
      pids = files.pids();
    } catch (error) {
      return { entries: [], error: `cannot list /proc: ${errorMessage(error)}` };
    }
    this.#generation += 1;
    const scan = this.#generation;
    this.#hostStart ??= hostStartTime(files);
    this.#needle ??= Buffer.from(hostToken());
    const pace = new Pace();
    const entries: ScannedEntry[] = [];
    for (const pid of pids) {
      if (pace.due()) await nextTurn();
      const entry = statOf(files, pid);
      if (entry !== null) entries.push({ ...entry, tokens: this.#readTokens(files, entry, scan) });
    }
    for (const [pid, seen] of this.#seen) if (seen.scan !== scan) this.#seen.delete(pid);
    return { entries, error: null };
  }

  #readTokens(files: ProcFiles, entry: ProcessEntry, scan: number): readonly string[] {
    const seen = this.#seen.get(entry.pid);
    if (seen !== undefined && seen.startTime === entry.startTime) {
      seen.scan = scan;
      return seen.tokens;
    }
    if (!bornAfter(entry, this.#hostStart ?? null)) return NO_TOKENS;
    const environ = entry.zombie ? null : files.environ(entry.pid);
    const tokens = environ === null ? NO_TOKENS : tokensIn(environ, this.#needle as Buffer);
    this.#seen.set(entry.pid, { startTime: entry.startTime, tokens, scan });
    return tokens;
  }
}

function hostStartTime(files: ProcFiles): number | null {
  const startTime = statOf(files, process.pid)?.startTime ?? '';
  return startTime === '' ? null : Number(startTime);
}

/** Every `<prefix><digits>]` in `environ` (the host token is `[<host>.`, a run's token `[<host>.<n>]`). */
export function tokensIn(environ: Buffer, prefix: Buffer): readonly string[] {
  let tokens: string[] | null = null;
  for (let at = environ.indexOf(prefix); at !== -1; at = environ.indexOf(prefix, at + 1)) {
    let end = at + prefix.length;
    while (end < environ.length && isDigit(environ[end] as number)) end += 1;
    if (end > at + prefix.length && environ[end] === 0x5d) (tokens ??= []).push(environ.toString('latin1', at, end + 1));
  }
  return tokens ?? NO_TOKENS;
}

function isDigit(byte: number): boolean {
  return byte >= 0x30 && byte <= 0x39;
}

let shared: ProcessScanner | undefined;

/** The scanner every run of this host shares. */
export function sharedScanner(): ProcessScanner {
  shared ??= new ProcessScanner();
  return shared;
}

/**
 * The live descendants of a running root, by parent, read from /proc/<pid>/task/<tid>/children of
 * every thread (a child may be forked by any thread), each child's stat read for its start time.
 * Costs in the run's own processes, not the host's. `null` where the kernel has no such files (then
 * the caller scans the whole table); `[]` when the root is gone or is not the process it was.
 */
export async function readDescendants(root: RunRoot, files: ProcFiles = procFiles): Promise<ProcessEntry[] | null> {
  if (!files.hasChildren) return null;
  const self = statOf(files, root.pid);
  if (self === null || self.zombie || (root.startTime !== '' && self.startTime !== root.startTime)) return [];
  const found: ProcessEntry[] = [];
  const visited = new Set<number>([root.pid, process.pid]);
  const queue: number[] = [root.pid];
  const pace = new Pace();
  while (queue.length > 0) {
    const parent = queue.pop() as number;
    const tids = files.tasks(parent);
    for (const tid of tids ?? []) {
      if (pace.due()) await nextTurn();
      const list = files.children(parent, tid);
      if (list === null) continue;
      for (const word of list.split(' ')) {
        const pid = Number(word);
        if (word === '' || !Number.isInteger(pid) || visited.has(pid)) continue;
        visited.add(pid);
        if (pace.due()) await nextTurn();
        const child = statOf(files, pid);
        // Gone, or its pid already reused by a process of another parent; a zombie has no children left.
        if (child === null || child.ppid !== parent || child.zombie) continue;
        found.push(child);
        queue.push(pid);
      }
    }
  }
  return found;
}
