// `agent-rx acp --agent <name> [options]`: an agent served as an Agent Client Protocol agent on
// stdio, for an editor; see ACP_USAGE.
import { parseArgs } from 'node:util';
import { map } from 'rxjs';
import { agentByName, AGENT_NAMES, AGENTS, isAgentName, type AgentName } from '../agent-table.js';
import { agentSession, sessionInvocation } from '../sessions/agent-session.js';
import type { McpServers } from '../tools/mcp-servers.js';
import { DEFAULT_PERMISSION_TIMEOUT_MS } from '../sessions/process-session.js';
import { agentFlagHelp, agentFlagOptions } from './agent-flags.js';
import { stopAllRuns } from '../process/run-registry.js';
import { serveAcp, type AcpSessionFactory, type AcpSessionRequest } from '../serve/serve-acp.js';
import { sessionOptionsOf, type ChatSessionOptions } from './chat-command.js';
import { errorText } from './error-text.js';
import { inFlagWords } from './flag-words.js';
import { AGENT_OPTIONS, joinNegativeDurations } from './run-command.js';
import { MCP_CONFIG_HELP } from './mcp-config.js';
import { onStopSignals } from './stop-signals.js';
import { answeredUsage, parseArgsProblem } from './usage.js';

export const ACP_USAGE = `usage: agent-rx acp --agent <${AGENT_NAMES.join('|')}> [options]

Serves an agent as an Agent Client Protocol agent on stdin and stdout, for an editor (Zed,
JetBrains, Neovim, …): each ACP session is an agent-rx session, one agent process, in the folder
the editor gives. Nothing else is written to stdout; diagnostics go to stderr. When the editor
closes the connection, or on SIGINT, SIGTERM or SIGHUP, every agent process is stopped.

options:
  --agent <${AGENT_NAMES.join('|')}>
                          which agent CLI (default pi)
  --model <id>            the model
${agentFlagHelp('session')}${MCP_CONFIG_HELP}  --executable <path>     the agent executable (default: the agent's own, on PATH)
  --no-agent-retry        switch off the agent's own retries
  --idle-timeout <duration>
                          abort a turn when the agent prints nothing for this long
  --grace <duration>      how long the agent may take to end a turn on a cancel, or to stop (default 2s)
  --approve <all|reads|none|ask>
                          who decides when the agent asks to use a tool: allow all, allow only
                          tools that read, deny all (the editor is never asked), or the editor
                          (session/request_permission); default ask
  -h, --help              this text

Permissions: each tool call the agent asks about is a session/request_permission to the editor,
with the options the agent accepts (allow_once, allow_always, reject_once, reject_always); a
cancelled answer denies; a request not answered within ${String(DEFAULT_PERMISSION_TIMEOUT_MS / 60_000)} minutes is denied (and withdrawn).

Prompts: text; images (promptCapabilities.image, where the agent's sessions take them); embedded
resources, given to the agent as <file path="…"> text; resource_link to a file:// URI, read as a
file (an image file as an image). Audio, links that are not files and binary resources that are
not images refuse the prompt (invalid params, naming the block).

MCP servers: the editor's (session/new) are given to each session, stdio and http
(mcpCapabilities.http), where the agent's sessions take MCP servers; SSE servers are left out,
said on stderr and to the editor (a notice). With --mcp-config, its servers come too.

Extension methods (besides ACP's own): _agent-rx/steer and _agent-rx/follow-up, params
{ sessionId, text }.
`;

export type AcpRequest =
  | {
      readonly kind: 'acp';
      readonly agent: AgentName;
      readonly options: ChatSessionOptions;
      readonly session: AcpSessionFactory;
      /** The options of the session made for an editor's `session/new` (what `session` gives the agent). */
      readonly optionsFor: (request: AcpSessionRequest) => ChatSessionOptions;
      /** Whether the agent's sessions take images (its session protocol's `prompts.image`): `promptCapabilities.image`. */
      readonly images: boolean;
      /** Whether the agent's sessions take MCP servers (over HTTP too): `mcpCapabilities.http`. */
      readonly mcpHttp: boolean;
    }
  | { readonly kind: 'help' }
  | { readonly kind: 'usage-error'; readonly message: string };

// Parses `acp`'s arguments; never throws on bad input.
export function parseAcpArgs(argv: readonly string[]): AcpRequest {
  let parsed;
  try {
    const { cwd: _cwd, 'no-color': _color, ...options } = AGENT_OPTIONS;
    parsed = parseArgs({ args: joinNegativeDurations(argv), allowPositionals: false, options: { ...options, ...agentFlagOptions('session') } });
  } catch (error) {
    return { kind: 'usage-error', message: parseArgsProblem(error) };
  }
  const { values } = parsed;
  if (values.help) return { kind: 'help' };
  const agent = values.agent;
  if (!isAgentName(agent)) return { kind: 'usage-error', message: `--agent must be one of ${AGENT_NAMES.join(', ')}; got ${agent}` };
  const options = sessionOptionsOf(values, agent);
  if (typeof options === 'string') return { kind: 'usage-error', message: options };
  const definition = agentByName(agent);
  // `--approve ask`, or no --approve: the editor decides (every agent's sessions take a policy).
  const sessionOptions: ChatSessionOptions = values.approve === undefined ? { ...options, permission: 'ask' } : options;
  const forwarded = sessionOptions['permission'] === 'ask';
  // What the editor shows of a failure speaks in this command's flags, as the command line does.
  // The editor's MCP servers, where the agent's sessions take them (else left out, and said on stderr).
  const takesMcp = definition.mcp?.sessions === true;
  const optionsFor = (request: AcpSessionRequest): ChatSessionOptions => {
    const names = Object.keys(request.mcpServers);
    if (request.skippedMcpServers.length > 0) warn(`the editor's MCP servers over SSE are not supported: left out: ${request.skippedMcpServers.join(', ')}`);
    if (names.length > 0 && !takesMcp) warn(`${definition.displayName} sessions take no MCP servers here: the editor's were left out: ${names.join(', ')}`);
    const servers = takesMcp && names.length > 0 ? { mcpServers: { ...(sessionOptions['mcpServers'] as McpServers | undefined), ...request.mcpServers } } : {};
    return { ...sessionOptions, ...servers, cwd: request.cwd, ...(forwarded ? { permission: request.permission } : {}) };
  };
  const session: AcpSessionFactory = (request) => {
    const built = agentSession(definition, optionsFor(request));
    return (commands) => commands.pipe(built, map(inFlagWords));
  };
  // Build once now, so that invalid options are reported as usage errors, not at the first session;
  // what its prompts take is what the editor is told.
  let images: boolean;
  try {
    session({ cwd: process.cwd(), mcpServers: {}, acpMcpServers: [], skippedMcpServers: [], permission: 'ask' });
    images = sessionInvocation(definition, { ...sessionOptions, cwd: process.cwd() }).protocol.prompts?.image === true;
  } catch (error) {
    return { kind: 'usage-error', message: errorText(error) };
  }
  return { kind: 'acp', agent, options: sessionOptions, session, optionsFor, images, mcpHttp: takesMcp };
}

const warn = (text: string): void => {
  process.stderr.write(`agent-rx acp: ${text}\n`);
};

/** Parses `acp`'s arguments and serves; sets `process.exitCode` (2 on a usage error). */
export function acp(argv: readonly string[]): void {
  const request = parseAcpArgs(argv);
  if (answeredUsage('acp', ACP_USAGE, request)) return;
  const server = serveAcp(request.session, { name: `agent-rx-${request.agent}`, title: `${AGENTS[request.agent].displayName} (agent-rx)`, images: request.images, mcpHttp: request.mcpHttp });
  // The editor closed the connection: every session's stop sequence, then exit.
  void server.closed.then(async () => {
    await stopAllRuns();
    process.exit(0);
  });
  onStopSignals(async () => {
    server.close();
    await stopAllRuns();
  });
}
