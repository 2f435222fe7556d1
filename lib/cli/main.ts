#!/usr/bin/env node
// The `agent-rx` command: `agent-rx run [options] <prompt>` (see RUN_USAGE), `agent-rx chat
// [options]` (see CHAT_USAGE), `agent-rx acp` (ACP_USAGE) and `agent-rx worker` (WORKER_USAGE).
import { createRequire } from 'node:module';
import { isTerminal, type CliMessage, type TerminalMessage } from '../messages.js';
import { stopAllRuns } from '../process/run-registry.js';
import { colorEnabled, isTerminalStream } from './ansi.js';
import { acp } from './acp-command.js';
import { worker } from './worker-command.js';
import { agentDisplayNames } from './agent-help.js';
import { chat } from './chat.js';
import { inFlagWords } from './flag-words.js';
import { createRenderer, renderIntro } from './render.js';
import { describeRun, parseRunArgs, RUN_USAGE, type RunRequest } from './run-command.js';
import { Spinner } from './spinner.js';
import { onStopSignals } from './stop-signals.js';
import { answeredUsage, usageErrorText } from './usage.js';
import { terminalAsker } from './approve.js';

const USAGE = `usage: agent-rx <command>

commands:
  run [options] <prompt>   run a coding agent (${agentDisplayNames()}) and show what it does
  chat [options]           an interactive session on an agent: many turns, steering, aborts
  acp --agent <name>       serve an agent to an editor over the Agent Client Protocol (stdio)
  worker --redis <url>     run agents for the fleet on this machine (runs dispatched with run --fleet
                           or agent-rx/fleet)
  --version                the version
  --help                   this text; \`agent-rx <command> --help\` for a command's options
`;

const [command, ...rest] = process.argv.slice(2);
if (command === '--version' || command === '-v') {
  const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };
  process.stdout.write(`${version}\n`);
} else if (command === '--help' || command === '-h') {
  process.stdout.write(USAGE);
} else if (command === undefined) {
  // No command is a usage error, as a wrong one is: the usage goes to stderr.
  process.stderr.write(USAGE);
  process.exitCode = 2;
} else if (command === 'run') {
  void run(rest);
} else if (command === 'chat') {
  chat(rest);
} else if (command === 'acp') {
  acp(rest);
} else if (command === 'worker') {
  worker(rest);
} else {
  process.stderr.write(usageErrorText('agent-rx', `unknown command ${JSON.stringify(command)}`));
  process.exitCode = 2;
}

async function run(argv: readonly string[]): Promise<void> {
  const stdinIsTerminal = isTerminalStream(process.stdin);
  // `--approve ask` asks on the terminal (the question on stderr, so that stdout stays the run's).
  let beforeAsking = (): void => undefined;
  const ask = stdinIsTerminal && isTerminalStream(process.stderr) ? terminalAsker(process.stdin, process.stderr, () => {
          beforeAsking();
        }) : undefined;
  const input = { stdinIsTerminal, ...(ask === undefined ? {} : { ask }) };
  let request: RunRequest = parseRunArgs(argv, input);
  if (request.kind === 'read-stdin') request = parseRunArgs(argv, { ...input, stdin: await readStdin() });
  if (request.kind === 'read-stdin' || answeredUsage('run', RUN_USAGE, request)) return;
  if (request.notice !== undefined) process.stderr.write(`agent-rx run: ${request.notice}\n`);
  // With --output-schema, stdout is for the answer (JSON) alone: the run is shown on stderr.
  // `--json` keeps stdout for the messages, the answer in the last one.
  const answerOnly = request.outputSchema !== undefined && !request.json;
  const view = answerOnly ? process.stderr : process.stdout;
  const out = (text: string): void => {
    if (text !== '') view.write(text);
  };
  const tty = isTerminalStream(view) && !request.json;
  const color = request.color ?? colorEnabled(view, process.env);
  const renderer = createRenderer({ color });
  const spinner = tty ? new Spinner(out) : null;
  beforeAsking = () => spinner?.stop();
  const startedAt = performance.now();
  const elapsed = (): number => performance.now() - startedAt;
  let terminal: TerminalMessage | undefined;

  if (!request.json) out(`${renderIntro(`agent-rx · ${describeRun(request)}`, request.prompt, { color }, attachedLines(request))}\n`);
  spinner?.start(`waiting for ${request.agent}`);
  // `--json` prints the library's messages as they are (data); the rendering speaks in flags.
  const show = (message: CliMessage): void => {
    if (request.json) {
      out(`${JSON.stringify(message)}\n`);
      return;
    }
    spinner?.stop();
    out(renderer.render(inFlagWords(message), elapsed()));
    // Between outputs that leave the cursor at a line start, say what is being waited for.
    if (message.type === 'tool.call' || message.type === 'tool.update') spinner?.start(`running ${message.name}`);
    else if (message.type !== 'assistant' && !isTerminal(message)) spinner?.start(`waiting for ${request.agent}`);
  };

  const subscription = request.source().subscribe({
    next: (message) => {
      if (isTerminal(message)) terminal = message;
      show(message);
    },
    error: (error: unknown) => {
      spinner?.stop();
      process.stderr.write(`agent-rx: the stream failed: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    },
    complete: () => {
      spinner?.stop();
      // The validated answer, for a script to read.
      if (answerOnly && terminal?.type === 'terminal.completed') process.stdout.write(`${JSON.stringify(terminal.output ?? null, null, 2)}\n`);
      process.exitCode = terminal?.type === 'terminal.completed' ? 0 : 1;
    },
  });

  // Ctrl-C, SIGTERM or SIGHUP: stopAllRuns() runs the agent's stop sequence and ends the run
  // in-band (its terminal.failed, reason stopped, is shown or printed like any other); then exit as
  // a shell would (130, 143, 129). A replay has no process: it ends by unsubscribing. A second
  // signal ends at once. A reader of stdout that went away (`| head`) stops it the same way, quietly,
  // and the command exits 141.
  onStopSignals(async (signal) => {
    spinner?.stop();
    if (signal === 'SIGPIPE') {
      // Nobody reads what would be said.
    } else if (request.json) process.stderr.write(`agent-rx: ${signal}, stopping the agent (a second signal ends at once)\n`);
    else out(renderer.interrupted(elapsed(), signal));
    await stopAllRuns();
    // A fleet run: cancelled on its worker, and ended in-band like a local one.
    await request.stop?.();
    subscription.unsubscribe();
  });
}

/** What goes with the prompt, for the run's heading: `image shot.png`, `file notes.md`, `output schema answer.json`. */
function attachedLines(request: Extract<RunRequest, { kind: 'run' }>): string[] {
  const lines = request.attachments.map(({ flag }) => flag.replace(/^--/, ''));
  return request.outputSchema === undefined ? lines : [...lines, `output-schema ${request.outputSchema.path}`];
}

// All of stdin, as text (the prompt of `agent-rx run -`).
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
