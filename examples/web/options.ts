import { parseArgs } from 'node:util';
import { agentFlagOptions, agentFlagValues } from '../../lib/cli/agent-flags.js';
import { checkRunSpec, type RunSpec } from '../../lib/fleet/run-spec.js';
import { checkSessionSpec, type SessionSpec } from '../../lib/fleet/session-spec.js';
import type { SpecPrompt } from '../../lib/agents/shared/option-schemas.js';
import { AGENT_NAMES, AGENTS, isAgentName, type AgentName, type ImageMimeType } from '../../lib/index.js';
import { DEFAULT_TRANSCRIPTS } from '../replay-agent/recordings.js';

export { DEFAULT_TRANSCRIPTS };

/** The agent run when no --agent is given. */
export const DEFAULT_AGENT: AgentName = 'pi';

/** The prompt the page starts with. */
export const DEFAULT_PROMPT = 'Run `echo hello` with bash, then tell me what it printed.';

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
  --model <id>          passed to the agent
  --executable <path>   another executable of the agent, for --real
  --session             one agent process for the whole conversation; Stop aborts the running
                        turn, End session ends the process. Offline (pi only): the RPC replay
                        agent answers every turn with the recording; with --real: the agent
                        itself, which remembers the conversation, and whose sessions the page
                        can open with "Ask before tools": each tool call waits on a card
                        (Allow, Always where the agent offers it, Deny)
  --fleet <redis-url>   run on agent-rx/fleet workers instead of here (also: AGENT_RX_FLEET):
                        redis://host:port, rediss://…, unix:///path/redis.sock. The workers decide
                        what runs (no --executable; a replay's transcript goes as the model), and
                        a stream that drops resumes where it stopped (the run waits ${FLEET_GRACE_TEXT}
                        for its page to come back, then is cancelled). With --session (and
                        --real), the conversation is a fleet session: its agent runs on a
                        worker and falls asleep there when idle; the tab keeps its id, so a
                        reload shows the conversation and goes on, and a worker that dies or
                        restarts leaves it to another
  the agents' own flags of agent-rx run (--provider, --approval-mode, …) pass to the real agent
  The page can attach an image to a prompt (PNG, JPEG, GIF or WebP, at most 5 MB) for the real
  agent or a session; an agent that cannot take one says so. A replay reads no prompt: no image.
  -h, --help            this text
`;

/** A real run of one agent. */
export interface RealRun {
  readonly kind: 'real';
  readonly agent: AgentName;
  readonly model?: string;
  readonly executable?: string;
  /** Added to the agent's environment (its configuration directory, say). */
  readonly env?: Readonly<Record<string, string>>;
  /** The agent's working directory. Default: the server's. */
  readonly cwd?: string;
  /** What the agent's own flags set (`{ provider: 'anthropic' }`). */
  readonly options?: Readonly<Record<string, unknown>>;
}

/** Which agent a run starts: the bundled replay of one of its recorded runs, or the real agent. */
export type AgentChoice =
  | { readonly kind: 'replay'; readonly agent: AgentName; readonly transcript: string; readonly env?: Readonly<Record<string, string>> }
  | RealRun;

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
        ...agentFlagOptions('run'),
        agent: { type: 'string', default: DEFAULT_AGENT },
        port: { type: 'string' },
        transcript: { type: 'string' },
        real: { type: 'boolean' },
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
  const own = agentFlagValues(name, values, 'run');
  if (typeof own === 'string') return { kind: 'usage-error', message: own };
  if (!real && (Object.keys(own).length > 0 || values.model !== undefined || values.executable !== undefined)) {
    return { kind: 'usage-error', message: "--model, --executable and the agent's own flags are for the real agent: add --real" };
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
  if (values.session === true && fleet !== undefined && !real) {
    return { kind: 'usage-error', message: '--session with --fleet needs --real: a fleet session falls asleep and wakes from its agent\'s own conversation, which a replay has not' };
  }
  if (values.session === true && fleet !== undefined && AGENTS[name].conversation === undefined) {
    return { kind: 'usage-error', message: `--session with --fleet needs an agent whose conversation can wake in a new process; ${AGENTS[name].displayName}'s cannot` };
  }
  const onFleet = fleet === undefined ? {} : { fleet };
  const inSession = values.session === true ? { session: true as const } : {};
  if (!real) return { kind: 'serve', port, agent: { kind: 'replay', agent: name, transcript: values.transcript ?? DEFAULT_TRANSCRIPTS[name] }, ...onFleet, ...inSession };
  const passed = {
    kind: 'real' as const,
    ...(values.model === undefined ? {} : { model: values.model }),
    ...(values.executable === undefined ? {} : { executable: values.executable }),
  };
  const agent: AgentChoice = { ...passed, agent: name, ...(Object.keys(own).length === 0 ? {} : { options: own }) };
  return { kind: 'serve', port, agent, ...onFleet, ...inSession };
}

/** What one run is given: options that every agent's run takes, and what the agent's own flags set. */
export interface WebRunOptions {
  /** The page's prompt: its text, and the image it attached (as base64 data). */
  readonly prompt: WebPrompt;
  readonly executable?: string;
  readonly executableArgs?: readonly string[];
  readonly model?: string;
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  readonly [option: string]: unknown;
}

/** A prompt from the page: its text, or its text then the image it attached. */
export type WebPrompt = string | readonly [string, { readonly type: 'image'; readonly data: string; readonly mimeType: ImageMimeType }];

/** A prompt's size for a log line: its characters, and whether an image came with it. */
export function describePrompt(prompt: WebPrompt): string {
  return typeof prompt === 'string' ? `${String(prompt.length)} characters of prompt` : `${String(prompt[0].length)} characters of prompt and an image`;
}

// The run options of one run: Node running the replay script (a transcript is a "model"), or the agent.
export function runOptionsFor(agent: AgentChoice, prompt: WebPrompt, replayScript: string): WebRunOptions {
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
    ...agent.options,
    ...(agent.model === undefined ? {} : { model: agent.model }),
    ...(agent.executable === undefined ? {} : { executable: agent.executable }),
    ...(agent.env === undefined ? {} : { env: agent.env }),
    ...(agent.cwd === undefined ? {} : { cwd: agent.cwd }),
  };
}

/**
 * What a run asks of the fleet's workers: the agent, the prompt (text, and an attached image as
 * base64 data: a spec carries it), and the model (a replay's
 * transcript: workers that run the replay agent take it as the recording's name) and what the
 * agent's own flags set. How it runs (executable, environment) is the worker's, so a replay's `env`
 * is not sent.
 */
export function fleetSpecFor(agent: AgentChoice, prompt: SpecPrompt): RunSpec {
  const model = agent.kind === 'replay' ? agent.transcript : agent.model;
  const own = agent.kind === 'real' ? agent.options : undefined;
  return checkRunSpec({ agent: agent.agent, options: { prompt, ...own, ...(model === undefined ? {} : { model }) } });
}

/**
 * What a fleet session asks of the workers: the agent, the model and what the agent's own flags
 * set, and how long it stays awake without a turn (`idleMs`; default the fleet's, a minute).
 */
export function fleetSessionSpecFor(agent: RealRun, idleMs?: number): SessionSpec {
  return checkSessionSpec({
    agent: agent.agent,
    options: { ...agent.options, ...(agent.model === undefined ? {} : { model: agent.model }) },
    ...(idleMs === undefined ? {} : { idleMs }),
  });
}

// One line saying which agent runs, for the console and the page.
export function describeAgent(agent: AgentChoice): string {
  const name = AGENTS[agent.agent].displayName;
  if (agent.kind === 'replay') return `replay of a recorded ${name} run: ${agent.transcript} (offline; --real runs ${name})`;
  const model = [agent.options?.['provider'], agent.model].filter((part) => typeof part === 'string').join('/');
  return `${name}${agent.executable === undefined ? '' : ` at ${agent.executable}`}${model === '' ? '' : ` (${model})`}`;
}
