import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { isAlive } from '../helpers/processes.js';

/**
 * A unique environment variable for one suite's runs. Every process an agent starts inherits it,
 * so `/proc/<pid>/environ` finds them, tool commands in their own sessions included (Linux only).
 */
export interface ProcessTag {
  readonly name: string;
  readonly value: string;
  /** Live processes carrying the tag, with their command name. */
  processes(): { pid: number; comm: string }[];
  /** Polls until a tagged process with this command name appears (tools start a moment after they are announced). */
  waitFor(comm: string, timeoutMs?: number): Promise<number>;
}

export function createProcessTag(prefix = 'AGENT_RX_CONFORMANCE'): ProcessTag {
  const name = prefix;
  const value = randomUUID();
  const needle = `${name}=${value}\0`;
  const processes = (): { pid: number; comm: string }[] => {
    const found: { pid: number; comm: string }[] = [];
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
      try {
        if (!readFileSync(`/proc/${entry}/environ`).includes(needle)) continue;
        if (isAlive(Number(entry))) found.push({ pid: Number(entry), comm: readFileSync(`/proc/${entry}/comm`, 'utf8').trim() });
      } catch {
        // gone
      }
    }
    return found;
  };
  return {
    name,
    value,
    processes,
    waitFor: async (comm, timeoutMs = 15_000) => {
      const deadline = performance.now() + timeoutMs;
      while (performance.now() < deadline) {
        const match = processes().find((entry) => entry.comm === comm);
        if (match !== undefined) return match.pid;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      throw new Error(`no ${comm} process appeared`);
    },
  };
}
