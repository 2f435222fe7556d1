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

export const PiRunSpecSchema = z.strictObject({
  ...common,
  provider: z.string().min(1).optional(),
  thinking: z.enum(PI_THINKING_LEVELS).optional(),
  session: z.union([z.enum(['new', 'none', 'continue']), z.strictObject({ id: z.string().min(1) })]).optional(),
  tools: strings.optional(),
  systemPrompt: z.string().min(1).optional(),
  appendSystemPrompt: z.string().min(1).optional(),
});

export const ClaudeRunSpecSchema = z.strictObject({
  ...common,
  session: z.union([z.enum(['new', 'continue']), z.strictObject({ resume: z.string().min(1) })]).optional(),
  permissionMode: z.string().min(1).optional(),
  allowedTools: strings.optional(),
  disallowedTools: strings.optional(),
  maxTurns: z.number().int().min(1).optional(),
  includePartialMessages: z.boolean().optional(),
});

export const CodexRunSpecSchema = z.strictObject({
  ...common,
  provider: z.string().min(1).optional(),
  sandbox: z.enum(CODEX_SANDBOX_MODES).optional(),
  approvalPolicy: z.enum(CODEX_APPROVAL_POLICIES).optional(),
  reasoningEffort: z.string().min(1).optional(),
  session: z.union([z.enum(['new', 'last']), z.strictObject({ resume: z.string().min(1) })]).optional(),
  ephemeral: z.boolean().optional(),
});

export const GeminiRunSpecSchema = z.strictObject({
  ...common,
  approvalMode: z.enum(GEMINI_APPROVAL_MODES).optional(),
  session: z.union([z.enum(['new', 'latest']), z.strictObject({ id: z.string().min(1) }), z.strictObject({ resume: z.string().min(1) })]).optional(),
});

export const RunSpecSchema = z.discriminatedUnion('agent', [
  z.strictObject({ agent: z.literal('pi'), options: PiRunSpecSchema }),
  z.strictObject({ agent: z.literal('claude'), options: ClaudeRunSpecSchema }),
  z.strictObject({ agent: z.literal('codex'), options: CodexRunSpecSchema }),
  z.strictObject({ agent: z.literal('gemini'), options: GeminiRunSpecSchema }),
]);

export type RunSpec = z.infer<typeof RunSpecSchema>;
export type PiRunSpec = z.infer<typeof PiRunSpecSchema>;
export type ClaudeRunSpec = z.infer<typeof ClaudeRunSpecSchema>;
export type CodexRunSpec = z.infer<typeof CodexRunSpecSchema>;
export type GeminiRunSpec = z.infer<typeof GeminiRunSpecSchema>;

/** The spec, checked: a `TypeError` that says what is wrong, as for a source's options. */
export function checkRunSpec(value: unknown): RunSpec {
  const parsed = RunSpecSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue === undefined || issue.path.length === 0 ? '' : `${issue.path.map(String).join('.')}: `;
  throw new TypeError(`agent-rx: not a run spec (${where}${issue?.message ?? 'invalid'})`);
}
