import { parseArgs } from 'node:util';
import type { RunSpec } from '../../lib/fleet.js';
import { AGENT_NAMES, AGENTS, isAgentName, type AgentName } from '../../lib/index.js';

/** The agent run when no --agent is given. */
export const DEFAULT_AGENT: AgentName = 'pi';

/** Each agent's replay when no --transcript is given: a tool call between two bits of text. */
export const DEFAULT_TRANSCRIPTS: Readonly<Record<AgentName, string>> = {
  pi: 'tool_call_then_text',
  claude: 'claude-tool-partial',
  codex: 'codex-tool',
  gemini: 'gemini-tool',
};

/** The prompt the page starts with. */
export const DEFAULT_PROMPT = 'Run `echo hello` with bash, then tell me what it printed.';

/** The options of an agent's run, as its entry in the table takes them. */
type RunOptionsOf<K extends AgentName> = Parameters<(typeof AGENTS)[K]['run']>[0];

/** The agents whose runs take a provider (pi's `--provider`, Codex's `model_provider`). */
export type ProviderAgent = { [K in AgentName]: 'provider' extends keyof RunOptionsOf<K> ? K : never }[AgentName];

// Checked against the agents' run options: true exactly for those that take a provider.
const TAKES_PROVIDER: { readonly [K in AgentName]: K extends ProviderAgent ? true : false } = { pi: true, claude: false, codex: true, gemini: false };

/** Whether `agent`'s runs take a provider. */
export function takesProvider(agent: AgentName): agent is ProviderAgent {
  return TAKES_PROVIDER[agent];
}

const PROVIDER_AGENTS = AGENT_NAMES.filter(takesProvider);

/** How long a fleet run whose stream dropped waits for its page to reconnect, by default. */
export const DEFAULT_RECONNECT_GRACE_MS = 10_000;
const FLEET_GRACE_TEXT = `${String(DEFAULT_RECONNECT_GRACE_MS / 1000)} s`;

export const USAGE = `usage: npm run web -- [options]

Serves a page that runs a coding agent through agent-rx and streams it to the browser (SSE).
By default the agent is a bundled replay of a recorded run (offline, no API key, no agent needed).

  --agent <${AGENT_NAMES.join('|')}>
                        which agent (default ${DEFAULT_AGENT})
  --port <n>            port on 127.0.0.1 (also: PORT; default: any free port)
  --transcript <name>   which recorded run to replay (examples/replay-agent/transcripts/<name>.jsonl);
                        default: ${AGENT_NAMES.map((name) => `${DEFAULT_TRANSCRIPTS[name]} (${name})`).join(', ')}
  --real                run the real agent instead (\`pi\` or \`claude\` on PATH, Codex's native
                        binary; also: AGENT_RX_WEB_REAL=1)
  --provider <name>     passed to ${PROVIDER_AGENTS.join(' or ')}
  --model <id>          passed to the agent
  --executable <path>   another executable of the agent, for --real
  --session             one agent process for the whole conversation; Stop aborts the running
                        turn, End session ends the process. Offline (pi only): the RPC replay
                        agent answers every turn with the recording; with --real: the agent
                        itself, which remembers the conversation
  --fleet <redis-url>   run on agent-rx/fleet workers instead of here (also: AGENT_RX_FLEET):
                        redis://host:port, rediss://…, unix:///path/redis.sock. The workers decide
                        what runs (no --executable; a replay's transcript goes as the model), and
                        a stream that drops resumes where it stopped (the run waits ${FLEET_GRACE_TEXT}
                        for its page to come back, then is cancelled)
  -h, --help            this text
`;

/** A real run of one agent: `provider` only for the agents that take one. */
interface RealRun<K extends AgentName> {
  readonly kind: 'real';
  readonly agent: K;
  readonly model?: string;
  readonly executable?: string;
  /** Added to the agent's environment (its configuration directory, say). */
  readonly env?: Readonly<Record<string, string>>;
  /** The agent's working directory. Default: the server's. */
  readonly cwd?: string;
}

/** Which agent a run starts: the bundled replay of one of its recorded runs, or the real agent. */
export type AgentChoice =
  | { readonly kind: 'replay'; readonly agent: AgentName; readonly transcript: string; readonly env?: Readonly<Record<string, string>> }
  | RealRun<Exclude<AgentName, ProviderAgent>>
  | (RealRun<ProviderAgent> & { readonly provider?: string });

export type WebRequest =
  | { readonly kind: 'serve'; readonly port: number; readonly agent: AgentChoice; readonly fleet?: string; readonly session?: true }
  | { readonly kind: 'help' }
  | { readonly kind: 'usage-error'; readonly message: string };

// Reads the command line and the environment; never throws on bad input.
export function parseWebArgs(argv: readonly string[], env: NodeJS.ProcessEnv): WebRequest {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        agent: { type: 'string', default: DEFAULT_AGENT },
        port: { type: 'string' },
        transcript: { type: 'string' },
        real: { type: 'boolean' },
        provider: { type: 'string' },
        model: { type: 'string' },
        executable: { type: 'string' },
        fleet: { type: 'string' },
        session: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    return { kind: 'usage-error', message: error instanceof Error ? error.message : String(error) };
  }
  if (values.help === true) return { kind: 'help' };
  const name = values.agent;
  if (!isAgentName(name)) return { kind: 'usage-error', message: `--agent must be one of ${AGENT_NAMES.join(', ')}; got '${name}'` };
  const portText = values.port ?? env['PORT'] ?? '0';
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65_535) return { kind: 'usage-error', message: `--port must be a port number, got '${portText}'` };
  const real = values.real === true || env['AGENT_RX_WEB_REAL'] === '1';
  if (real && values.transcript !== undefined) return { kind: 'usage-error', message: '--transcript picks a replay; it does not go with --real' };
  if (!real && (values.provider !== undefined || values.model !== undefined || values.executable !== undefined)) {
    return { kind: 'usage-error', message: '--provider, --model and --executable are for the real agent: add --real' };
  }
  if (values.provider !== undefined && !takesProvider(name)) {
    return { kind: 'usage-error', message: `--provider is for ${PROVIDER_AGENTS.join(' and ')}; ${AGENTS[name].displayName} takes none` };
  }
  if (values.executable === '') return { kind: 'usage-error', message: '--executable must be a path' };
  // An empty AGENT_RX_FLEET is no fleet; an empty --fleet is a mistake.
  const fleet = values.fleet ?? (env['AGENT_RX_FLEET'] === '' ? undefined : env['AGENT_RX_FLEET']);
  if (fleet !== undefined && !/^(?:rediss?|unix|redis\+unix):\/\/./.test(fleet)) {
    return { kind: 'usage-error', message: `--fleet must be a redis://, rediss:// or unix:// URL; got '${fleet}'` };
  }
  if (fleet !== undefined && values.executable !== undefined) {
    return { kind: 'usage-error', message: '--executable is for runs on this machine: with --fleet, the workers decide what runs' };
  }
  // Offline, a session is pi's RPC replay agent: the other agents have no interactive replay.
  if (values.session === true && !real && name !== 'pi') {
    return { kind: 'usage-error', message: `--session replays pi only (examples/replay-agent/pi-rpc-replay.mjs); for ${AGENTS[name].displayName}, add --real` };
  }
  if (values.session === true && fleet !== undefined) return { kind: 'usage-error', message: "--session runs the agent here: it does not go with --fleet (the fleet's runs are one-shot)" };
  const onFleet = fleet === undefined ? {} : { fleet };
  const inSession = values.session === true ? { session: true as const } : {};
  if (!real) return { kind: 'serve', port, agent: { kind: 'replay', agent: name, transcript: values.transcript ?? DEFAULT_TRANSCRIPTS[name] }, ...onFleet, ...inSession };
  const passed = {
    kind: 'real' as const,
    ...(values.model === undefined ? {} : { model: values.model }),
    ...(values.executable === undefined ? {} : { executable: values.executable }),
  };
  const agent: AgentChoice = takesProvider(name)
    ? { ...passed, agent: name, ...(values.provider === undefined ? {} : { provider: values.provider }) }
    : { ...passed, agent: name };
  return { kind: 'serve', port, agent, ...onFleet, ...inSession };
}

/**
 * What one run is given: options that every agent's run takes, and a provider only for the
 * agents that take one.
 */
export interface WebRunOptions {
  readonly prompt: string;
  readonly executable?: string;
  readonly executableArgs?: readonly string[];
  readonly model?: string;
  readonly provider?: string;
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
}

// The run options of one run: Node running the replay script (a transcript is a "model"), or the agent.
export function runOptionsFor(agent: AgentChoice, prompt: string, replayScript: string): WebRunOptions {
  if (agent.kind === 'replay') {
    return { prompt, executable: process.execPath, executableArgs: [replayScript], model: agent.transcript, ...(agent.env === undefined ? {} : { env: agent.env }) };
  }
  return { prompt, ...realOptionsFor(agent) };
}

/** What a session is given: a run's options, but no prompt (the commands bring them). */
export type WebSessionOptions = Omit<WebRunOptions, 'prompt' | 'executableArgs'>;

/**
 * The options of one session: the RPC replay agent as pi's executable (a transcript is a
 * "model"; only pi has an interactive replay), or the real agent.
 */
export function sessionOptionsFor(agent: AgentChoice, rpcReplayScript: string): WebSessionOptions {
  if (agent.kind === 'replay') return { executable: rpcReplayScript, model: agent.transcript, ...(agent.env === undefined ? {} : { env: agent.env }) };
  return realOptionsFor(agent);
}

// What the real agent is given, in a run or a session.
function realOptionsFor(agent: Extract<AgentChoice, { kind: 'real' }>): WebSessionOptions {
  return {
    ...('provider' in agent ? { provider: agent.provider } : {}),
    ...(agent.model === undefined ? {} : { model: agent.model }),
    ...(agent.executable === undefined ? {} : { executable: agent.executable }),
    ...(agent.env === undefined ? {} : { env: agent.env }),
    ...(agent.cwd === undefined ? {} : { cwd: agent.cwd }),
  };
}

/**
 * What a run asks of the fleet's workers: the agent, the prompt, and the model (a replay's
 * transcript: workers that run the replay agent take it as the recording's name) and provider. How
 * it runs (executable, environment) is the worker's, so a replay's `env` is not sent.
 */
export function fleetSpecFor(agent: AgentChoice, prompt: string): RunSpec {
  const model = agent.kind === 'replay' ? agent.transcript : agent.model;
  const provider = agent.kind === 'real' && 'provider' in agent ? agent.provider : undefined;
  const options = { prompt, ...(model === undefined ? {} : { model }) };
  const withProvider = { ...options, ...(provider === undefined ? {} : { provider }) };
  switch (agent.agent) {
    case 'pi':
      return { agent: 'pi', options: withProvider };
    case 'codex':
      return { agent: 'codex', options: withProvider };
    case 'claude':
      return { agent: 'claude', options };
    case 'gemini':
      return { agent: 'gemini', options };
  }
}

// One line saying which agent runs, for the console and the page.
export function describeAgent(agent: AgentChoice): string {
  const name = AGENTS[agent.agent].displayName;
  if (agent.kind === 'replay') return `replay of a recorded ${name} run: ${agent.transcript} (offline; --real runs ${name})`;
  const model = ['provider' in agent ? agent.provider : undefined, agent.model].filter((part) => part !== undefined).join('/');
  return `${name}${agent.executable === undefined ? '' : ` at ${agent.executable}`}${model === '' ? '' : ` (${model})`}`;
}
