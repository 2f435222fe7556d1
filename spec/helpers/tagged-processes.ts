import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { isAlive } from './processes.js';

/** A live process, by pid and command name. */
export interface TaggedProcess {
  readonly pid: number;
  readonly comm: string;
}

/**
 * A unique environment variable given to a child the test starts. Every descendant inherits it,
 * those in their own session included, so a scan of `/proc/<pid>/environ` finds them whatever the
 * library knows or did (Linux only).
 */
export interface ProcessTag {
  readonly name: string;
  readonly value: string;
  /** `{ [name]: value }`, to merge into a child's environment. */
  readonly env: Readonly<Record<string, string>>;
  /** Live (non-zombie) processes carrying the tag, this process excepted. */
  processes(): TaggedProcess[];
  /** Polls until no process carries the tag, or `timeoutMs` passed; returns those still there. */
  waitUntilNone(timeoutMs: number): Promise<TaggedProcess[]>;
  /** Polls until a tagged process with this command name appears (tools start a moment after they are announced). */
  waitFor(comm: string, timeoutMs?: number): Promise<number>;
  /** SIGKILLs every process carrying the tag (only those, by pid); returns them. */
  killAll(): TaggedProcess[];
}

export function createProcessTag(name = 'AGENT_RX_TEST_TAG'): ProcessTag {
  const value = randomUUID();
  const needle = Buffer.from(`${name}=${value}\0`);
  const processes = (): TaggedProcess[] => {
    const found: TaggedProcess[] = [];
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
      try {
        if (!readFileSync(`/proc/${entry}/environ`).includes(needle)) continue;
        if (isAlive(Number(entry))) found.push({ pid: Number(entry), comm: readFileSync(`/proc/${entry}/comm`, 'utf8').trim() });
      } catch {
        // gone, or not ours to read
      }
    }
    return found;
  };
  return {
    name,
    value,
    env: { [name]: value },
    processes,
    waitUntilNone: async (timeoutMs) => {
      const deadline = performance.now() + timeoutMs;
      for (;;) {
        const left = processes();
        if (left.length === 0 || performance.now() >= deadline) return left;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    waitFor: async (comm, timeoutMs = 15_000) => {
      const deadline = performance.now() + timeoutMs;
      while (performance.now() < deadline) {
        const match = processes().find((entry) => entry.comm === comm);
        if (match !== undefined) return match.pid;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      throw new Error(`no ${comm} process appeared`);
    },
    killAll: () => {
      const left = processes();
      for (const { pid } of left) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      return left;
    },
  };
}

/** `pid comm, pid comm` for failure messages. */
export function describeProcesses(list: readonly TaggedProcess[]): string {
  return list.length === 0 ? 'none' : list.map(({ pid, comm }) => `${pid} ${comm}`).join(', ');
}
