// A host of the library, for the host-exit tests: `node --import tsx spec/host/host.ts <mode>
// [--no-agent-retry]`. It starts one runPi run of the fake tool agent, waits until the agent's
// tool runs, prints `ready {"host":…,"agent":…,"tool":…,"toolAlive":true}`, then ends as the mode says:
//   exit          process.exit(0)
//   throw         an uncaught exception from a timer
//   reject        an unhandled rejection
//   wait          nothing: the test signals it (SIGTERM, SIGINT, SIGHUP, SIGKILL), no handler of ours
//   recipe        README's recipe, `process.once('SIGTERM', …)` registered before the first run
//   recipe-after  the same with `process.on`, registered after the first run started
// --no-agent-retry: the run gets pi's settings overlay (a temporary directory) too.
// What the run emits goes to stderr, one JSON message a line, for the test's failure messages.
import { fileURLToPath } from 'node:url';
import { runPi, stopAllRuns } from '../../lib/index.js';
import { isAlive } from '../helpers/processes.js';

const MODES = ['exit', 'throw', 'reject', 'wait', 'recipe', 'recipe-after'] as const;
type Mode = (typeof MODES)[number];

const AGENT = fileURLToPath(new URL('../fixtures/fake-agent-tool.mjs', import.meta.url));

const mode = process.argv[2];
if (!isMode(mode)) {
  process.stderr.write(`usage: host.ts <${MODES.join('|')}> [--no-agent-retry]\n`);
  process.exit(2);
}
const agentRetry = !process.argv.includes('--no-agent-retry');

// The recipe from the README, as a host would write it.
const recipe = (): void => {
  void stopAllRuns().then(() => process.exit(0));
};
if (mode === 'recipe') process.once('SIGTERM', recipe);

runPi({ prompt: 'run a tool', executable: process.execPath, executableArgs: [AGENT], session: 'none', agentRetry }).subscribe({
  next: (message) => {
    process.stderr.write(`${JSON.stringify(message)}\n`);
    if (message.type === 'tool.update') ready(JSON.parse(message.output) as { toolPid: number; agentPid: number });
  },
  error: (error: unknown) => {
    process.stderr.write(`error: ${String(error)}\n`);
  },
  complete: () => {
    process.stderr.write('complete\n');
  },
});
if (mode === 'recipe-after') process.on('SIGTERM', recipe);

function ready(pids: { toolPid: number; agentPid: number }): void {
  // Checked here: the test may see the tool only after a synchronous kill at exit.
  const toolAlive = isAlive(pids.toolPid);
  process.stdout.write(`ready ${JSON.stringify({ host: process.pid, agent: pids.agentPid, tool: pids.toolPid, toolAlive })}\n`);
  switch (mode) {
    case 'exit':
      process.exit(0);
      break;
    case 'throw':
      setTimeout(() => {
        throw new Error('host fixture: an uncaught exception');
      }, 10);
      break;
    case 'reject':
      setTimeout(() => {
        void Promise.reject(new Error('host fixture: an unhandled rejection'));
      }, 10);
      break;
    default:
      // wait, recipe, recipe-after: the test sends the signal.
      break;
  }
}

function isMode(value: string | undefined): value is Mode {
  return (MODES as readonly (string | undefined)[]).includes(value);
}
