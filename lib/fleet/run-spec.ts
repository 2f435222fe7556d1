import * as z from 'zod';
import type { AgentDefinition } from '../agents/definition.js';
import { describeIssue } from '../agents/shared/option-schemas.js';
import { AGENT_NAMES, AGENTS, type AgentName } from '../agent-table.js';

/**
 * What a fleet caller may choose of a run of the agent `N`: the options that say what to do (the
 * prompt, the model, the session, tool lists, time limits, `cwd` as a request), each as in that
 * agent's run options (`RunPiOptions`, …). What runs the agent (executable, arguments, environment,
 * configuration directories) is the worker's and cannot be named here. Each agent's definition has
 * its schema (`AGENTS.pi.options.spec`) and its type (`PiRunSpecOptions`, …).
 */
export type RunSpecOptions<N extends AgentName> = (typeof AGENTS)[N] extends AgentDefinition<string, infer _O, infer _S, infer _U, infer P> ? P : never;

/** A run of the agent `N` as data: `{ agent, options }`. */
export interface AgentRunSpec<N extends AgentName> {
  /** The agent: a name of the agent table (`pi`, `claude`, …). */
  agent: N;
  /** What the caller chooses of the run (see {@link RunSpecOptions}). */
  options: RunSpecOptions<N>;
}

/**
 * A run as data: `{ agent, options }`, one of {@link AgentRunSpec} for each agent of the table,
 * with the options that say what to do (prompt, model, provider, session, tool lists, time limits,
 * `cwd` as a request). What runs the agent (executable, arguments, environment, configuration
 * directories) is the worker's ({@link ServeRunsOptions.agents}) and cannot be named here.
 *
 * ```ts
 * const spec: RunSpec = { agent: 'pi', options: { prompt: 'Fix the failing test', cwd: '/srv/work/app' } };
 * ```
 */
export type RunSpec = { [N in AgentName]: AgentRunSpec<N> }[AgentName];

/**
 * The zod schema of a {@link RunSpec}: `{ agent, options }`, strict at every level, one member per
 * agent of the table. The dispatcher checks a spec before anything is enqueued and the worker checks
 * it again before it starts a run.
 */
export const RunSpecSchema: z.ZodType<RunSpec, RunSpec> = z.discriminatedUnion(
  'agent',
  AGENT_NAMES.map((name) => z.strictObject({ agent: z.literal(name), options: AGENTS[name].options.spec })) as unknown as [z.ZodObject, ...z.ZodObject[]],
) as unknown as z.ZodType<RunSpec, RunSpec>;

/**
 * The spec, checked: a `TypeError` that says what is wrong, as for a source's options.
 *
 * @example
 * checkRunSpec({ agent: 'pi', options: { prompt: 'Fix the failing test' } }); // a RunSpec
 * checkRunSpec({ agent: 'pi', options: { prompt: 'Fix it', executable: '/bin/sh' } });
 * // throws TypeError: agent-rx: not a run spec: options has no option "executable"
 */
export function checkRunSpec(value: unknown): RunSpec {
  const parsed = RunSpecSchema.safeParse(value, { reportInput: true });
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new TypeError(`agent-rx: not a run spec: ${describeIssue(issue, issue?.path.map(String).join('.') ?? 'it')}`);
}
