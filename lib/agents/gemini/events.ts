import * as z from 'zod';

/**
 * The Gemini CLI stream-json lines the dialect reads (`gemini -p … --output-format stream-json`),
 * as loose zod schemas: the CLI adds fields between versions, and only what is read is checked.
 */

const Failure = z.looseObject({ type: z.string().optional(), message: z.string() });

const Stats = z.looseObject({
  total_tokens: z.number().optional(),
  input_tokens: z.number().optional(),
  output_tokens: z.number().optional(),
  cached: z.number().optional(),
  input: z.number().optional(),
  duration_ms: z.number().optional(),
  tool_calls: z.number().optional(),
});

/**
 * The zod schemas of the Gemini CLI lines agent-rx reads (`--output-format stream-json`), by their
 * `type`; loose: only what is read is checked. For `parseJsonLine`'s `schemas` (from `agent-rx`).
 */
export const geminiEventSchemas = {
  init: z.looseObject({ type: z.literal('init'), session_id: z.string(), model: z.string().optional() }),
  message: z.looseObject({ type: z.literal('message'), role: z.string(), content: z.string(), delta: z.boolean().optional() }),
  tool_use: z.looseObject({ type: z.literal('tool_use'), tool_name: z.string(), tool_id: z.string(), parameters: z.unknown().optional() }),
  tool_result: z.looseObject({
    type: z.literal('tool_result'),
    tool_id: z.string(),
    status: z.string(),
    output: z.string().optional(),
    error: Failure.optional(),
  }),
  error: z.looseObject({ type: z.literal('error'), severity: z.string().optional(), message: z.string() }),
  result: z.looseObject({ type: z.literal('result'), status: z.string(), error: Failure.optional(), stats: Stats.optional() }),
} as const;

/** Every type of line Gemini CLI (0.61) prints in stream-json: all of them read. Another type is an `agent.warning`, once per type. */
export const GEMINI_LINE_TYPES: readonly string[] = Object.keys(geminiEventSchemas);

type Schemas = typeof geminiEventSchemas;
/** A known Gemini CLI line, after validation. */
export type GeminiEvent = { [K in keyof Schemas]: z.infer<Schemas[K]> }[keyof Schemas];
export type GeminiEventOf<T extends GeminiEvent['type']> = Extract<GeminiEvent, { type: T }>;
/** The token counts of a `result` line. */
export type GeminiStats = z.infer<typeof Stats>;
