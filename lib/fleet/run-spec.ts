import * as z from 'zod';
import { MAX_TRACESTATE_LENGTH, TRACEPARENT_PATTERN, type TraceContext } from '../process/trace-context.js';
import type { Holds, Same } from '../same-type.js';
import type { AgentDefinition } from '../agents/definition.js';
import { describeIssue, RUN_PERMISSION_OPTIONS } from '../agents/shared/option-schemas.js';
import { isHostTool } from '../tools/host-tool.js';
import { AGENT_NAMES, AGENTS, type AgentName, type AgentRunOptions } from '../agent-table.js';

export type { TraceContext } from '../process/trace-context.js';

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
  /**
   * The caller's trace context (W3C): the worker's run continues the caller's trace (its agent is
   * given `TRACEPARENT`, and a worker that traces its runs makes its span a child of it). The
   * dispatcher sets it from the trace around the run (`traceRun` of `agent-rx/otel`).
   */
  traceContext?: TraceContext;
}

/** Validates a {@link TraceContext}. */
export const TraceContextSchema = z.strictObject({
  traceparent: z.string().regex(TRACEPARENT_PATTERN, { error: 'must be a W3C traceparent (00-<32 hex>-<16 hex>-<2 hex>)' }),
  tracestate: z.string().max(MAX_TRACESTATE_LENGTH).optional(),
});

/**
 * A run as data: `{ agent, options }`, one of {@link AgentRunSpec} for each agent of the table,
 * with the options that say what to do (prompt, model, provider, session, tool lists, time limits,
 * `cwd` as a request). What runs the agent (executable, arguments, environment, configuration
 * directories) is the worker's ({@link ServeRunsOptions.agents}) and cannot be named here.
 *
 * ```ts
 * const spec: RunSpec = { agent: 'pi', options: { prompt: 'Fix the failing test', cwd: '/srv/work/app' } };
 * const withDocs: RunSpec = { agent: 'claude', options: { prompt: 'Answer from the docs', mcpServers: ['docs'] } }; // the worker's server "docs"
 * ```
 *
 * It is plain JSON, as it travels through Redis: the prompt is text, and images as base64 `data`
 * with their `mimeType`; `outputSchema` is a JSON Schema object. `dispatcher.run` takes more (see
 * `DispatchSpec`: images by path or as bytes, files, a zod schema) and makes it this.
 */
export type RunSpec = { [N in AgentName]: AgentRunSpec<N> }[AgentName];

// `permission`, `permissionTimeoutMs` and `traceContext` of a spec.
const PERMISSION_FIELDS = {
  permission: z.enum(FLEET_PERMISSIONS, { error: `must be one of ${FLEET_PERMISSIONS.join(', ')}` }).optional(),
  permissionTimeoutMs: RUN_PERMISSION_OPTIONS.permissionTimeoutMs,
  traceContext: TraceContextSchema.optional(),
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
 * The spec, checked: a `TypeError` that says what is wrong, as for a source's options. A spec is
 * plain JSON: its prompt holds text, and images as base64 `data` with their `mimeType`; its
 * `outputSchema` is a JSON Schema object. One that still holds an image by path, bytes, a file
 * part or a zod schema (what `dispatcher.run` reads and converts on the caller's machine, see
 * `toRunSpec`) is refused, saying so: a worker never reads a caller's paths. So are host tools
 * (`tool(...)`: functions of the caller's process) and `mcpServers` given as configs: a spec names
 * the worker's MCP servers (`mcpServers: ['docs']`), which the worker resolves.
 *
 * @example
 * checkRunSpec({ agent: 'pi', options: { prompt: 'Fix the failing test' } }); // a RunSpec
 * checkRunSpec({ agent: 'pi', options: { prompt: 'Fix it', executable: '/bin/sh' } });
 * // throws TypeError: agent-rx: not a run spec: options has no option "executable"
 * checkRunSpec({ agent: 'pi', options: { prompt: ['What is this?', { type: 'image', path: 'shot.png' }] } });
 * // throws TypeError: agent-rx: not a run spec: options.prompt[1] is an image by path: a spec carries images as base64 data with a mimeType (…)
 * checkRunSpec({ agent: 'codex', options: { prompt: 'Fix it' }, permission: 'sometimes' });
 * // throws TypeError: agent-rx: not a run spec: permission must be one of allow-all, allow-reads, deny-all, ask; got "sometimes"
 */
export function checkRunSpec(value: unknown): RunSpec {
  const carried = notCarried(value);
  if (carried !== null) throw new TypeError(`agent-rx: not a run spec: ${carried}`);
  const parsed = RunSpecSchema.safeParse(value, { reportInput: true });
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new TypeError(`agent-rx: not a run spec: ${describeIssue(issue, issue?.path.map(String).join('.') ?? 'it')}`);
}

const MADE_BY_DISPATCHER = 'createRunDispatcher().run (or toRunSpec) reads it on the caller\'s machine';

/**
 * Why a spec holds what only the caller's machine can give (a path to read, bytes, a zod schema),
 * in words, or `null`: a worker never reads a caller's paths, and JSON carries no bytes nor zod.
 */
function notCarried(value: unknown): string | null {
  const options = typeof value === 'object' && value !== null ? (value as { readonly options?: unknown }).options : undefined;
  if (typeof options !== 'object' || options === null) return null;
  const { prompt, outputSchema, tools, mcpServers } = options as { readonly prompt?: unknown; readonly outputSchema?: unknown; readonly tools?: unknown; readonly mcpServers?: unknown };
  if (outputSchema instanceof z.ZodType) return 'options.outputSchema is a zod schema: a spec carries its JSON Schema (createRunDispatcher().run, or toRunSpec, makes it)';
  if (Array.isArray(tools) && (tools as readonly unknown[]).some(isHostTool)) {
    return "options.tools holds host tools (tool(...)): their functions run in the caller's process and cannot cross Redis; give the worker an MCP server (serveRuns({ mcpServers })) and name it in options.mcpServers";
  }
  if (typeof mcpServers === 'object' && mcpServers !== null && !Array.isArray(mcpServers)) {
    return `options.mcpServers names servers of the worker's (an array of names, e.g. ${JSON.stringify(Object.keys(mcpServers).slice(0, 2))}): what a server is (its command, its URL) is the worker's (serveRuns({ mcpServers }))`;
  }
  if (!Array.isArray(prompt)) return null;
  for (const [index, part] of (prompt as readonly unknown[]).entries()) {
    if (typeof part !== 'object' || part === null) continue;
    const { type, path, data } = part as { readonly type?: unknown; readonly path?: unknown; readonly data?: unknown };
    const where = `options.prompt[${index}]`;
    if (type === 'image' && path !== undefined) return `${where} is an image by path: a spec carries images as base64 data with a mimeType (${MADE_BY_DISPATCHER}; a worker never reads a caller's paths)`;
    if (type === 'image' && data instanceof Uint8Array) return `${where} holds bytes: a spec carries images as base64 data with a mimeType (${MADE_BY_DISPATCHER})`;
    if (type === 'file') return `${where} is a file: a spec carries it as a text part holding the file (${MADE_BY_DISPATCHER}; a worker never reads a caller's paths)`;
  }
  return null;
}
