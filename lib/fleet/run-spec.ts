import * as z from 'zod';
import type { Holds, Same } from '../same-type.js';
import type { AgentDefinition } from '../agents/definition.js';
import { describeIssue, RUN_PERMISSION_OPTIONS } from '../agents/shared/option-schemas.js';
import { AGENT_NAMES, AGENTS, type AgentName, type AgentRunOptions } from '../agent-table.js';

/**
 * What a fleet caller may choose of a run of the agent `N`: the options that say what to do (the
 * prompt, the model, the session, tool lists, time limits, `cwd` as a request), each as in that
 * agent's run options (`RunPiOptions`, …). What runs the agent (executable, arguments, environment,
 * configuration directories) is the worker's and cannot be named here. Each agent's definition has
 * its schema (`AGENTS.pi.options.spec`) and its type (`PiRunSpecOptions`, …).
 */
export type RunSpecOptions<N extends AgentName> = (typeof AGENTS)[N] extends AgentDefinition<string, infer _O, infer _S, infer _U, infer P> ? P : never;

/**
 * How a fleet run answers its agent's permission requests: a preset (`allow-all`, `allow-reads`,
 * `deny-all`), decided on the worker, or `ask`: each request is in the run's stream
 * (`permission.requested`) and waits for a caller's answer (the dispatcher's `run(spec, {
 * permission })` callback, or `dispatcher.answer(runId, requestId, decision)` from any reader),
 * denied at the worker's deadline (`permissionTimeoutMs`) when none comes.
 */
export type FleetPermission = 'allow-all' | 'allow-reads' | 'deny-all' | 'ask';

/** The values of {@link FleetPermission}. */
export const FLEET_PERMISSIONS = ['allow-all', 'allow-reads', 'deny-all', 'ask'] as const satisfies readonly FleetPermission[];

// Every agent's runs take `permission`: a new agent without it does not compile here.
type _EveryRunTakesPermission = Holds<Same<{ [N in AgentName]: 'permission' extends keyof AgentRunOptions<N> ? true : false }[AgentName], true>>;

/** A run of the agent `N` as data: `{ agent, options }`, and how its permission requests are answered. */
export interface AgentRunSpec<N extends AgentName> {
  /** The agent: a name of the agent table (`pi`, `claude`, …). */
  agent: N;
  /** What the caller chooses of the run (see {@link RunSpecOptions}). */
  options: RunSpecOptions<N>;
  /**
   * Who decides when the agent asks before it uses a tool (see {@link FleetPermission}): the run
   * goes over the agent's interactive mode, where it can ask, as a local run given `permission`
   * does. Default: the worker's setting for the agent, else the agent's own rules.
   */
  permission?: FleetPermission;
  /** How long a request waits for an answer before the worker denies it (`by: 'deadline'`). Default 300000 (5 minutes). */
  permissionTimeoutMs?: number;
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

// `permission` and `permissionTimeoutMs` of a spec.
const PERMISSION_FIELDS = {
  permission: z.enum(FLEET_PERMISSIONS, { error: `must be one of ${FLEET_PERMISSIONS.join(', ')}` }).optional(),
  permissionTimeoutMs: RUN_PERMISSION_OPTIONS.permissionTimeoutMs,
};

/**
 * The zod schema of a {@link RunSpec}: `{ agent, options, permission?, permissionTimeoutMs? }`,
 * strict at every level, one member per agent of the table. The dispatcher checks a spec before anything is enqueued and the worker checks it
 * again before it starts a run.
 */
export const RunSpecSchema: z.ZodType<RunSpec, RunSpec> = z.discriminatedUnion(
  'agent',
  AGENT_NAMES.map((name) => z.strictObject({ agent: z.literal(name), options: AGENTS[name].options.spec, ...PERMISSION_FIELDS })) as unknown as [z.ZodObject, ...z.ZodObject[]],
) as unknown as z.ZodType<RunSpec, RunSpec>;

/**
 * The spec, checked: a `TypeError` that says what is wrong, as for a source's options.
 *
 * @example
 * checkRunSpec({ agent: 'pi', options: { prompt: 'Fix the failing test' } }); // a RunSpec
 * checkRunSpec({ agent: 'pi', options: { prompt: 'Fix it', executable: '/bin/sh' } });
 * // throws TypeError: agent-rx: not a run spec: options has no option "executable"
 * checkRunSpec({ agent: 'codex', options: { prompt: 'Fix it' }, permission: 'sometimes' });
 * // throws TypeError: agent-rx: not a run spec: permission must be one of allow-all, allow-reads, deny-all, ask; got "sometimes"
 */
export function checkRunSpec(value: unknown): RunSpec {
  const parsed = RunSpecSchema.safeParse(value, { reportInput: true });
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new TypeError(`agent-rx: not a run spec: ${describeIssue(issue, issue?.path.map(String).join('.') ?? 'it')}`);
}
