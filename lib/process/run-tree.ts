import { readDescendants, sharedScanner, type ProcessScanner, type ScannedEntry } from './process-scanner.js';
import type { ProcessEntry } from './process-entry.js';
import { hasProc, procFiles, type ProcFiles } from './proc-files.js';
import { bornAfter, readStat, sinceOf, statOf } from './proc-stat.js';
import { runMembers, type RunRoot } from './run-members.js';
import { sendSignal, signalGroup } from './signals.js';

/** How often confirmation looks for survivors. */
const CONFIRM_POLL_MS = 20;

/**
 * What is known of one run's process tree, and the jobs done on it: record it, kill it and
 * confirm, kill it synchronously at host exit, list survivors. The root leads its own process
 * group (spawned `detached`), and every process of the run carries the run's `token` in its
 * environment.
 */
export class RunTree {
  readonly #pid: number;
  readonly #token: string;
  readonly #scanner: ProcessScanner;
  readonly #files: ProcFiles | null;
  /** `''` where the platform does not say. */
  readonly #rootStartTime: string;
  /** Descendants seen so far: pid → start time. */
  readonly #known = new Map<number, string>();
  readonly #killed = new Set<number>();
  readonly errors: string[] = [];
  /** Whether the root's process group may still have members: kill the group only then. */
  #groupLive = true;

  /**
   * `scanner` reads the whole table (shared by every run); `files` is /proc (`null`: no /proc).
   * Both are there for specs.
   */
  constructor(pid: number, token: string, scanner: ProcessScanner = sharedScanner(), files: ProcFiles | null = hasProc ? procFiles : null) {
    this.#pid = pid;
    this.#token = token;
    this.#scanner = scanner;
    this.#files = files;
    // Read now, while the root surely runs: a process started earlier cannot be of this run.
    this.#rootStartTime = files === null ? '' : (statOf(files, pid)?.startTime ?? '');
  }

  get killed(): readonly number[] {
    return [...this.#killed];
  }

  /**
   * Snapshots the root's descendants (before the interrupt: once the root exits, its children are
   * reparented and no longer lead back to it). Only by parent: processes carrying the marker are
   * found by it again in every scan of the kill. Walks the run's own processes where the kernel
   * lists each thread's children, else reads the whole table.
   */
  async record(): Promise<void> {
    const root = this.#root();
    const descendants = this.#files === null ? null : await readDescendants(root, this.#files);
    if (descendants !== null) {
      for (const entry of descendants) this.#known.set(entry.pid, entry.startTime);
      return;
    }
    const table = await this.#scanner.scan();
    this.#noteError(table.error);
    for (const member of this.#members(table.entries).values()) this.#known.set(member.pid, member.startTime);
  }

  /**
   * SIGKILLs the root (while alive), its group (while it may have members) and every member found,
   * until two scans in a row find nothing or `timeoutMs` runs out; `true` when confirmed. One
   * empty scan is not enough: a process forked after the scan listed /proc, by a parent that
   * exited before the scan read it, is missed; the group kill before the second scan reaches it
   * (same group), and the second scan finds it if it moved to another session.
   */
  async killAndConfirm(rootAlive: () => boolean, timeoutMs: number): Promise<boolean> {
    const deadline = performance.now() + timeoutMs;
    let emptyScans = 0;
    for (;;) {
      const alive = rootAlive();
      if (alive) this.#killOne(this.#pid);
      if (alive || this.#groupLive) this.#note(signalGroup(this.#pid, 'SIGKILL'));
      // A scan that started after the kill above, shared with the other runs that wait for one.
      const table = await this.#scanner.scan();
      this.#noteError(table.error);
      const members = this.#members(table.entries);
      this.#groupLive = table.error !== null || [...members.values()].some((member) => member.pgid === this.#pid);
      for (const member of members.values()) {
        this.#known.set(member.pid, member.startTime);
        this.#killOne(member.pid);
      }
      emptyScans = members.size === 0 && !rootAlive() ? emptyScans + 1 : 0;
      if (emptyScans === 2) return true;
      if (performance.now() >= deadline) return false;
      // A second look right away; after a kill, give the kernel a moment first.
      if (emptyScans === 0) await delay(CONFIRM_POLL_MS);
    }
  }

  /**
   * SIGKILLs the run's processes other than the root (its tools, while it lives on), until two
   * scans in a row find none or `timeoutMs` runs out. Only processes started at or after
   * `bornSince` (a start time in clock ticks, as /proc gives it) count, so a helper the root
   * started earlier is left alone. The killed pids, and whether all are gone.
   */
  async killDescendants(timeoutMs: number, bornSince?: string): Promise<{ readonly killed: readonly number[]; readonly confirmed: boolean }> {
    const deadline = performance.now() + timeoutMs;
    const since = sinceOf(bornSince);
    const killed = new Set<number>();
    let emptyScans = 0;
    for (;;) {
      const table = await this.#scanner.scan();
      this.#noteError(table.error);
      const targets = [...this.#members(table.entries).values()].filter((member) => bornAfter(member, since));
      for (const member of targets) {
        killed.add(member.pid);
        this.#killOne(member.pid);
      }
      emptyScans = targets.length === 0 ? emptyScans + 1 : 0;
      if (emptyScans === 2) return { killed: [...killed], confirmed: true };
      if (performance.now() >= deadline) return { killed: [...killed], confirmed: false };
      if (emptyScans === 0) await delay(CONFIRM_POLL_MS);
    }
  }

  /**
   * What the synchronous last resort at host exit must SIGKILL of this run, on a table read
   * synchronously: the root while alive, its group while the group has members, and every member
   * (with the same start-time guards as the stop sequence). The caller signals, once per target.
   */
  targetsNow(table: readonly ProcessEntry[], rootAlive: boolean): { readonly pids: number[]; readonly group: number | null } {
    const members = this.#members(table);
    const groupHasMembers = [...members.values()].some((member) => member.pgid === this.#pid);
    const pids = [...members.keys()];
    if (rootAlive) pids.push(this.#pid);
    return { pids, group: rootAlive || groupHasMembers ? this.#pid : null };
  }

  /** Known processes still alive (with their recorded start time), for the report. */
  async survivors(rootAlive: boolean): Promise<number[]> {
    const survivors: number[] = [];
    for (const [pid, startTime] of this.#known) {
      const stat = await readStat(pid);
      if (stat !== null && !stat.zombie && (startTime === '' || stat.startTime === startTime)) survivors.push(pid);
    }
    if (rootAlive) survivors.push(this.#pid);
    return survivors;
  }

  #root(): RunRoot {
    return { pid: this.#pid, startTime: this.#rootStartTime };
  }

  /** The run's processes in a shared scan (marked: carrying this run's token) or in a table marked by the caller. */
  #members<Entry extends ProcessEntry>(table: readonly Entry[]): Map<number, Entry> {
    return runMembers(table, this.#root(), this.#known, (entry) => entry.marked || ((entry as Partial<ScannedEntry>).tokens?.includes(this.#token) ?? false));
  }

  #killOne(pid: number): void {
    this.#killed.add(pid);
    this.#note(sendSignal(pid, 'SIGKILL'));
  }

  #note(error: string | null): void {
    // A process that vanished between the scan and the signal is the expected race, not a failure.
    if (error !== null && !error.includes('ESRCH')) this.errors.push(error);
  }

  #noteError(error: string | null): void {
    if (error !== null && this.errors.at(-1) !== error) this.errors.push(error);
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
