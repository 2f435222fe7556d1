// A host for the soak: starts a few runs (cooperative, hostile, trees that escaped to their own
// session, pi-like agents with a tool, one with a settings overlay), unsubscribes some at random,
// and after `delayMs` ends itself by `path`. Usage: soak-host.ts <path> <delayMs> <runs> <seed>.
// Paths: exit, throw, reject, SIGTERM, SIGINT, SIGHUP (no handler of the host's), recipe (the
// README's once-SIGTERM handler, registered before the first run, then SIGTERM), SIGKILL.
import type { Observable } from 'rxjs';
import { processLines, runPi, stopAllRuns } from '../../lib/index.js';
import { AGENT } from '../cancel-latency.js';
import { fixture, seededRandom } from '../util.js';

const [path = 'exit', delayText = '0', runsText = '4', seedText = '1'] = process.argv.slice(2);
const random = seededRandom(Number(seedText));

if (path === 'recipe') {
  process.once('SIGTERM', () => {
    void stopAllRuns().then(() => process.exit(0));
  });
}

const node = (script: string, ...args: string[]) => processLines(process.execPath, [fixture(script), ...args], { gracePeriodMs: 300 });
const agent = (...args: string[]) => runPi({ prompt: 'go', executable: process.execPath, executableArgs: ['-e', AGENT, '--', ...args], gracePeriodMs: 300 });
const starts: (() => Observable<unknown>)[] = [
  () => node('forever.mjs'),
  () => node('ignore-signals.mjs'),
  () => node('detached-grandchild.mjs', 'hostile'),
  () => node('orphan-grandchild.mjs'),
  () => agent('tree'),
  () => agent('hostile', 'tree'),
  () => runPi({ prompt: 'go', executable: process.execPath, executableArgs: ['-e', AGENT, '--', 'tree'], agentRetry: false, gracePeriodMs: 300 }),
];
for (let i = 0; i < Number(runsText); i += 1) {
  const start = starts[Math.floor(random() * starts.length)] ?? (() => node('forever.mjs'));
  const subscription = start().subscribe();
  // A third of the runs are unsubscribed before the host dies: their stop sequences are in flight.
  if (random() < 0.33) setTimeout(() => {
      subscription.unsubscribe();
    }, Math.floor(random() * Number(delayText)));
}

setTimeout(() => {
  switch (path) {
    case 'exit':
      process.exit(0);
      break;
    case 'throw':
      throw new Error('soak: an uncaught exception');
    case 'reject':
      void Promise.reject(new Error('soak: an unhandled rejection'));
      break;
    case 'recipe':
      process.kill(process.pid, 'SIGTERM');
      break;
    default:
      process.kill(process.pid, path);
  }
}, Number(delayText));
