// `npm start`: runs a coding agent through agent-rx and shows its messages as a person reads them.
// Offline by default (a bundled replay of a recorded run); `--real` runs the agent itself.
import { fileURLToPath } from 'node:url';
import { agentByName, isTerminal, runAgent, stopAllRuns, type StopReport, type TerminalMessage } from '../lib/index.js';
import { colorEnabled } from '../lib/cli/ansi.js';
import { demoOptionsFor, describeAgent, parseDemoArgs, USAGE } from './demo-options.js';
import { createRenderer, renderIntro } from '../lib/cli/render.js';

const REPLAY_SCRIPT = fileURLToPath(new URL('./replay-agent/pi-replay.mjs', import.meta.url));

const request = parseDemoArgs(process.argv.slice(2), process.env);
if (request.kind === 'help') {
  process.stdout.write(USAGE);
} else if (request.kind === 'usage-error') {
  process.stderr.write(`${request.message}\n\n${USAGE}`);
  process.exitCode = 2;
} else {
  const color = colorEnabled(process.stdout, process.env);
  const renderer = createRenderer({ color });
  const startedAt = performance.now();
  const elapsed = () => performance.now() - startedAt;
  let terminal: TerminalMessage | undefined;

  process.stdout.write(`${renderIntro(`agent-rx demo · ${describeAgent(request)}`, request.prompt, { color })}\n`);
  const onStopped = (report: StopReport): void => {
    if (report.requested) process.stdout.write(renderer.stopped(report));
  };
  const run$ = runAgent(agentByName(request.agent), { ...demoOptionsFor(request, REPLAY_SCRIPT), onStopped });
  const subscription = run$.subscribe({
    next: (message) => {
      if (isTerminal(message)) terminal = message;
      process.stdout.write(renderer.render(message, elapsed()));
    },
    error: (error: unknown) => {
      process.stderr.write(`agent-rx demo: the stream failed: ${String(error)}\n`);
      process.exitCode = 1;
    },
    complete: () => {
      process.exitCode = terminal?.type === 'terminal.completed' ? 0 : 1;
    },
  });

  // Ctrl-C: unsubscribing stops the agent; wait for its stop sequence, then exit like a shell would.
  // A second Ctrl-C finds no handler of ours and ends the demo at once.
  process.once('SIGINT', () => {
    subscription.unsubscribe();
    process.stdout.write(renderer.interrupted(elapsed()));
    void stopAllRuns().finally(() => process.exit(130));
  });
}
