import { afterEach, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { ProcessScanner, readDescendants, SharedScan, tokensIn } from '../../lib/process/process-scanner.js';
import { procFiles, type ProcFiles } from '../../lib/process/proc-files.js';
import { readStatSync } from '../../lib/process/proc-stat.js';
import { hostToken, newRunMarker, RUN_MARKER_ENV } from '../../lib/process/run-marker.js';
import { RunTree } from '../../lib/process/run-tree.js';
import { fixture, isAlive } from '../helpers/processes.js';

const node = process.execPath;
const started: ChildProcess[] = [];
const pidsToEnd = new Set<number>();

afterEach(() => {
  for (const pid of pidsToEnd) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  pidsToEnd.clear();
  for (const child of started) child.kill('SIGKILL');
  started.length = 0;
});

/** Spawns `node -e script` and resolves with the child and the first line it prints. */
async function startNode(script: string, options: { detached?: boolean; env?: NodeJS.ProcessEnv } = {}): Promise<{ child: ChildProcess; line: string }> {
  const child = spawn(node, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'], detached: options.detached ?? false, env: options.env ?? process.env });
  started.push(child);
  if (child.pid !== undefined) pidsToEnd.add(child.pid);
  let text = '';
  for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
    text += chunk.toString('utf8');
    const end = text.indexOf('\n');
    if (end !== -1) return { child, line: text.slice(0, end) };
  }
  throw new Error('the child printed no line');
}

const pidsIn = (line: string): number[] => line.split(' ').map(Number);

/** Reads the test settles by hand, in order; each resolves with its number. Calls and starts share one clock. */
function manualReads(): { read: () => Promise<number>; finish: () => void; startedAt: number[]; clock: () => number } {
  let tick = 0;
  const pending: (() => void)[] = [];
  const startedAt: number[] = [];
  return {
    read: () => {
      const index = startedAt.push((tick += 1));
      return new Promise<number>((resolve) => {
        pending.push(() => {
          resolve(index);
        });
      });
    },
    finish: () => {
      const finish = pending.shift();
      if (finish === undefined) throw new Error('no read in flight');
      finish();
    },
    startedAt,
    clock: () => (tick += 1),
  };
}

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('SharedScan: coalescing', () => {
  it('serves concurrent callers with one read, and callers during a read with the next one, shared', async () => {
    const reads = manualReads();
    const shared = new SharedScan(reads.read);
    const first = shared.scan();
    // Made while read 1 runs: they must not get read 1 (it started before them), and share read 2.
    const during = Array.from({ length: 9 }, () => shared.scan());
    expect(shared.started).toBe(1);
    reads.finish();
    expect(await first).toBe(1);
    await settle();
    expect(shared.started).toBe(2);
    reads.finish();
    expect(await Promise.all(during)).toEqual(Array.from({ length: 9 }, () => 2));
    expect(shared.started).toBe(2);
  });

  it('gives a caller only a read that started after its call', async () => {
    const reads = manualReads();
    const shared = new SharedScan(reads.read);
    const calls: { at: number; result: Promise<number> }[] = [];
    const call = (): void => {
      calls.push({ at: reads.clock(), result: shared.scan() });
    };
    call();
    call();
    reads.finish();
    call();
    await settle();
    call();
    reads.finish();
    await settle();
    call();
    reads.finish();
    await settle();
    reads.finish();
    const served = await Promise.all(calls.map(({ result }) => result));
    expect(served).toEqual([1, 2, 2, 3, 4]);
    calls.forEach(({ at }, i) => {
      expect(reads.startedAt[(served[i] ?? 0) - 1]).toBeGreaterThan(at);
    });
    // Nothing in flight any more: the next call starts a read at once.
    const before = shared.started;
    void shared.scan();
    expect(shared.started).toBe(before + 1);
    reads.finish();
  });

  it('passes a failed read to its callers and still runs the next one', async () => {
    let count = 0;
    const shared = new SharedScan(async () => {
      count += 1;
      await settle();
      if (count === 1) throw new Error('read failed');
      return count;
    });
    const first = shared.scan();
    const second = shared.scan();
    await expect(first).rejects.toThrow('read failed');
    await expect(second).resolves.toBe(2);
  });
});

describe('ProcessScanner', () => {
  it('lets concurrent callers share scans of the real table', async () => {
    const scanner = new ProcessScanner();
    const tables = await Promise.all(Array.from({ length: 20 }, () => scanner.scan()));
    expect(scanner.scans).toBe(2);
    for (const table of tables) {
      expect(table.error).toBeNull();
      expect(table.entries.find((entry) => entry.pid === process.pid)?.ppid).toBe(process.ppid);
    }
  });

  it("reads a process's environment once, for processes started since the host, and forgets a process once it is gone", async () => {
    const environReads = new Map<number, number>();
    const counting: ProcFiles = {
      ...procFiles,
      hasChildren: procFiles.hasChildren,
      environ: (pid) => {
        environReads.set(pid, (environReads.get(pid) ?? 0) + 1);
        return procFiles.environ(pid);
      },
    };
    const scanner = new ProcessScanner(counting);
    const marker = newRunMarker(undefined);
    const { child, line } = await startNode("process.stdout.write('up\\n'); setInterval(() => {}, 1000)", {
      env: { ...process.env, [RUN_MARKER_ENV]: `[0123456789abcdef.5]${marker.value}` },
    });
    expect(line).toBe('up');
    const pid = child.pid as number;
    for (let i = 0; i < 3; i += 1) {
      const table = await scanner.scan();
      // Only this host's tokens, not another host's.
      expect(table.entries.find((entry) => entry.pid === pid)?.tokens).toEqual([marker.token]);
      expect(table.entries.find((entry) => entry.pid === process.pid)?.tokens).toEqual([]);
    }
    expect(environReads.get(pid)).toBe(1);
    // PID 1 started before this host: it cannot carry the host's tokens, and is never read.
    expect(environReads.get(1)).toBeUndefined();
    expect(scanner.tokensOf(pid)).toEqual([marker.token]);
    child.kill('SIGKILL');
    await once(child, 'exit');
    await scanner.scan();
    expect(scanner.tokensOf(pid)).toBeUndefined();
  });

  it('finds exactly the tokens an environment holds, as a substring search for each would', () => {
    const prefix = Buffer.from(hostToken());
    const environ = Buffer.from(`A=1\0${RUN_MARKER_ENV}=[ffff.3]${hostToken()}12]${hostToken()}]${hostToken()}4x]${hostToken()}${hostToken()}7]\0B=${hostToken()}9]`);
    expect(tokensIn(environ, prefix)).toEqual([`${hostToken()}12]`, `${hostToken()}7]`, `${hostToken()}9]`]);
    expect(tokensIn(Buffer.from('A=1\0'), prefix)).toEqual([]);
  });
});

/** A root that forks, from a worker thread, a child that spawns a grandchild in its own session; prints their pids. */
const TREE = `
const { Worker } = require('node:worker_threads');
const worker = new Worker(\`
  const { spawn } = require('node:child_process');
  const { parentPort } = require('node:worker_threads');
  const child = spawn(process.execPath, [${JSON.stringify(fixture('detached-grandchild.mjs'))}], { stdio: ['ignore', 'pipe', 'ignore'] });
  child.stdout.once('data', (data) => parentPort.postMessage(child.pid + ' ' + JSON.parse(String(data)).grandchild));
\`, { eval: true });
worker.on('message', (pids) => process.stdout.write(pids + '\\n'));
setInterval(() => {}, 1000);
`;

describe('readDescendants', () => {
  it("walks every thread's children: a child forked by a worker thread, and its grandchild in its own session", async () => {
    const { child, line } = await startNode(TREE);
    const [middle = 0, grandchild = 0] = pidsIn(line);
    pidsToEnd.add(middle).add(grandchild);
    const root = child.pid as number;
    const found = await readDescendants({ pid: root, startTime: readStatSync(root)?.startTime ?? '' });
    expect(found?.map((entry) => entry.pid).sort((a, b) => a - b)).toEqual([middle, grandchild].sort((a, b) => a - b));
    expect(found?.find((entry) => entry.pid === grandchild)).toMatchObject({ ppid: middle, startTime: readStatSync(grandchild)?.startTime });
  });

  it('finds nothing for a root that is gone or is not the process it was', async () => {
    const { child } = await startNode("process.stdout.write('up\\n'); setInterval(() => {}, 1000)");
    expect(await readDescendants({ pid: child.pid as number, startTime: '1' })).toEqual([]);
    child.kill('SIGKILL');
    await once(child, 'exit');
    expect(await readDescendants({ pid: child.pid as number, startTime: '' })).toEqual([]);
  });

  it('says so (null) where the kernel has no children files', async () => {
    expect(await readDescendants({ pid: process.pid, startTime: '' }, { ...procFiles, hasChildren: false })).toBeNull();
  });
});

/** A group leader whose child moved to its own session: once the root is gone, only the record leads to the child. */
const ESCAPER = `
const { spawn } = require('node:child_process');
const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { detached: true, stdio: 'ignore' });
process.stdout.write(child.pid + '\\n');
setInterval(() => {}, 1000);
`;

describe('RunTree.record', () => {
  async function recordThenKill(files: ProcFiles | null, record: boolean): Promise<{ escaped: number; confirmed: boolean; killed: readonly number[]; scans: number }> {
    const { child, line } = await startNode(ESCAPER, { detached: true });
    const escaped = Number(line);
    pidsToEnd.add(escaped);
    const scanner = new ProcessScanner();
    const tree = new RunTree(child.pid as number, '[not-a-marker.1]', scanner, files);
    if (record) await tree.record();
    const scans = scanner.scans;
    // The root dies without a stop sequence: its child is reparented, in another session, unmarked.
    child.kill('SIGKILL');
    await once(child, 'exit');
    const confirmed = await tree.killAndConfirm(() => false, 5000);
    return { escaped, confirmed, killed: tree.killed, scans };
  }

  it("records the root's descendants by walking the children files, without scanning the table", async () => {
    const { escaped, confirmed, killed, scans } = await recordThenKill(procFiles, true);
    expect(scans).toBe(0);
    expect(confirmed).toBe(true);
    expect(killed).toContain(escaped);
    expect(isAlive(escaped)).toBe(false);
  });

  it('falls back to a scan of the whole table where the kernel has no children files', async () => {
    const { escaped, confirmed, killed, scans } = await recordThenKill({ ...procFiles, hasChildren: false }, true);
    expect(scans).toBe(1);
    expect(confirmed).toBe(true);
    expect(killed).toContain(escaped);
    expect(isAlive(escaped)).toBe(false);
  });

  it('(control) without the record, such a child is out of reach', async () => {
    const { escaped, killed } = await recordThenKill(procFiles, false);
    expect(killed).not.toContain(escaped);
    expect(isAlive(escaped)).toBe(true);
  });
});
