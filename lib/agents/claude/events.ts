import * as z from 'zod';

/**
 * The Claude Code stream-json lines the dialect reads, as loose zod schemas: the CLI adds fields
 * between versions, and only what is read is checked.
 */

const Block = z.looseObject({ type: z.string() });

/**
 * The zod schemas of the Claude Code lines agent-rx reads (`claude -p --output-format stream-json`),
 * by their `type`; loose: only what is read is checked. For `parseJsonLine`'s `schemas` (from `agent-rx`).
 */
export const claudeEventSchemas = {
  system: z.looseObject({
    type: z.literal('system'),
    subtype: z.string(),
    session_id: z.string().optional(),
    /** The CLI's version, in `system/init`. */
    claude_code_version: z.string().optional(),
    /** The model, in `system/init`. */
    model: z.string().optional(),
  }),
  stream_event: z.looseObject({
    type: z.literal('stream_event'),
    event: z.looseObject({ type: z.string(), index: z.number().optional() }),
    api_message_id: z.string().optional(),
    parent_tool_use_id: z.string().nullable().optional(),
  }),
  assistant: z.looseObject({
    type: z.literal('assistant'),
    message: z.looseObject({ id: z.string(), content: z.array(Block) }),
    parent_tool_use_id: z.string().nullable().optional(),
    error: z.string().optional(),
    is_api_error_message: z.boolean().optional(),
  }),
  user: z.looseObject({
    type: z.literal('user'),
    message: z.looseObject({ content: z.union([z.string(), z.array(Block)]) }),
    /** A tool's own account of its result (Edit and Write: the file before and after; Read: the file or image). */
    tool_use_result: z.unknown().optional(),
  }),
  result: z.looseObject({
    type: z.literal('result'),
    subtype: z.string(),
    is_error: z.boolean(),
    result: z.string().optional(),
    errors: z.array(z.string()).optional(),
    stop_reason: z.string().nullable().optional(),
    terminal_reason: z.string().optional(),
    session_id: z.string().optional(),
    total_cost_usd: z.number().optional(),
    api_error_status: z.number().nullable().optional(),
    /** The answer given through the `StructuredOutput` tool (`--json-schema`), validated by the CLI. */
    structured_output: z.unknown().optional(),
    usage: z
      .looseObject({
        input_tokens: z.number().optional(),
        output_tokens: z.number().optional(),
        cache_read_input_tokens: z.number().optional(),
        cache_creation_input_tokens: z.number().optional(),
      })
      .optional(),
  }),
} as const;

/**
 * Every type of line Claude Code is known to print in stream-json (2.1.x): those the dialect reads
 * (above), the control lines its duplex mode reads (`control_request`, `control_response`), and
 * those left aside on purpose (rate limits, progress of a running tool, summaries of tool calls,
 * suggested prompts, authentication status, keep-alives, a mirror of the transcript, and since
 * 2.1.33x `command_lifecycle`: queued/started/completed for each user line sent with a uuid, which
 * the duplex session already follows through the line's replay and the turn's `result`). A line of
 * another type is an `agent.warning`, once per type.
 */
export const CLAUDE_LINE_TYPES: readonly string[] = [
  ...Object.keys(claudeEventSchemas),
  'control_request',
  'control_response',
  'control_cancel_request',
  'rate_limit_event',
  'tool_progress',
  'tool_use_summary',
  'prompt_suggestion',
  'auth_status',
  'keep_alive',
  'transcript_mirror',
  'command_lifecycle',
];

type Schemas = typeof claudeEventSchemas;
/** A known Claude Code line, after validation. */
export type ClaudeEvent = { [K in keyof Schemas]: z.infer<Schemas[K]> }[keyof Schemas];
export type ClaudeEventOf<T extends ClaudeEvent['type']> = Extract<ClaudeEvent, { type: T }>;
