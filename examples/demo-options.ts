import { parseArgs } from 'node:util';
import { agentFlagOptions, agentFlagValues } from '../lib/cli/agent-flags.js';
import { AGENT_NAMES, AGENTS, isAgentName, type AgentName } from '../lib/index.js';
import { defaultTranscript } from './replay-agent/recordings.js';

export type DemoAgent = AgentName;

export const DEFAULT_PROMPT = 'Run `echo hello` with bash, then tell me what it printed.';

export const USAGE = `usage: npm start -- [options] [prompt]

Runs a coding agent through agent-rx and shows its messages as they stream.
By default a bundled replay of a recorded run (offline, no API key, no agent needed).

  --agent <${AGENT_NAMES.join('|')}>
                        which agent (default pi)
  --transcript <name>   which recorded run to replay (examples/replay-agent/transcripts/<name>.jsonl;
                        default: one of the agent's own with a tool call)
  --real                run the real agent instead (its own program, as agent-rx run finds it;
                        also: AGENT_RX_DEMO_REAL=1)
  --model <id>          passed to the agent (for the replay: same as --transcript)
  the agents' own flags of agent-rx run (--provider, --approval-mode, …) pass through
  -h, --help            this text
`;

/** What the demo was asked to do. */
export type DemoRequest =
  | {
      readonly kind: 'run';
      readonly agent: DemoAgent;
      readonly real: boolean;
      readonly prompt: string;
      readonly model?: string;
      /** What the agent's own flags set (`{ provider: 'anthropic' }`). */
      readonly options: Readonly<Record<string, unknown>>;
    }
  | { readonly kind: 'help' }
  | { readonly kind: 'usage-error'; readonly message: string };

export type DemoRun = Extract<DemoRequest, { kind: 'run' }>;

// Reads the command line and the environment; never throws on bad input.
export function parseDemoArgs(argv: readonly string[], env: NodeJS.ProcessEnv): DemoRequest {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        ...agentFlagOptions('run'),
        agent: { type: 'string', default: 'pi' },
        real: { type: 'boolean' },
        transcript: { type: 'string' },
        model: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    return { kind: 'usage-error', message: error instanceof Error ? error.message : String(error) };
  }
  const { values, positionals } = parsed;
  if (values.help === true) return { kind: 'help' };
  const agent = values.agent;
  if (!isAgentName(agent)) return { kind: 'usage-error', message: `--agent must be one of ${AGENT_NAMES.join(', ')}; got ${agent}` };
  const real = values.real === true || env['AGENT_RX_DEMO_REAL'] === '1';
  if (real && values.transcript !== undefined) {
    return { kind: 'usage-error', message: '--transcript picks a replay; it does not go with --real' };
  }
  const options = agentFlagValues(agent, values, 'run');
  if (typeof options === 'string') return { kind: 'usage-error', message: options };
  const prompt = positionals.join(' ').trim();
  const model = values.transcript ?? values.model ?? (real ? undefined : defaultTranscript(agent));
  return {
    kind: 'run',
    agent,
    real,
    prompt: prompt === '' ? DEFAULT_PROMPT : prompt,
    ...(model === undefined ? {} : { model }),
    options,
  };
}

// A run's options: the real agent, or Node running the bundled replay script (a transcript is a "model").
export function demoOptionsFor(request: DemoRun, replayScript: string): Readonly<Record<string, unknown>> {
  const passed = { prompt: request.prompt, ...(request.model === undefined ? {} : { model: request.model }), ...request.options };
  return request.real ? passed : { ...passed, executable: process.execPath, executableArgs: [replayScript] };
}

// One line saying what runs, for the top of the output.
export function describeAgent(request: DemoRun): string {
  const name = AGENTS[request.agent].displayName;
  if (request.real) {
    const model = [request.options['provider'], request.model].filter((part) => typeof part === 'string').join('/');
    return `${name}${model === '' ? '' : ` (${model})`}`;
  }
  return `replay of a recorded ${name} run: ${request.model ?? '(none)'} (offline; --real runs ${request.agent})`;
}
