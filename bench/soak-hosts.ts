// The soak's second part: hosts that die while their runs are active, by every path, at random
// points. Each host is a child process (bench/workers/soak-host.ts) whose environment carries a tag
// of its own; after it has died, /proc is scanned for that tag (independently of the library)
// until nothing carries it or 15 s have passed. Its temporary directory must be empty too.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchFile, delay, isAlive } from './util.js';

export const HOST_PATHS = ['exit', 'throw', 'reject', 'SIGTERM', 'SIGINT', 'SIGHUP', 'recipe', 'SIGKILL'] as const;
export type HostPath = (typeof HOST_PATHS)[number];

export interface HostDeathTally {
  hosts: number;
  byPath: Record<string, { hosts: number; survivors: number; leftFiles: number; wrongEnding: number; msToClean: number[] }>;
  survivors: number;
  leftFiles: number;
  wrongEnding: number;
  samples: string[];
}

const TAG = 'AGENT_RX_SOAK_HOST';

function tagged(value: string): { pid: number; command: string }[] {
  const needle = Buffer.from(`${TAG}=${value}\0`);
  const found: { pid: number; command: string }[] = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      if (readFileSync(`/proc/${pid}/environ`).includes(needle) && isAlive(pid)) {
        found.push({ pid, command: readFileSync(`/proc/${pid}/cmdline`, 'latin1').replaceAll('\0', ' ').slice(0, 80) });
      }
    } catch {
      // gone
    }
  }
  return found;
}

/** How a host that died by `path` must end: a signal keeps its meaning, the recipe exits 0. */
function expectedEnding(path: HostPath): string {
  if (path === 'exit' || path === 'recipe') return 'code 0';
  if (path === 'throw' || path === 'reject') return 'code 1';
  return `signal ${path}`;
}

async function oneHost(path: HostPath, delayMs: number, runs: number, seed: number, tally: HostDeathTally): Promise<void> {
  const value = randomUUID();
  const temp = mkdtempSync(join(tmpdir(), 'agent-rx-soak-host-'));
  const child = spawn(process.execPath, ['--import', 'tsx', benchFile('./workers/soak-host.ts'), path, String(delayMs), String(runs), String(seed)], {
    env: { ...process.env, [TAG]: value, TMPDIR: temp },
    stdio: 'ignore',
  });
  const ending = await new Promise<string>((resolve) => {
    child.on('exit', (code, signal) => {
      resolve(signal === null ? `code ${String(code)}` : `signal ${signal}`);
    });
  });
  const died = performance.now();
  let left = tagged(value);
  while (left.length > 0 && performance.now() - died < 15_000) {
    if (process.env['SOAK_DEBUG'] === '1') console.log(path, Math.round(performance.now() - died), JSON.stringify(left));
    await delay(20);
    left = tagged(value);
  }
  // Only what agent-rx makes (tsx keeps a cache of its own in the temporary directory).
  const files = readdirSync(temp).filter((name) => name.startsWith('agent-rx'));
  const row = (tally.byPath[path] ??= { hosts: 0, survivors: 0, leftFiles: 0, wrongEnding: 0, msToClean: [] });
  row.hosts += 1;
  row.survivors += left.length;
  row.leftFiles += files.length;
  row.msToClean.push(performance.now() - died);
  tally.hosts += 1;
  tally.survivors += left.length;
  tally.leftFiles += files.length;
  if (ending !== expectedEnding(path)) {
    row.wrongEnding += 1;
    tally.wrongEnding += 1;
  }
  if ((left.length > 0 || files.length > 0 || ending !== expectedEnding(path)) && tally.samples.length < 10) {
    tally.samples.push(`${path} after ${delayMs} ms (seed ${seed}): ${ending}; survivors ${JSON.stringify(left)}; files ${files.join(' ')}`);
  }
  for (const { pid } of left) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  rmSync(temp, { recursive: true, force: true });
}

/** `hosts` host deaths, `concurrency` at a time, each by a random path after a random delay. */
export async function hostDeaths(hosts: number, concurrency: number, random: () => number): Promise<HostDeathTally> {
  const tally: HostDeathTally = { hosts: 0, byPath: {}, survivors: 0, leftFiles: 0, wrongEnding: 0, samples: [] };
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < hosts) {
        const path = HOST_PATHS[next % HOST_PATHS.length] ?? 'exit';
        next += 1;
        await oneHost(path, Math.floor(random() * 1500), 1 + Math.floor(random() * 5), Math.floor(random() * 2 ** 31), tally);
      }
    }),
  );
  return tally;
}
