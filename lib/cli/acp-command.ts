// `agent-rx acp --agent <name> [options]`: an agent served as an Agent Client Protocol agent on
// stdio, for an editor; see ACP_USAGE.
import { parseArgs } from 'node:util';
import { map } from 'rxjs';
import { agentByName, AGENT_NAMES, AGENTS, isAgentName, type AgentName } from '../agent-table.js';
import { agentSession } from '../sessions/agent-session.js';
import { agentFlagHelp, agentFlagOptions } from './agent-flags.js';
import { stopAllRuns } from '../process/run-registry.js';
import { serveAcp, type AcpSessionFactory } from '../serve/serve-acp.js';
import { sessionOptionsOf, type ChatSessionOptions } from './chat-command.js';
import { errorText } from './error-text.js';
import { inFlagWords } from './flag-words.js';
import { AGENT_OPTIONS, joinNegativeDurations } from './run-command.js';
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
${agentFlagHelp('session')}  --executable <path>     the agent executable (default: the agent's own, on PATH)
  --no-agent-retry        switch off the agent's own retries
  --idle-timeout <duration>
                          abort a turn when the agent prints nothing for this long
  --grace <duration>      how long the agent may take to end a turn on a cancel, or to stop (default 2s)
  -h, --help              this text

Extension methods (besides ACP's own): _agent-rx/steer and _agent-rx/follow-up, params
{ sessionId, text }.
`;

export type AcpRequest =
  | { readonly kind: 'acp'; readonly agent: AgentName; readonly options: ChatSessionOptions; readonly session: AcpSessionFactory }
  | { readonly kind: 'help' }
  | { readonly kind: 'usage-error'; readonly message: string };

// Parses `acp`'s arguments; never throws on bad input.
export function parseAcpArgs(argv: readonly string[]): AcpRequest {
  let parsed;
  try {
    const { cwd: _cwd, 'no-color': _color, approve: _approve, ...options } = AGENT_OPTIONS;
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
  // What the editor shows of a failure speaks in this command's flags, as the command line does.
  const session: AcpSessionFactory = (request) => {
    const built = agentSession(definition, { ...options, cwd: request.cwd });
    return (commands) => commands.pipe(built, map(inFlagWords));
  };
  // Build once now, so that invalid options are reported as usage errors, not at the first session.
  try {
    session({ cwd: process.cwd(), mcpServers: [] });
  } catch (error) {
    return { kind: 'usage-error', message: errorText(error) };
  }
  return { kind: 'acp', agent, options, session };
}

/** Parses `acp`'s arguments and serves; sets `process.exitCode` (2 on a usage error). */
export function acp(argv: readonly string[]): void {
  const request = parseAcpArgs(argv);
  if (answeredUsage('acp', ACP_USAGE, request)) return;
  const server = serveAcp(request.session, { name: `agent-rx-${request.agent}`, title: `${AGENTS[request.agent].displayName} (agent-rx)` });
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
