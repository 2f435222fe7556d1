import * as z from 'zod';

/**
 * The Qwen Code stream-json lines the dialect reads (`qwen --output-format stream-json
 * --include-partial-messages`), as loose zod schemas: the CLI adds fields between versions, and
 * only what is read is checked. They are shaped as Claude Code's, with differences of their own
 * (see the dialect).
 */

const Block = z.looseObject({ type: z.string() });

const Usage = z.looseObject({
  input_tokens: z.number().optional(),
  output_tokens: z.number().optional(),
  cache_read_input_tokens: z.number().optional(),
  total_tokens: z.number().optional(),
});

/**
 * The zod schemas of the Qwen Code lines agent-rx reads, by their `type`; loose: only what is read
 * is checked. For `parseJsonLine`'s `schemas` (from `agent-rx`).
 */
export const qwenEventSchemas = {
  system: z.looseObject({ type: z.literal('system'), subtype: z.string(), session_id: z.string().optional(), data: z.unknown().optional() }),
  stream_event: z.looseObject({
    type: z.literal('stream_event'),
    event: z.looseObject({ type: z.string() }),
    parent_tool_use_id: z.string().nullable().optional(),
  }),
  assistant: z.looseObject({
    type: z.literal('assistant'),
    message: z.looseObject({ content: z.array(Block), stop_reason: z.string().nullable().optional() }),
    parent_tool_use_id: z.string().nullable().optional(),
  }),
  user: z.looseObject({
    type: z.literal('user'),
    message: z.looseObject({ content: z.union([z.string(), z.array(Block)]) }),
    parent_tool_use_id: z.string().nullable().optional(),
  }),
  result: z.looseObject({
    type: z.literal('result'),
    subtype: z.string(),
    is_error: z.boolean(),
    session_id: z.string().optional(),
    result: z.string().optional(),
    error: z.looseObject({ message: z.string() }).optional(),
    usage: Usage.optional(),
  }),
} as const;

/** A known Qwen Code line, after validation. */
export type QwenEvent = { [K in keyof typeof qwenEventSchemas]: z.infer<(typeof qwenEventSchemas)[K]> }[keyof typeof qwenEventSchemas];
export type QwenEventOf<T extends QwenEvent['type']> = Extract<QwenEvent, { type: T }>;
