import { spawn } from 'node:child_process';
import split2 from 'split2';
import { runPi } from '../lib/index.js';
import { check, delay, isAlive, ratios, summarize, type Summary } from './util.js';

/**
 * A stand-in for pi (run with `node -e`): prints a session line whose id lists its pids, then
 * waits. `tree`: first starts a tool command in its own session (as pi runs bash tools) that
 * ignores SIGTERM and SIGINT. `hostile`: ignores SIGTERM and SIGINT itself. Otherwise it behaves
 * like pi on SIGTERM: kills its tool command, then exits.
 */
export const AGENT = `
const { spawn } = require('node:child_process');
const hostile = process.argv.includes('hostile');
let tool;
if (process.argv.includes('tree')) {
  tool = spawn(process.execPath, ['-e', "process.on('SIGTERM',()=>{});process.on('SIGINT',()=>{});setInterval(()=>{},1000)"], { detached: true, stdio: 'ignore' });
  tool.unref();
}
if (hostile) {
  process.on('SIGTERM', () => {});
  process.on('SIGINT', () => {});
} else if (tool) {
  process.on('SIGTERM', () => { try { process.kill(tool.pid, 'SIGKILL'); } catch {} process.exit(143); });
}
const id = ['pids', process.pid, ...(tool ? [tool.pid] : [])].join('-');
process.stdout.write(JSON.stringify({ type: 'session', version: 3, id, timestamp: new Date().toISOString(), cwd: process.cwd() }) + '\\n');
process.stdout.write('{"type":"agent_start"}\\n');
setInterval(() => {}, 1000);
`;

export interface CancelCase {
  readonly label: string;
  readonly agentArgs: readonly string[];
  readonly gracePeriodMs: number;
  readonly repetitions: number;
}

export interface CancelRow {
  readonly label: string;
  readonly gracePeriodMs: number;
  /** Unsubscribe → every process of the tree gone (runPi), ms. */
  readonly runPi: Summary;
  /** Unsubscribe → the library's stop sequence finished (onStopped: the last scan confirmed), ms. */
  readonly runPiSettled: Summary;
  /** kill(SIGTERM), SIGKILL after the grace period → the root gone (hand-written baseline), ms. */
  readonly baseline: Summary;
  readonly ratio: Summary;
  /** Processes of the tree still alive 3 s after the grace period, summed over the repetitions. */
  readonly runPiSurvivors: number;
  readonly baselineSurvivors: number;
}

const pidsOf = (sessionId: string): number[] => sessionId.split('-').slice(1).map(Number);

/** Polls /proc every millisecond until the pids are gone or the deadline passes; returns the survivors. */
async function waitGone(pids: readonly number[], deadline: number): Promise<number[]> {
  while (pids.some(isAlive) && performance.now() < deadline) await delay(1);
  return pids.filter(isAlive);
}

/** Ends what a baseline run left behind: only processes this bench started, by pid. */
function reap(pids: readonly number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}

async function runPiOnce(agentArgs: readonly string[], gracePeriodMs: number): Promise<{ ms: number; settledMs: number; survivors: number }> {
  let unsubscribedAt = 0;
  let settledAt = 0;
  let gone: Promise<{ ms: number; left: number[] }> | undefined;
  const stopped = new Promise<void>((resolve, reject) => {
    const subscription = runPi({
      prompt: 'go',
      executable: process.execPath,
      executableArgs: ['-e', AGENT, '--', ...agentArgs],
      gracePeriodMs,
      onStopped: () => {
        settledAt = performance.now();
        resolve();
      },
    }).subscribe({
      next: (message) => {
        if (message.type !== 'session.started') return;
        const pids = pidsOf(message.sessionId);
        unsubscribedAt = performance.now();
        subscription.unsubscribe();
        // Watched from this moment, independently of the library's own report.
        gone = waitGone(pids, unsubscribedAt + gracePeriodMs + 3000).then((left) => ({ ms: performance.now() - unsubscribedAt, left }));
      },
      error: reject,
    });
  });
  await stopped;
  check(gone !== undefined, 'the agent never reported its pids');
  const { ms, left } = await gone;
  reap(left);
  return { ms, settledMs: settledAt - unsubscribedAt, survivors: left.length };
}

/** What a user would write: SIGTERM the child, SIGKILL it after the grace period. */
async function baselineOnce(agentArgs: readonly string[], gracePeriodMs: number): Promise<{ ms: number; survivors: number }> {
  const child = spawn(process.execPath, ['-e', AGENT, '--', ...agentArgs, '--mode', 'json'], { stdio: ['ignore', 'pipe', 'ignore'] });
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => {
      resolve();
    });
  });
  const pids = await new Promise<number[]>((resolve) => {
    child.stdout.pipe(split2()).on('data', (line: string) => {
      try {
        const event = JSON.parse(line) as { type?: unknown; id?: unknown };
        if (event.type === 'session' && typeof event.id === 'string') resolve(pidsOf(event.id));
      } catch {
        // Not JSON: ignored.
      }
    });
  });
  const killedAt = performance.now();
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), gracePeriodMs);
  await exited;
  clearTimeout(timer);
  const [root = 0, ...rest] = pids;
  await waitGone([root], killedAt + gracePeriodMs + 3000);
  const ms = performance.now() - killedAt;
  const survivors = await waitGone(rest, killedAt + gracePeriodMs + 3000);
  reap(survivors);
  return { ms, survivors: survivors.length };
}

export const CANCEL_CASES: readonly CancelCase[] = [
  { label: 'cooperative: exits on SIGTERM', agentArgs: [], gracePeriodMs: 2000, repetitions: 20 },
  { label: 'cooperative + tool child in its own session (the agent kills it on SIGTERM)', agentArgs: ['tree'], gracePeriodMs: 2000, repetitions: 15 },
  { label: 'hostile: ignores SIGTERM/SIGINT, tool child in its own session ignores them too', agentArgs: ['hostile', 'tree'], gracePeriodMs: 1000, repetitions: 5 },
];

export async function cancelLatency(cases: readonly CancelCase[] = CANCEL_CASES, scale = 1): Promise<CancelRow[]> {
  const rows: CancelRow[] = [];
  for (const { label, agentArgs, gracePeriodMs, repetitions } of cases) {
    const lib: number[] = [];
    const settled: number[] = [];
    const base: number[] = [];
    let libSurvivors = 0;
    let baseSurvivors = 0;
    const reps = Math.max(2, Math.round(repetitions * scale));
    for (let rep = 0; rep < reps; rep += 1) {
      const order = rep % 2 === 0 ? (['lib', 'base'] as const) : (['base', 'lib'] as const);
      for (const which of order) {
        if (which === 'lib') {
          const result = await runPiOnce(agentArgs, gracePeriodMs);
          lib.push(result.ms);
          settled.push(result.settledMs);
          libSurvivors += result.survivors;
        } else {
          const result = await baselineOnce(agentArgs, gracePeriodMs);
          base.push(result.ms);
          baseSurvivors += result.survivors;
        }
      }
    }
    rows.push({
      label,
      gracePeriodMs,
      runPi: summarize(lib),
      runPiSettled: summarize(settled),
      baseline: summarize(base),
      ratio: ratios(lib, base),
      runPiSurvivors: libSurvivors,
      baselineSurvivors: baseSurvivors,
    });
  }
  return rows;
}
