import * as z from 'zod';
import { PI_THINKING_LEVELS, type PiThinkingLevel } from '../agents/pi/options.js';
import { CODEX_APPROVAL_POLICIES, CODEX_SANDBOX_MODES, type CodexApprovalPolicy, type CodexSandboxMode } from '../agents/codex/options.js';
import { GEMINI_APPROVAL_MODES, type GeminiApprovalMode } from '../agents/gemini/options.js';
import type { Holds, Same } from '../same-type.js';

/**
 * A run as data, what a caller may choose of it: the agent and the options that say what to do.
 * What runs it (the executable, its arguments, the environment, configuration directories, extra
 * flags) is the worker's and cannot be named here: the schemas are strict, so an unknown key is
 * refused on both sides. `cwd` is a request, which the worker's `resolveCwd` may refuse.
 */
const common = {
  prompt: z.string().refine((prompt) => prompt.trim() !== '', 'the prompt is empty'),
  cwd: z.string().min(1).optional(),
  model: z.string().min(1).optional(),
  timeoutMs: z.number().int().positive().max(2 ** 31 - 1).optional(),
  idleTimeoutMs: z.number().int().positive().max(2 ** 31 - 1).optional(),
  agentRetry: z.boolean().optional(),
};

const strings = z.array(z.string().min(1));

/**
 * The options of a pi run a caller may choose (see {@link agent-rx!RunPiOptions | RunPiOptions} for
 * each): strict, so an unknown key (an executable, arguments, an environment) is refused.
 */
export const PiRunSpecSchema = z.strictObject({
  ...common,
  provider: z.string().min(1).optional(),
  thinking: z.enum(PI_THINKING_LEVELS).optional(),
  session: z.union([z.enum(['new', 'none', 'continue']), z.strictObject({ id: z.string().min(1) })]).optional(),
  tools: strings.optional(),
  systemPrompt: z.string().min(1).optional(),
  appendSystemPrompt: z.string().min(1).optional(),
});

/** The options of a Claude Code run a caller may choose (see {@link agent-rx!RunClaudeCodeOptions | RunClaudeCodeOptions}); strict. */
export const ClaudeRunSpecSchema = z.strictObject({
  ...common,
  session: z.union([z.enum(['new', 'continue']), z.strictObject({ resume: z.string().min(1) })]).optional(),
  permissionMode: z.string().min(1).optional(),
  allowedTools: strings.optional(),
  disallowedTools: strings.optional(),
  maxTurns: z.number().int().min(1).optional(),
  includePartialMessages: z.boolean().optional(),
});

/** The options of a Codex run a caller may choose (see {@link agent-rx!RunCodexOptions | RunCodexOptions}); strict. */
export const CodexRunSpecSchema = z.strictObject({
  ...common,
  provider: z.string().min(1).optional(),
  sandbox: z.enum(CODEX_SANDBOX_MODES).optional(),
  approvalPolicy: z.enum(CODEX_APPROVAL_POLICIES).optional(),
  reasoningEffort: z.string().min(1).optional(),
  session: z.union([z.enum(['new', 'last']), z.strictObject({ resume: z.string().min(1) })]).optional(),
  ephemeral: z.boolean().optional(),
});

/** The options of a Gemini CLI run a caller may choose (see {@link agent-rx!RunGeminiOptions | RunGeminiOptions}); strict. */
export const GeminiRunSpecSchema = z.strictObject({
  ...common,
  approvalMode: z.enum(GEMINI_APPROVAL_MODES).optional(),
  session: z.union([z.enum(['new', 'latest']), z.strictObject({ id: z.string().min(1) }), z.strictObject({ resume: z.string().min(1) })]).optional(),
});

/**
 * The zod schema of a {@link RunSpec}: `{ agent, options }`, strict at every level. The dispatcher
 * checks a spec before anything is enqueued and the worker checks it again before it starts a run.
 */
export const RunSpecSchema = z.discriminatedUnion('agent', [
  z.strictObject({ agent: z.literal('pi'), options: PiRunSpecSchema }),
  z.strictObject({ agent: z.literal('claude'), options: ClaudeRunSpecSchema }),
  z.strictObject({ agent: z.literal('codex'), options: CodexRunSpecSchema }),
  z.strictObject({ agent: z.literal('gemini'), options: GeminiRunSpecSchema }),
]);

/**
 * A run as data: `{ agent, options }`, with the options that say what to do (prompt, model, provider,
 * session, tool lists, time limits, `cwd` as a request). What runs the agent (executable, arguments,
 * environment, configuration directories) is the worker's ({@link ServeRunsOptions.agents}) and
 * cannot be named here.
 *
 * ```ts
 * const spec: RunSpec = { agent: 'pi', options: { prompt: 'Fix the failing test', cwd: '/srv/work/app' } };
 * ```
 */
export type RunSpec =
  | { agent: 'pi'; options: PiRunSpec }
  | { agent: 'claude'; options: ClaudeRunSpec }
  | { agent: 'codex'; options: CodexRunSpec }
  | { agent: 'gemini'; options: GeminiRunSpec };

/**
 * The options of a pi {@link RunSpec}: each as in {@link agent-rx!RunPiOptions | RunPiOptions}
 * (see {@link PiRunSpecSchema}).
 */
export interface PiRunSpec {
  /** Not empty (nor only whitespace). */
  prompt: string;
  /** A request: the worker's `resolveCwd` may refuse it. */
  cwd?: string | undefined;
  model?: string | undefined;
  /** An integer of ms, at most 2^31 - 1. */
  timeoutMs?: number | undefined;
  /** An integer of ms, at most 2^31 - 1. */
  idleTimeoutMs?: number | undefined;
  agentRetry?: boolean | undefined;
  provider?: string | undefined;
  thinking?: PiThinkingLevel | undefined;
  session?: 'new' | 'none' | 'continue' | { id: string } | undefined;
  tools?: string[] | undefined;
  systemPrompt?: string | undefined;
  appendSystemPrompt?: string | undefined;
}

/**
 * The options of a Claude Code {@link RunSpec}: each as in {@link agent-rx!RunClaudeCodeOptions | RunClaudeCodeOptions}
 * (see {@link ClaudeRunSpecSchema}).
 */
export interface ClaudeRunSpec {
  /** Not empty (nor only whitespace). */
  prompt: string;
  /** A request: the worker's `resolveCwd` may refuse it. */
  cwd?: string | undefined;
  model?: string | undefined;
  /** An integer of ms, at most 2^31 - 1. */
  timeoutMs?: number | undefined;
  /** An integer of ms, at most 2^31 - 1. */
  idleTimeoutMs?: number | undefined;
  agentRetry?: boolean | undefined;
  session?: 'new' | 'continue' | { resume: string } | undefined;
  permissionMode?: string | undefined;
  allowedTools?: string[] | undefined;
  disallowedTools?: string[] | undefined;
  maxTurns?: number | undefined;
  includePartialMessages?: boolean | undefined;
}

/**
 * The options of a Codex {@link RunSpec}: each as in {@link agent-rx!RunCodexOptions | RunCodexOptions}
 * (see {@link CodexRunSpecSchema}).
 */
export interface CodexRunSpec {
  /** Not empty (nor only whitespace). */
  prompt: string;
  /** A request: the worker's `resolveCwd` may refuse it. */
  cwd?: string | undefined;
  model?: string | undefined;
  /** An integer of ms, at most 2^31 - 1. */
  timeoutMs?: number | undefined;
  /** An integer of ms, at most 2^31 - 1. */
  idleTimeoutMs?: number | undefined;
  agentRetry?: boolean | undefined;
  provider?: string | undefined;
  sandbox?: CodexSandboxMode | undefined;
  approvalPolicy?: CodexApprovalPolicy | undefined;
  reasoningEffort?: string | undefined;
  session?: 'new' | 'last' | { resume: string } | undefined;
  ephemeral?: boolean | undefined;
}

/**
 * The options of a Gemini CLI {@link RunSpec}: each as in {@link agent-rx!RunGeminiOptions | RunGeminiOptions}
 * (see {@link GeminiRunSpecSchema}).
 */
export interface GeminiRunSpec {
  /** Not empty (nor only whitespace). */
  prompt: string;
  /** A request: the worker's `resolveCwd` may refuse it. */
  cwd?: string | undefined;
  model?: string | undefined;
  /** An integer of ms, at most 2^31 - 1. */
  timeoutMs?: number | undefined;
  /** An integer of ms, at most 2^31 - 1. */
  idleTimeoutMs?: number | undefined;
  agentRetry?: boolean | undefined;
  approvalMode?: GeminiApprovalMode | undefined;
  session?: 'new' | 'latest' | { id: string } | { resume: string } | undefined;
}

// Each declared type is exactly what its schema validates (see `Same`): change both together.
type _RunSpecTypesMatchTheirSchemas = [
  Holds<Same<RunSpec, z.infer<typeof RunSpecSchema>>>,
  Holds<Same<PiRunSpec, z.infer<typeof PiRunSpecSchema>>>,
  Holds<Same<ClaudeRunSpec, z.infer<typeof ClaudeRunSpecSchema>>>,
  Holds<Same<CodexRunSpec, z.infer<typeof CodexRunSpecSchema>>>,
  Holds<Same<GeminiRunSpec, z.infer<typeof GeminiRunSpecSchema>>>,
];

/**
 * The spec, checked: a `TypeError` that says what is wrong, as for a source's options.
 *
 * @example
 * checkRunSpec({ agent: 'pi', options: { prompt: 'Fix the failing test' } }); // a RunSpec
 * checkRunSpec({ agent: 'pi', options: { prompt: 'Fix it', executable: '/bin/sh' } });
 * // throws TypeError: agent-rx: not a run spec (options: Unrecognized key: "executable")
 */
export function checkRunSpec(value: unknown): RunSpec {
  const parsed = RunSpecSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue === undefined || issue.path.length === 0 ? '' : `${issue.path.map(String).join('.')}: `;
  throw new TypeError(`agent-rx: not a run spec (${where}${issue?.message ?? 'invalid'})`);
}
