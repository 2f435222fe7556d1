// Reliability soak: `npm run soak`. Many runs against hostile fixtures, cancelled at random
// points; then counts the processes left behind by scanning /proc/*/environ for a tag that every
// run carries (independent of the library's own bookkeeping), the unhandled errors, and the heap.
// Exits non-zero when anything survived or went wrong.
//
// Then hosts die with runs active, by every path (process.exit, an uncaught exception, an unhandled
// rejection, SIGTERM, SIGINT, SIGHUP, the README's SIGTERM recipe, SIGKILL) at random points, and
// what each left is counted the same way (bench/soak-hosts.ts).
//
// Environment: SOAK_RUNS (default 1000), SOAK_CONCURRENCY (8), SOAK_GRACE_MS (100), SOAK_SEED,
// SOAK_ONLY (only the fixtures whose name contains this text), SOAK_HOSTS (default 80 host deaths,
// 0 for none).
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Observable } from 'rxjs';
import { activeRunCount, processLines, runPi, stopAllRuns, type StopReport } from '../lib/index.js';
import { AGENT } from './cancel-latency.js';
import { serveCommand } from './readers.js';
import { hostDeaths } from './soak-hosts.js';
import { piStream, removeStream } from './stream.js';
import { delay, fixture, isAlive, seededRandom, summarize } from './util.js';

const RUNS = Number(process.env['SOAK_RUNS'] ?? 1000);
const CONCURRENCY = Number(process.env['SOAK_CONCURRENCY'] ?? 8);
const GRACE_MS = Number(process.env['SOAK_GRACE_MS'] ?? 100);
const SEED = Number(process.env['SOAK_SEED'] ?? Date.now() % 1_000_000);
const HOSTS = Number(process.env['SOAK_HOSTS'] ?? 80);
const TAG_NAME = 'AGENT_RX_SOAK_TAG';
const TAG = randomUUID();
/** Which run a process belongs to, to say what left a survivor behind. */
const RUN_NAME = 'AGENT_RX_SOAK_RUN';

let unhandled = 0;
const unhandledSamples: string[] = [];
const onUnhandled = (kind: string) => (error: unknown) => {
  unhandled += 1;
  if (unhandledSamples.length < 5) unhandledSamples.push(`${kind}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
};
process.on('uncaughtException', onUnhandled('uncaughtException'));
process.on('unhandledRejection', onUnhandled('unhandledRejection'));

// A full GC for heap samples, without needing a node flag on the command line.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const heapMB = (): number => {
  gc();
  gc();
  return process.memoryUsage().heapUsed / 2 ** 20;
};

/** mulberry32: the cancel points are reproducible with SOAK_SEED. */
const random = seededRandom(SEED);

const replay = piStream(200);
const served = serveCommand(replay.path);
type Env = Readonly<Record<string, string>>;

interface Fixture {
  readonly name: string;
  /** Ends by itself (so "never cancel" is a possible cancel point). */
  readonly finite: boolean;
  start(env: Env, onStopped: (report: StopReport) => void): Observable<{ readonly kind?: string | undefined; readonly type?: string }>;
}

const node = (script: string, ...args: string[]): string[] => [fixture(script), ...args];
const processFixture = (name: string, args: string[], finite = false): Fixture => ({
  name,
  finite,
  start: (env, onStopped) => processLines(process.execPath, args, { env, gracePeriodMs: GRACE_MS, onStopped }),
});

const ALL_FIXTURES: readonly Fixture[] = [
  processFixture('ignore-signals', node('ignore-signals.mjs')),
  processFixture('detached-grandchild hostile', node('detached-grandchild.mjs', 'hostile')),
  processFixture('detached-grandchild hostile, root exits', node('detached-grandchild.mjs', 'hostile', 'exit'), true),
  processFixture('orphan-grandchild', node('orphan-grandchild.mjs')),
  processFixture('orphan-grandchild, root exits', node('orphan-grandchild.mjs', 'exit'), true),
  processFixture('forever', node('forever.mjs')),
  processFixture('lines', node('lines.mjs', '20000'), true),
  {
    name: 'runPi: pi-like agent, hostile, tool child in its own session',
    finite: false,
    start: (env, onStopped) =>
      runPi({ prompt: 'go', executable: process.execPath, executableArgs: ['-e', AGENT, '--', 'hostile', 'tree'], env, gracePeriodMs: GRACE_MS, onStopped }),
  },
  {
    name: 'runPi: replay of a 200-delta stream',
    finite: true,
    start: (env, onStopped) => runPi({ prompt: 'go', executable: served.command, executableArgs: served.args, env, gracePeriodMs: GRACE_MS, onStopped }),
  },
];

const FIXTURES = ALL_FIXTURES.filter((subject) => subject.name.includes(process.env['SOAK_ONLY'] ?? ''));
if (FIXTURES.length === 0) throw new Error(`no fixture matches SOAK_ONLY=${process.env['SOAK_ONLY'] ?? ''}`);

type CancelPoint = 'at once' | 'after a delay' | 'after some items' | 'never';

interface Tally {
  runs: number;
  completed: number;
  cancelled: number;
  subscriberErrors: number;
  /** A completed stream whose last item was not its exit item / terminal message. */
  badEndings: number;
  /** What the library itself reported: unconfirmed stops and survivors. */
  libraryUnconfirmed: number;
  librarySurvivors: number;
}

const tally: Tally = { runs: 0, completed: 0, cancelled: 0, subscriberErrors: 0, badEndings: 0, libraryUnconfirmed: 0, librarySurvivors: 0 };
const byFixture = new Map<string, number>();
const byCancel = new Map<CancelPoint, number>();

function pick<T>(items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}

/** What each run was, for the survivors' report. */
const plans = new Map<number, string>();

async function once(run: number): Promise<void> {
  const subject = pick(FIXTURES);
  const points: CancelPoint[] = subject.finite ? ['at once', 'after a delay', 'after some items', 'never'] : ['at once', 'after a delay', 'after some items'];
  const point = pick(points);
  const afterItems = 1 + Math.floor(random() * 5);
  const afterMs = Math.floor(random() * 400);
  byFixture.set(subject.name, (byFixture.get(subject.name) ?? 0) + 1);
  byCancel.set(point, (byCancel.get(point) ?? 0) + 1);
  tally.runs += 1;
  plans.set(run, `${subject.name}, cancel ${point}${point === 'after a delay' ? ` (${afterMs} ms)` : point === 'after some items' ? ` (${afterItems})` : ''}`);
  const env = { [TAG_NAME]: TAG, [RUN_NAME]: String(run) };
  let report: StopReport | undefined;
  let seen = 0;
  let last: { readonly kind?: string | undefined; readonly type?: string } | undefined;
  let timer: NodeJS.Timeout | undefined;
  await new Promise<void>((resolve) => {
    const subscription = subject
      .start(env, (stop) => {
        report = stop;
        resolve();
      })
      .subscribe({
        next: (item) => {
          seen += 1;
          last = item;
          if (point === 'after some items' && seen === afterItems) subscription.unsubscribe();
        },
        error: () => {
          tally.subscriberErrors += 1;
        },
        complete: () => {
          tally.completed += 1;
          if (last?.kind !== 'exit' && last?.type?.startsWith('terminal.') !== true) tally.badEndings += 1;
        },
      });
    if (point === 'at once') subscription.unsubscribe();
    // After a random delay; for 'after some items', a fallback when the fixture prints fewer.
    if (point === 'after a delay' || point === 'after some items') {
      timer = setTimeout(
        () => {
          subscription.unsubscribe();
        },
        point === 'after a delay' ? afterMs : 2000,
      );
    }
  });
  clearTimeout(timer);
  if (point !== 'never') tally.cancelled += 1;
  if (report !== undefined && !report.confirmed) tally.libraryUnconfirmed += 1;
  tally.librarySurvivors += report?.survivors.length ?? 0;
  if (report !== undefined) {
    const { pid, exitedGracefully, killed, durationMs, errors } = report;
    plans.set(run, `${plans.get(run) ?? ''}; root ${String(pid)}, graceful ${String(exitedGracefully)}, killed [${killed.join(' ')}], ${durationMs.toFixed(0)} ms, errors ${errors.length}`);
  }
}

interface Survivor {
  readonly pid: number;
  readonly ppid: number;
  readonly pgid: number;
  readonly sid: number;
  readonly command: string;
  /** The run it belongs to, and what that run was. */
  readonly run: string;
}

/** Live processes whose environment holds the tag: scanned from /proc, not from the library. */
function taggedProcesses(): Survivor[] {
  const needle = Buffer.from(`${TAG_NAME}=${TAG}\0`);
  const found: Survivor[] = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      const environ = readFileSync(`/proc/${pid}/environ`);
      if (!environ.includes(needle) || !isAlive(pid)) continue;
      const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
      const [, ppid = '0', pgid = '0', sid = '0'] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const run = /AGENT_RX_SOAK_RUN=(\d+)/.exec(environ.toString('latin1'))?.[1] ?? '?';
      found.push({
        pid,
        ppid: Number(ppid),
        pgid: Number(pgid),
        sid: Number(sid),
        command: readFileSync(`/proc/${pid}/cmdline`, 'latin1').replaceAll('\0', ' ').slice(0, 100),
        run: `#${run}: ${plans.get(Number(run)) ?? '?'}`,
      });
    } catch {
      // Gone, or not ours to read.
    }
  }
  return found;
}

const handlesAtStart = (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles().length;
const started = performance.now();
const heap: { runs: number; heapMB: number }[] = [{ runs: 0, heapMB: heapMB() }];
const sampleEvery = Math.max(1, Math.round(RUNS / 10));
let next = 0;
let done = 0;
console.log(`soak: ${RUNS} runs, ${CONCURRENCY} at a time, grace ${GRACE_MS} ms, seed ${SEED}, tag ${TAG_NAME}=${TAG}`);
await Promise.all(
  Array.from({ length: CONCURRENCY }, async () => {
    while (next < RUNS) {
      next += 1;
      await once(next);
      done += 1;
      if (done % sampleEvery === 0) {
        heap.push({ runs: done, heapMB: heapMB() });
        console.log(`  ${done} runs, heap ${heap.at(-1)?.heapMB.toFixed(1) ?? '?'} MB, ${((performance.now() - started) / 1000).toFixed(0)} s`);
      }
    }
  }),
);
await stopAllRuns();
const tracked = activeRunCount();
// Let the kernel reap what was just killed before looking.
await delay(500);
const survivors = taggedProcesses();
for (const { pid } of survivors) {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}
removeStream(replay);
console.log(`soak: ${HOSTS} host deaths, 2 at a time`);
const hostsStarted = performance.now();
const deaths = await hostDeaths(HOSTS, 2, random);
const hostSeconds = (performance.now() - hostsStarted) / 1000;
await delay(50);
const handlesAtEnd = (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles().length;
heap.push({ runs: RUNS, heapMB: heapMB() });

const warm = heap.find((sample) => sample.runs >= Math.min(100, RUNS))?.heapMB ?? Number.NaN;
const final = heap.at(-1)?.heapMB ?? Number.NaN;
const heapBounded = final <= warm * 1.5 + 4;
const seconds = (performance.now() - started) / 1000;
const summary = {
  seconds: Math.round(seconds),
  concurrency: CONCURRENCY,
  gracePeriodMs: GRACE_MS,
  seed: SEED,
  survivingProcesses: survivors.length,
  survivors,
  unhandledErrors: unhandled,
  unhandledSamples,
  ...tally,
  runsStillTracked: tracked,
  activeHandles: { atStart: handlesAtStart, atEnd: handlesAtEnd },
  heapMB: { samples: heap.map((sample) => `${sample.runs}: ${sample.heapMB.toFixed(1)}`).join(', '), afterWarmUp: warm, final, bounded: heapBounded },
  heapSummary: summarize(heap.map((sample) => sample.heapMB)),
  byFixture: Object.fromEntries(byFixture),
  byCancelPoint: Object.fromEntries(byCancel),
  hostDeaths: {
    seconds: Math.round(hostSeconds),
    hosts: deaths.hosts,
    survivors: deaths.survivors,
    leftFiles: deaths.leftFiles,
    wrongEnding: deaths.wrongEnding,
    byPath: Object.fromEntries(
      Object.entries(deaths.byPath).map(([path, row]) => [
        path,
        { hosts: row.hosts, survivors: row.survivors, leftFiles: row.leftFiles, wrongEnding: row.wrongEnding, msToClean: summarize(row.msToClean) },
      ]),
    ),
    samples: deaths.samples,
  },
};
console.log(JSON.stringify(summary, null, 2));
const failed =
  survivors.length > 0 ||
  unhandled > 0 ||
  tally.subscriberErrors > 0 ||
  tally.badEndings > 0 ||
  tracked > 0 ||
  tally.runs !== RUNS ||
  !heapBounded ||
  deaths.survivors > 0 ||
  deaths.leftFiles > 0 ||
  deaths.wrongEnding > 0;
console.log(
  failed
    ? 'soak: FAILED'
    : `soak: OK — ${RUNS} runs, 0 surviving processes, 0 unhandled errors, heap ${warm.toFixed(1)} → ${final.toFixed(1)} MB; ${deaths.hosts} host deaths, 0 survivors, 0 files left`,
);
process.exitCode = failed ? 1 : 0;
