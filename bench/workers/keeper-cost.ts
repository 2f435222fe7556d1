// The keeper's cost, in a fresh host process (it is started once per host): the time the host
// spends in ensureKeeper(), the time until the keeper's script runs (its first line makes it ignore
// SIGINT and SIGHUP, which /proc shows), and its resident memory; against the same for the
// smallest second Node process (`node -e` with a SIGINT listener, ready when it prints). Prints one JSON line.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { ensureKeeper, keeperPid } from '../../lib/process/keeper.js';
import { delay } from '../util.js';

function status(pid: number): { rssKB: number; ignored: bigint; caught: bigint } {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string): string => text.split('\n').find((line) => line.startsWith(`${name}:`))?.split(/\s+/)[1] ?? '0';
  return { rssKB: Number(field('VmRSS')), ignored: BigInt(`0x${field('SigIgn')}`), caught: BigInt(`0x${field('SigCgt')}`) };
}

async function readyAfter(pid: number, ready: (s: ReturnType<typeof status>) => boolean, startedAt: number): Promise<{ readyMs: number; rssKB: number }> {
  for (;;) {
    const now = status(pid);
    if (ready(now)) {
      const readyMs = performance.now() - startedAt;
      // RSS once settled: a shell's or Node's start-up pages come in over the first moments.
      await delay(200);
      return { readyMs, rssKB: status(pid).rssKB };
    }
    await delay(0);
  }
}

const SIGINT_BIT = 1n << 1n;

const keeperStarted = performance.now();
ensureKeeper();
const ensureMs = performance.now() - keeperStarted;
const pid = keeperPid();
if (pid === undefined) throw new Error('no keeper started (not Linux, or AGENT_RX_KEEPER=off?)');
const keeper = await readyAfter(pid, (s) => (s.ignored & SIGINT_BIT) !== 0n, keeperStarted);

const nodeStarted = performance.now();
const node = spawn(process.execPath, ['-e', "process.on('SIGINT', () => {}); process.stdout.write('ready'); setInterval(() => {}, 1e6)"], {
  stdio: ['ignore', 'pipe', 'ignore'],
  detached: true,
});
const nodeSpawnMs = performance.now() - nodeStarted;
// Node catches some signals of its own from the start: its readiness is the line it prints.
await new Promise((resolve) => node.stdout.once('data', resolve));
const baseline = await readyAfter(node.pid as number, () => true, nodeStarted);
node.kill('SIGKILL');
console.log(JSON.stringify({ ensureMs, keeperReadyMs: keeper.readyMs, keeperRssKB: keeper.rssKB, nodeSpawnMs, nodeReadyMs: baseline.readyMs, nodeRssKB: baseline.rssKB }));
