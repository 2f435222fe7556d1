import type { AgentDefinition } from './definition.js';
import { claudeAgent } from './claude/definition.js';
import { codexAgent } from './codex/definition.js';
import { geminiAgent } from './gemini/definition.js';
import { piAgent } from './pi/definition.js';

/**
 * Every supported agent's definition, by name. Adding an agent is a folder in `lib/agents/<name>/`
 * with its {@link AgentDefinition}, and one row here: the command line (`--agent`), the fleet's run
 * specs and workers, the ACP server, the demo and the web example read this table.
 */
export const AGENTS = {
  pi: piAgent,
  claude: claudeAgent,
  codex: codexAgent,
  gemini: geminiAgent,
} as const;

/** The name of a supported agent: `pi`, `claude`, `codex` or `gemini` (a key of {@link AGENTS}). */
export type AgentName = keyof typeof AGENTS;

/** The agents' names, in the table's order. */
export const AGENT_NAMES = Object.keys(AGENTS) as readonly AgentName[];

/**
 * Whether `value` names a supported agent.
 *
 * @example
 * const name = process.env['AGENT'] ?? 'pi';
 * if (isAgentName(name)) console.log(AGENTS[name].displayName);
 */
export function isAgentName(value: string): value is AgentName {
  return Object.hasOwn(AGENTS, value);
}

/** A run's options of the agent `name` (`runPi`'s for `pi`, …). */
export type AgentRunOptions<N extends AgentName> = (typeof AGENTS)[N] extends AgentDefinition<string, infer O, infer _S, infer _U> ? O : never;

/** A session's options of the agent `name` (`piSession`'s for `pi`, …). */
export type AgentSessionOptions<N extends AgentName> = (typeof AGENTS)[N] extends AgentDefinition<string, infer _O, infer S, infer _U> ? S : never;

/**
 * The definition of the agent `name`, for code that chooses the agent at run time and builds its
 * options as data (from flags, a file, a request): its options are checked against the agent's
 * schema when the run or session is made (a `TypeError` names a wrong one), so they are typed as a
 * plain object here.
 *
 * @example
 * runAgent(agentByName('codex'), { prompt: 'Fix the failing test', sandbox: 'workspace-write' }).subscribe(render);
 */
export function agentByName(name: AgentName): AgentDefinition<AgentName, Readonly<Record<string, unknown>>, Readonly<Record<string, unknown>>, unknown> {
  return AGENTS[name] as unknown as AgentDefinition<AgentName, Readonly<Record<string, unknown>>, Readonly<Record<string, unknown>>, unknown>;
}
