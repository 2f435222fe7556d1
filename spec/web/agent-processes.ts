import { readFileSync } from 'node:fs';
import { readProcessTable } from '../../lib/process/process-table.js';

/** Live processes started by this (test) process that run the replay agent (`script`: the one-shot one by default). */
export async function replayAgentsOfThisProcess(script: 'pi-replay.mjs' | 'pi-rpc-replay.mjs' = 'pi-replay.mjs'): Promise<number[]> {
  const { entries } = await readProcessTable();
  return entries.filter((entry) => entry.ppid === process.pid && !entry.zombie && commandLine(entry.pid).includes(`/${script}`)).map((entry) => entry.pid);
}

/**
 * Live processes started by this (test) process that run the real pi with a configuration of its
 * own (PI_CODING_AGENT_DIR in their environment). By environment, not command line: pi renames its
 * process (`process.title`), which rewrites its command line.
 */
export async function piAgentsOfThisProcess(): Promise<number[]> {
  const { entries } = await readProcessTable();
  return entries.filter((entry) => entry.ppid === process.pid && !entry.zombie && environment(entry.pid).includes('\0PI_CODING_AGENT_DIR=')).map((entry) => entry.pid);
}

/** `pid` and its live descendants, by parent pid. */
export async function treeOf(pid: number): Promise<number[]> {
  const { entries } = await readProcessTable();
  const tree = [pid];
  for (let i = 0; i < tree.length; i += 1) {
    for (const entry of entries) if (entry.ppid === tree[i] && !entry.zombie) tree.push(entry.pid);
  }
  return tree;
}

/** Resolves once `check()` is true; rejects after `timeoutMs` with `what`. */
export async function waitUntil(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'latin1').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

function environment(pid: number): string {
  try {
    return `\0${readFileSync(`/proc/${pid}/environ`, 'latin1')}`;
  } catch {
    return '';
  }
}
