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
  system: z.looseObject({
    type: z.literal('system'),
    subtype: z.string(),
    session_id: z.string().optional(),
    data: z.unknown().optional(),
    /** The CLI's version, in `system/init`. */
    qwen_code_version: z.string().optional(),
    /** The model, in `system/init`. */
    model: z.string().optional(),
  }),
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

/**
 * Every type of line Qwen Code (0.24) is known to print in stream-json: those the dialect reads,
 * and the control lines of its stream-json input mode, left aside. Another type is an
 * `agent.warning`, once per type.
 */
export const QWEN_LINE_TYPES: readonly string[] = [...Object.keys(qwenEventSchemas), 'control_request', 'control_response'];

/**
 * What Qwen Code (0.24) sends as an ACP agent besides ACP's own methods, left aside: its requests
 * that ask the client for the prompts queued during a turn (`craft/drainMidTurnQueue`: the SDK
 * answers "method not found", and Qwen Code goes on), and its notifications of a session's and an
 * account's changes. Its methods that begin with `_` are ACP extensions, not checked.
 */
export const QWEN_ACP_TYPES: readonly string[] = [
  'craft/drainMidTurnQueue',
  'authenticate/update',
  ...[
    'artifact-event',
    'generation/event',
    'mcp-budget-event',
    'mode-update',
    'model-update',
    'pr-binding',
    'prompt-suggestion',
    'recording-degraded',
    'sources-changed',
    'terminal-sequence',
    'title-update',
  ].map((name) => `qwen/notify/session/${name}`),
  'qwen/notify/workspace/generation/event',
];

/** A known Qwen Code line, after validation. */
export type QwenEvent = { [K in keyof typeof qwenEventSchemas]: z.infer<(typeof qwenEventSchemas)[K]> }[keyof typeof qwenEventSchemas];
export type QwenEventOf<T extends QwenEvent['type']> = Extract<QwenEvent, { type: T }>;
