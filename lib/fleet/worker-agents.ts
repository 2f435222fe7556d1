import type { Observable } from 'rxjs';
import { agentByName, type AgentName, type AgentRunOptions } from '../agent-table.js';
import type { CliMessage } from '../messages.js';
import type { PermissionCallback } from '../operators/permission-policy.js';
import type { StopReport } from '../process/options.js';
import { runAgent } from '../sources/run-agent.js';
import type { McpServers } from '../tools/mcp-servers.js';
import type { RunSpec } from './run-spec.js';
import { traceEnv } from '../process/trace-context.js';

/** The variable every process of a worker's runs carries: the worker's name (its sweep finds them). */
export const WORKER_ENV = 'AGENT_RX_WORKER';

/**
 * What a worker decides of each agent it runs (its executable, environment, configuration), by
 * the agent's name; an agent left out is not run here. Callers cannot choose these.
 */
export type WorkerAgents = { readonly [N in AgentName]?: Partial<Omit<AgentRunOptions<N>, 'prompt'>> };

/**
 * The agent's run on this machine: the worker's settings for it, the spec's choices, and the
 * worker's marker. The spec's `permission` (over the worker's setting, if any) is given to the run
 * as it is, or for `ask` as `ask`: the callback that waits for a caller's answer.
 */
export function agentSource(agents: WorkerAgents, workerName: string, spec: RunSpec, given: WorkerGiven, onStopped: (report: StopReport) => void, ask: PermissionCallback): Observable<CliMessage> {
  return runAgent(agentByName(spec.agent), agentRunOptions(agents, workerName, spec, given, onStopped, ask));
}

/**
 * What a worker decided of a run: its folder, the MCP servers its spec names (from the worker's
 * catalog), and whether its agent is given the caller's trace context itself (`TRACEPARENT`:
 * when the worker does not trace its runs; else its own span's context reaches the agent).
 */
export interface WorkerGiven {
  readonly cwd: string;
  readonly mcpServers: McpServers;
  readonly carryTraceContext?: boolean;
}

/**
 * The options of a spec's run on this worker (see {@link agentSource}): the worker's settings for
 * the agent, the spec's choices, the folder and MCP servers the worker resolved (added to the
 * agent's own settings' `mcpServers`), and the worker's marker.
 */
export function agentRunOptions(
  agents: WorkerAgents,
  workerName: string,
  spec: RunSpec,
  given: WorkerGiven,
  onStopped: (report: StopReport) => void,
  ask: PermissionCallback,
): Readonly<Record<string, unknown>> {
  const own: { readonly env?: Readonly<Record<string, string | undefined>>; readonly mcpServers?: McpServers | undefined } | undefined = agents[spec.agent];
  if (own === undefined) throw new Error(`this worker does not run ${spec.agent}`);
  const trace = given.carryTraceContext === true ? spec.traceContext : undefined;
  const env = {
    ...own.env,
    ...traceEnv(trace),
    [WORKER_ENV]: workerName,
  };
  const permission = {
    ...(spec.permission === undefined ? {} : { permission: spec.permission === 'ask' ? ask : spec.permission }),
    ...(spec.permissionTimeoutMs === undefined ? {} : { permissionTimeoutMs: spec.permissionTimeoutMs }),
  };
  // The spec was checked for that agent, and the worker's settings are that agent's (`WorkerAgents`);
  // the run checks the whole against the agent's schema.
  const { mcpServers: _names, ...chosen } = spec.options;
  const servers = { ...own.mcpServers, ...given.mcpServers };
  const mcpServers = Object.keys(servers).length === 0 ? {} : { mcpServers: servers };
  return { ...own, ...chosen, ...mcpServers, ...permission, cwd: given.cwd, env, onStopped };
}
