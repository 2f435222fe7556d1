import * as z from 'zod';
import { PI_THINKING_LEVELS } from '../agents/pi/options.js';
import { CODEX_APPROVAL_POLICIES, CODEX_SANDBOX_MODES } from '../agents/codex/options.js';
import { GEMINI_APPROVAL_MODES } from '../agents/gemini/options.js';

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
 * The options of a pi run a caller may choose (see {@link agent-rx!RunPiOptions} for each): strict, so an
 * unknown key (an executable, arguments, an environment) is refused.
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

/** The options of a Claude Code run a caller may choose (see {@link agent-rx!RunClaudeCodeOptions}); strict. */
export const ClaudeRunSpecSchema = z.strictObject({
  ...common,
  session: z.union([z.enum(['new', 'continue']), z.strictObject({ resume: z.string().min(1) })]).optional(),
  permissionMode: z.string().min(1).optional(),
  allowedTools: strings.optional(),
  disallowedTools: strings.optional(),
  maxTurns: z.number().int().min(1).optional(),
  includePartialMessages: z.boolean().optional(),
});

/** The options of a Codex run a caller may choose (see {@link agent-rx!RunCodexOptions}); strict. */
export const CodexRunSpecSchema = z.strictObject({
  ...common,
  provider: z.string().min(1).optional(),
  sandbox: z.enum(CODEX_SANDBOX_MODES).optional(),
  approvalPolicy: z.enum(CODEX_APPROVAL_POLICIES).optional(),
  reasoningEffort: z.string().min(1).optional(),
  session: z.union([z.enum(['new', 'last']), z.strictObject({ resume: z.string().min(1) })]).optional(),
  ephemeral: z.boolean().optional(),
});

/** The options of a Gemini CLI run a caller may choose (see {@link agent-rx!RunGeminiOptions}); strict. */
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
export type RunSpec = z.infer<typeof RunSpecSchema>;
/** The options of a pi {@link RunSpec} (see {@link PiRunSpecSchema}). */
export type PiRunSpec = z.infer<typeof PiRunSpecSchema>;
/** The options of a Claude Code {@link RunSpec} (see {@link ClaudeRunSpecSchema}). */
export type ClaudeRunSpec = z.infer<typeof ClaudeRunSpecSchema>;
/** The options of a Codex {@link RunSpec} (see {@link CodexRunSpecSchema}). */
export type CodexRunSpec = z.infer<typeof CodexRunSpecSchema>;
/** The options of a Gemini CLI {@link RunSpec} (see {@link GeminiRunSpecSchema}). */
export type GeminiRunSpec = z.infer<typeof GeminiRunSpecSchema>;

/** The spec, checked: a `TypeError` that says what is wrong, as for a source's options. */
export function checkRunSpec(value: unknown): RunSpec {
  const parsed = RunSpecSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue === undefined || issue.path.length === 0 ? '' : `${issue.path.map(String).join('.')}: `;
  throw new TypeError(`agent-rx: not a run spec (${where}${issue?.message ?? 'invalid'})`);
}
