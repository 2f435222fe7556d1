import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { Writable } from 'node:stream';
import { hostTempPath } from './host-temp.js';
import { hostToken } from './run-marker.js';
import { KEEPER_SCRIPT } from './signals.js';

/** Set to `off` (or `0`, `false`) in the host's environment to run without the keeper. */
const KEEPER_ENV = 'AGENT_RX_KEEPER';

const SHELL = '/bin/sh';

let keeper: ChildProcess | null = null;

/**
 * Starts the keeper (see `KEEPER_SCRIPT`) unless it runs already: a `/bin/sh` in its own session
 * whose stdin is a pipe from this host. Neither it nor its pipe keeps the host's event loop alive.
 * Linux only (it finds the host's processes in /proc); elsewhere, and with `AGENT_RX_KEEPER=off`,
 * a host killed without warning leaves its runs to the operating system. Never throws.
 */
export function ensureKeeper(): void {
  if (keeper !== null || process.platform !== 'linux' || isOff(process.env[KEEPER_ENV]) || !existsSync(SHELL)) return;
  try {
    const child = spawn(SHELL, ['-c', KEEPER_SCRIPT, 'agent-rx-keeper', hostToken(), hostTempPath()], {
      stdio: ['pipe', 'ignore', 'ignore'],
      detached: true,
    });
    child.on('error', () => {
      if (keeper === child) keeper = null;
    });
    // Gone (killed by someone): the next run starts another.
    child.on('exit', () => {
      if (keeper === child) keeper = null;
    });
    child.stdin.on('error', () => undefined);
    child.unref();
    // The pipe is a socket: unref'd, it does not keep the host's event loop alive either.
    const pipe: Writable & { unref?: () => void } = child.stdin;
    pipe.unref?.();
    keeper = child;
  } catch {
    keeper = null;
  }
}

/** Lines for the keeper, written together at the end of the current task. */
let pending = '';

/**
 * Tells the keeper that a run's process group exists (`true`) or is gone (`false`). The lines of
 * one task (a burst of spawns) go in one write: each write wakes the keeper's shell. A host killed
 * before the write still has those runs' processes killed by the keeper's scan for its token.
 */
export function keeperGroup(pgid: number, live: boolean): void {
  if (keeper === null) return;
  if (pending === '') queueMicrotask(flushKeeper);
  pending += `${live ? '+' : '-'}${pgid}\n`;
}

function flushKeeper(): void {
  const lines = pending;
  pending = '';
  const stdin = keeper?.stdin;
  if (stdin === null || stdin === undefined || !stdin.writable) return;
  stdin.write(lines);
}

/** The keeper's pid while it runs, for diagnostics and tests. */
export function keeperPid(): number | undefined {
  return keeper?.pid;
}

function isOff(value: string | undefined): boolean {
  return value !== undefined && ['off', '0', 'false', 'no'].includes(value.trim().toLowerCase());
}
