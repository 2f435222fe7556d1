import { isAbsolute, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { map, type OperatorFunction } from 'rxjs';
import { agentByName, AGENT_NAMES, AGENTS, isAgentName, type AgentName } from '../agent-table.js';
import type { PromptPart, SessionCommand, SessionMessage } from '../messages.js';
import { agentSession } from '../sessions/agent-session.js';
import { executableHelp } from './agent-help.js';
import { agentFlagHelp, agentFlagOptions, agentFlagValues } from './agent-flags.js';
import { directoryProblem } from './checks.js';
import { errorText } from './error-text.js';
import { inFlagWords } from './flag-words.js';
import { AGENT_OPTIONS, joinNegativeDurations, parseLimits, type RunLimits } from './run-command.js';
import { parseArgsProblem } from './usage.js';
import { APPROVE_HELP, approvePolicy } from './approve.js';
import { MCP_CONFIG_HELP, readMcpConfig } from './mcp-config.js';
import { redisUrlProblem } from '../fleet/connection.js';
import { checkSessionId, checkSessionSpec, type SessionSpec } from '../fleet/session-spec.js';
import { fleetSession } from './fleet-run.js';

export const CHAT_USAGE = `usage: agent-rx chat [options]

An interactive session on a coding agent: one agent process, many turns. Type a prompt and press
Enter; the answer streams. Enter while a turn runs steers it (the text goes into the running
turn); with --queue it is queued as the next turn's prompt instead. Ctrl-C while a turn runs
aborts the turn (the agent stays); Ctrl-C when idle, a second Ctrl-C while an abort is pending,
or Ctrl-D ends the session after the running turn; a Ctrl-C after that stops the agent at once
(exit 130). When stdin is not a terminal, each line read is sent as a prompt and the session
ends at the end of the input. Exit code: 0 when the session completed, 1 when it failed, 2 on a
usage error.

A line /image <path> [text] or /file <path> [text] gives the agent an image (PNG, JPEG, GIF or
WebP) or a text file with the next prompt: with text, that prompt is sent now; without, the next
line typed is. A path with spaces goes in double quotes; it is taken from where the chat runs. An
agent whose sessions cannot take an image does not send the prompt, and says so.

options:
  --agent <${AGENT_NAMES.join('|')}>
                          which agent CLI (default pi)
  --model <id>            the model
${agentFlagHelp('session')}  --cwd <dir>             where the agent works (default: here)
${executableHelp()}  --no-agent-retry        switch off the agent's own retries
  --idle-timeout <duration>
                          abort a turn when the agent prints nothing for this long (the turn fails: timeout)
  --grace <duration>      how long the agent may take to end a turn on an abort, to exit at the end,
                          or to stop before it is killed (default 2s)
${MCP_CONFIG_HELP}${APPROVE_HELP}  --queue                 Enter while a turn runs queues the text as a follow-up instead of steering
  --fleet <redis-url>     with --session <id>: the fleet session id, its agent on the fleet's workers
                          (agent-rx worker); it goes on from where any earlier chat left it, and
                          sleeps on the fleet when this chat ends
  --no-color              no colours (also: NO_COLOR, or when stdout is not a terminal)
  -h, --help              this text

durations: a number of ms (1500), or a number with a unit ms, s, m or h (500ms, 90s, 10m, 2h)
`;

/**
 * The options `chat` gives an agent's session: the shared ones, and what the agent's own flags set
 * (checked against its schema when the session is made).
 */
export interface ChatSessionOptions extends RunLimits {
  readonly executable?: string;
  readonly model?: string;
  readonly cwd?: string;
  readonly agentRetry?: boolean;
  readonly [option: string]: unknown;
}

/** What `agent-rx chat` was asked for, or why it cannot be done. */
export type ChatRequest =
  | {
      readonly kind: 'chat';
      readonly agent: AgentName;
      /** The agent's name for people (`Claude Code`). */
      readonly displayName: string;
      /** What runs, for the heading: `pi (fake/recall)`. */
      readonly description: string;
      /** Enter while a turn runs sends a prompt (queued) rather than a steer. */
      readonly queue: boolean;
      readonly color: boolean | undefined;
      readonly options: ChatSessionOptions;
      /** The session operator: one agent process per subscription. */
      readonly session: () => OperatorFunction<SessionCommand, SessionMessage>;
    }
  | { readonly kind: 'help' }
  | { readonly kind: 'usage-error'; readonly message: string };

// Parses `chat`'s arguments with node:util's parseArgs; never throws on bad input.
export function parseChatArgs(argv: readonly string[]): ChatRequest {
  let parsed;
  try {
    parsed = parseArgs({
      args: joinNegativeDurations(argv),
      allowPositionals: true,
      options: {
        ...AGENT_OPTIONS,
        ...agentFlagOptions('session'),
        queue: { type: 'boolean', default: false },
        fleet: { type: 'string' },
        session: { type: 'string' },
      },
    });
  } catch (error) {
    return { kind: 'usage-error', message: parseArgsProblem(error) };
  }
  const { values, positionals } = parsed;
  if (values.help) return { kind: 'help' };
  const agent = values.agent;
  if (!isAgentName(agent)) return { kind: 'usage-error', message: `--agent must be one of ${AGENT_NAMES.join(', ')}; got ${agent}` };
  const entry = AGENTS[agent];
  if (positionals.length > 0) {
    return { kind: 'usage-error', message: `chat takes no prompt argument (got ${JSON.stringify(positionals.join(' '))}): type prompts once it runs, or pipe them on stdin` };
  }
  if (values.fleet !== undefined || values.session !== undefined) return fleetChat(values, agent);
  const options = sessionOptionsOf(values, agent);
  if (typeof options === 'string') return { kind: 'usage-error', message: options };
  // Build once now, so that invalid options are reported as usage errors, not when the chat starts.
  let built: OperatorFunction<SessionCommand, SessionMessage>;
  try {
    built = agentSession(agentByName(agent), options);
  } catch (error) {
    return { kind: 'usage-error', message: errorText(error) };
  }
  const session = (): OperatorFunction<SessionCommand, SessionMessage> => (commands) => commands.pipe(built, map(inFlagWords));
  const model = [options['provider'], options.model].filter((part) => typeof part === 'string').join('/');
  return {
    kind: 'chat',
    agent,
    displayName: entry.displayName,
    description: model === '' ? agent : `${agent} (${model})`,
    queue: values.queue,
    color: values['no-color'] ? false : undefined,
    options,
    session,
  };
}

/**
 * `chat --fleet <url> --session <id>`: the fleet session `id`, its agent on the fleet's workers.
 * What runs the agent (its program, folder, grace, MCP servers) is the worker's; `--approve` takes
 * a preset (decided on the worker).
 */
function fleetChat(values: AgentOptionValues & { readonly fleet?: string | undefined; readonly session?: string | undefined; readonly queue: boolean; readonly 'no-color'?: boolean | undefined }, agent: AgentName): ChatRequest {
  const { fleet, session: sessionId } = values;
  if (fleet === undefined) return { kind: 'usage-error', message: '--session <id> names a fleet session: it needs --fleet <redis-url>' };
  if (sessionId === undefined) return { kind: 'usage-error', message: '--fleet needs --session <id>: the conversation to continue (or start)' };
  const problem = redisUrlProblem(fleet);
  if (problem !== null) return { kind: 'usage-error', message: `--fleet ${problem}` };
  for (const flag of ['executable', 'grace', 'cwd', 'mcp-config'] as const) {
    if (values[flag] !== undefined) return { kind: 'usage-error', message: `--${flag} cannot be given with --fleet: it is the worker's to choose` };
  }
  const own = agentFlagValues(agent, values, 'session');
  if (typeof own === 'string') return { kind: 'usage-error', message: own };
  const limits = parseLimits(values);
  if (typeof limits === 'string') return { kind: 'usage-error', message: limits };
  const { gracePeriodMs: _grace, timeoutMs: _timeout, ...times } = limits;
  const approve = values.approve;
  if (approve !== undefined && !['allow-all', 'allow-reads', 'deny-all'].includes(approve)) {
    return { kind: 'usage-error', message: `--approve with --fleet is allow-all, allow-reads or deny-all (decided on the worker); got ${approve}` };
  }
  const options = { ...(values.model === undefined ? {} : { model: values.model }), ...own, ...times, ...(values['no-agent-retry'] === true ? { agentRetry: false } : {}) };
  let spec: SessionSpec;
  try {
    checkSessionId(sessionId);
    spec = checkSessionSpec({ agent, options, ...(approve === undefined ? {} : { permission: approve }) });
  } catch (error) {
    return { kind: 'usage-error', message: errorText(error) };
  }
  const attached = fleetSession(fleet, sessionId, spec);
  return {
    kind: 'chat',
    agent,
    displayName: AGENTS[agent].displayName,
    description: `${agent} on the fleet, session ${sessionId}`,
    queue: values.queue,
    color: values['no-color'] === true ? false : undefined,
    options,
    session: () => (commands) => commands.pipe(attached, map(inFlagWords)),
  };
}

/** A line typed in the chat: text to send, an image or a file to send with it (`/image <path> [text]`, `/file <path> [text]`), or what is wrong with such a line. */
export type ChatLine =
  | { readonly kind: 'text'; readonly text: string }
  | {
      readonly kind: 'attach';
      /** The image or file, its path absolute. */
      readonly part: Extract<PromptPart, { readonly path: string }>;
      /** The path as typed. */
      readonly given: string;
      /** The prompt to send with it now, or `''`: it goes with the next one. */
      readonly text: string;
    }
  | { readonly kind: 'problem'; readonly message: string };

/** Reads a chat line (trimmed): `/image` and `/file` lines take a path (in double quotes when it has spaces), taken from `cwd`. */
export function readChatLine(line: string, cwd: string = process.cwd()): ChatLine {
  const command = /^\/(image|file)(?:\s+|$)/.exec(line);
  if (command === null) return { kind: 'text', text: line };
  const type = command[1] === 'image' ? 'image' : 'file';
  const rest = line.slice(command[0].length);
  const quoted = /^"([^"]*)"(?:\s+|$)/.exec(rest);
  const given = quoted === null ? (/^\S+/.exec(rest)?.[0] ?? '') : (quoted[1] ?? '');
  if (given.trim() === '') return { kind: 'problem', message: `/${type} needs a path: /${type} <path> [text]` };
  if (quoted === null && given.startsWith('"')) return { kind: 'problem', message: `/${type}: the path's closing quote is missing` };
  const text = rest.slice(quoted === null ? given.length : quoted[0].length).trim();
  return { kind: 'attach', part: { type, path: resolve(cwd, given) }, given, text };
}

/** The values of parseArgs that make an agent's session options (`AGENT_OPTIONS` and the agents' own flags). */
export interface AgentOptionValues {
  readonly model?: string | undefined;
  readonly cwd?: string | undefined;
  readonly executable?: string | undefined;
  readonly 'no-agent-retry'?: boolean | undefined;
  readonly grace?: string | undefined;
  readonly 'idle-timeout'?: string | undefined;
  readonly approve?: string | undefined;
  readonly 'mcp-config'?: string | undefined;
  readonly [flag: string]: unknown;
}

/** The session options of the command line's agent options, or what is wrong with them. */
export function sessionOptionsOf(values: AgentOptionValues, agent: AgentName): ChatSessionOptions | string {
  const own = agentFlagValues(agent, values, 'session');
  if (typeof own === 'string') return own;
  const limits = parseLimits(values);
  if (typeof limits === 'string') return limits;
  // Checked before the agent starts: a missing folder is the user's mistake, not a failed spawn.
  const cwdProblem = values.cwd === undefined ? undefined : directoryProblem('--cwd', values.cwd);
  if (cwdProblem !== undefined) return cwdProblem;
  // `ask`: the chat answers each request with a command, as its user types it.
  const permission = approvePolicy(values.approve, 'ask');
  if (typeof permission === 'object') return permission.problem;
  const mcpServers = values['mcp-config'] === undefined ? undefined : readMcpConfig(values['mcp-config']);
  if (typeof mcpServers === 'string') return mcpServers;
  return {
    ...(mcpServers === undefined ? {} : { mcpServers }),
    ...(permission === undefined ? {} : { permission }),
    ...(values.executable === undefined ? {} : { executable: executablePath(values.executable) }),
    ...(values.model === undefined ? {} : { model: values.model }),
    ...(values.cwd === undefined ? {} : { cwd: values.cwd }),
    ...own,
    ...limits,
    ...(values['no-agent-retry'] === true ? { agentRetry: false } : {}),
  };
}

// A path typed on the command line is relative to where it was typed, not to the agent's --cwd; a
// bare name is looked up on PATH.
function executablePath(value: string): string {
  return value.includes('/') && !isAbsolute(value) ? resolve(value) : value;
}
