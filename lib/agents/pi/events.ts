import { z } from 'zod';

/**
 * The pi `--mode json` events the dialect reads, as zod schemas. Objects are loose: pi adds
 * fields, and only what is read is checked. `message_update` is checked shallowly on purpose:
 * it repeats the whole message twice per line, and its deltas are what is read.
 */

const ContentBlock = z.looseObject({ type: z.string() });

export const PiUsageSchema = z.looseObject({
  input: z.number(),
  output: z.number(),
  cacheRead: z.number().optional(),
  cacheWrite: z.number().optional(),
  totalTokens: z.number().optional(),
  cost: z.looseObject({ total: z.number().optional() }).optional(),
});

export const PiMessageSchema = z.looseObject({
  role: z.string(),
  content: z.union([z.string(), z.array(ContentBlock)]),
  stopReason: z.string().optional(),
  errorMessage: z.string().optional(),
  usage: PiUsageSchema.optional(),
  timestamp: z.number().optional(),
  toolCallId: z.string().optional(),
});

const ToolResult = z.looseObject({ content: z.array(ContentBlock).optional() });

export const piEventSchemas = {
  session: z.looseObject({ type: z.literal('session'), id: z.string() }),
  agent_start: z.looseObject({ type: z.literal('agent_start') }),
  agent_end: z.looseObject({ type: z.literal('agent_end') }),
  turn_start: z.looseObject({ type: z.literal('turn_start') }),
  turn_end: z.looseObject({ type: z.literal('turn_end') }),
  message_start: z.looseObject({ type: z.literal('message_start'), message: PiMessageSchema }),
  message_end: z.looseObject({ type: z.literal('message_end'), message: PiMessageSchema }),
  message_update: z.looseObject({
    type: z.literal('message_update'),
    assistantMessageEvent: z.looseObject({
      type: z.string(),
      contentIndex: z.number().optional(),
      delta: z.string().optional(),
      toolCall: z.looseObject({ id: z.string(), name: z.string(), arguments: z.unknown() }).optional(),
    }),
    message: z.looseObject({ timestamp: z.number().optional() }),
  }),
  tool_execution_start: z.looseObject({
    type: z.literal('tool_execution_start'),
    toolCallId: z.string(),
    toolName: z.string(),
    args: z.unknown(),
  }),
  tool_execution_update: z.looseObject({
    type: z.literal('tool_execution_update'),
    toolCallId: z.string(),
    toolName: z.string(),
    partialResult: ToolResult.optional(),
  }),
  tool_execution_end: z.looseObject({
    type: z.literal('tool_execution_end'),
    toolCallId: z.string(),
    toolName: z.string(),
    result: ToolResult.optional(),
    isError: z.boolean().optional(),
  }),
  auto_retry_start: z.looseObject({
    type: z.literal('auto_retry_start'),
    attempt: z.number(),
    maxAttempts: z.number(),
    delayMs: z.number(),
    errorMessage: z.string().optional(),
  }),
  auto_retry_end: z.looseObject({
    type: z.literal('auto_retry_end'),
    success: z.boolean(),
    attempt: z.number().optional(),
    finalError: z.string().optional(),
  }),
} as const;

type Schemas = typeof piEventSchemas;
/** A known pi event, after validation. */
export type PiEvent = { [K in keyof Schemas]: z.infer<Schemas[K]> }[keyof Schemas];
export type PiMessage = z.infer<typeof PiMessageSchema>;
export type PiEventOf<T extends PiEvent['type']> = Extract<PiEvent, { type: T }>;
