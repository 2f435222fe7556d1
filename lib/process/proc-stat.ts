import type { ProcessEntry } from './process-entry.js';
import { hasProc, procFiles, readProcFile, readProcText, type ProcFiles } from './proc-files.js';

/** One process's stat line read through `files`, parsed; `null` when it is gone. */
export function statOf(files: ProcFiles, pid: number): ProcessEntry | null {
  const text = files.stat(pid);
  return text === null ? null : parseStat(text);
}

/** Reads one process's stat line; `null` when it is gone. */
export async function readStat(pid: number): Promise<ProcessEntry | null> {
  const text = await readProcFile(`/proc/${pid}/stat`);
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

const USER_HZ = 100;

/**
 * Now, as a process start time: clock ticks since boot, as /proc/<pid>/stat counts them (USER_HZ,
 * 100 a second on Linux), from /proc/uptime; `''` where there is no /proc. A process started from
 * now on has a start time at or after it (`bornAfter`).
 */
export function startTimeNow(): string {
  const uptime = hasProc ? readProcText('/proc/uptime') : null;
  const seconds = uptime === null ? Number.NaN : Number.parseFloat(uptime);
  return Number.isFinite(seconds) ? String(Math.floor(seconds * USER_HZ)) : '';
}

/** A start time as a number of clock ticks; `null` when unknown (`''`) or not given. */
export function sinceOf(bornSince: string | undefined): number | null {
  return bornSince === undefined || bornSince === '' ? null : Number(bornSince);
}

/** Started at or after `since` (start times in clock ticks); unknown start times count as after. */
export function bornAfter(entry: ProcessEntry, since: number | null): boolean {
  return since === null || entry.startTime === '' || Number(entry.startTime) >= since;
}
