import { closeSync, existsSync, openSync, readdirSync, readFile, readSync } from 'node:fs';

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

/** A small /proc file as text, read synchronously; `null` when it cannot be read. */
export function readProcText(path: string): string | null {
  const length = readWhole(path);
  return length === -1 ? null : scratch.toString('latin1', 0, length);
}

/** Whether /proc/<pid>/environ holds `needle` anywhere (read without a copy); `false` when it cannot be read. */
export function environHolds(pid: number, needle: Buffer): boolean {
  const length = readWhole(`/proc/${pid}/environ`);
  return length !== -1 && scratch.subarray(0, length).includes(needle);
}

/**
 * A /proc file read asynchronously; `null` when it cannot be read. (The callback API:
 * fs/promises' readFile costs three times as much per small /proc file.)
 */
export function readProcFile(path: string): Promise<Buffer | null> {
  return new Promise((resolve) => {
    readFile(path, (error, data) => {
      resolve(error === null ? data : null);
    });
  });
}

let childrenFiles: boolean | undefined;

/** The real /proc. */
export const procFiles: ProcFiles = {
  pids: () => {
    const pids: number[] = [];
    for (const name of readdirSync('/proc')) if (isPid(name)) pids.push(Number(name));
    return pids;
  },
  stat: (pid) => readProcText(`/proc/${pid}/stat`),
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
  children: (pid, tid) => readProcText(`/proc/${pid}/task/${tid}/children`),
  get hasChildren() {
    childrenFiles ??= hasProc && existsSync(`/proc/${process.pid}/task/${process.pid}/children`);
    return childrenFiles;
  },
};

function isPid(name: string): boolean {
  const code = name.charCodeAt(0);
  return code >= 48 && code <= 57;
}
