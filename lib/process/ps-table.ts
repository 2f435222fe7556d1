import { execFile, execFileSync } from 'node:child_process';
import { errorMessage } from './error-message.js';
import type { ProcessEntry, ProcessTable } from './process-entry.js';

// The process table where there is no /proc: `ps`, one row per process.
const PS_ARGS = ['-A', '-o', 'pid=,ppid=,pgid=,stat='];
const PS_MAX_BUFFER = 16 * 1024 * 1024;

/** Reads the table with `ps`; a missing `ps` gives an empty table and a reason. */
export function readPsTable(command = 'ps'): Promise<ProcessTable> {
  return new Promise((resolve) => {
    try {
      execFile(command, PS_ARGS, { maxBuffer: PS_MAX_BUFFER }, (error, stdout) => {
        if (error !== null) {
          resolve({ entries: [], error: `cannot run ps: ${errorMessage(error)}` });
          return;
        }
        resolve({ entries: parsePs(stdout), error: null });
      });
    } catch (error) {
      resolve({ entries: [], error: `cannot run ps: ${errorMessage(error)}` });
    }
  });
}

/** The same, synchronously, for the host's `exit` event. */
export function readPsTableSync(command = 'ps'): ProcessTable {
  try {
    return { entries: parsePs(execFileSync(command, PS_ARGS, { encoding: 'utf8', maxBuffer: PS_MAX_BUFFER, stdio: ['ignore', 'pipe', 'ignore'] })), error: null };
  } catch (error) {
    return { entries: [], error: `cannot run ps: ${errorMessage(error)}` };
  }
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
