import * as z from 'zod';

/**
 * The pi `--mode json` events the dialect reads, as zod schemas. Objects are loose: pi adds
 * fields, and only what is read is checked. `message_update` is checked shallowly on purpose:
 * it repeats the whole message twice per line, and its deltas are what is read.
 */

const ContentBlock = z.looseObject({ type: z.string() });

const PiUsageSchema = z.looseObject({
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

/**
 * The zod schemas of the pi events agent-rx reads (`pi --mode json`), by their `type`; loose: only
 * what is read is checked. For `parseJsonLine`'s `schemas` (from `agent-rx`).
 */
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

/**
 * Every type of line pi (0.73) is known to print in its JSON and RPC modes: the events the dialect
 * reads, those left aside on purpose (its queue of steers and follow-ups, compactions, changes of
 * the session's name and thinking level, its extensions' errors), and what its RPC mode prints
 * for the session protocol (`response`, `extension_ui_request`). Another type is an
 * `agent.warning`, once per type.
 */
export const PI_LINE_TYPES: readonly string[] = [
  ...Object.keys(piEventSchemas),
  'queue_update',
  'compaction_start',
  'compaction_end',
  'session_info_changed',
  'thinking_level_changed',
  'response',
  'extension_ui_request',
  'extension_error',
];

type Schemas = typeof piEventSchemas;
/** A known pi event, after validation. */
export type PiEvent = { [K in keyof Schemas]: z.infer<Schemas[K]> }[keyof Schemas];
/**
 * A message as pi reports it in `message_start`, `message_update` and `message_end` (role, content
 * blocks, stop reason, usage), after validation.
 */
export type PiMessage = z.infer<typeof PiMessageSchema>;
export type PiEventOf<T extends PiEvent['type']> = Extract<PiEvent, { type: T }>;

const MESSAGE_UPDATE_HEAD = '{"type":"message_update","assistantMessageEvent":{';
const MESSAGE_UPDATE_TAIL = '},"message":';
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const CLOSE_BRACE = 0x7d;

/**
 * Parses one line of pi's JSON output: the result is always what `JSON.parse(line)` returns
 * (deep-equal), and it throws what `JSON.parse` throws. A `message_update` line holds the whole
 * message twice, byte for byte: `{"type":"message_update","assistantMessageEvent":{…,"partial":M},
 * "message":M}`. For that exact shape the message is parsed once and used for both, so
 * `partial` and `message` are then the same object; the pipeline never reads `partial`.
 * Anything else (another event, another key order, whitespace, two different snapshots) is parsed
 * whole by `JSON.parse`.
 *
 * @example
 * lines.pipe(parseJsonLine({ schemas: piEventSchemas, parse: parsePiLine }));
 */
export function parsePiLine(line: string): unknown {
  return parseMessageUpdate(line) ?? JSON.parse(line);
}

/** The fast path for a `message_update` line; `undefined` when the line is not exactly that shape. */
function parseMessageUpdate(line: string): unknown {
  if (!line.startsWith(MESSAGE_UPDATE_HEAD)) return undefined;
  // Walk the members of assistantMessageEvent (short: type, contentIndex, delta...) to "partial".
  let at = MESSAGE_UPDATE_HEAD.length;
  let partialAt = -1;
  while (partialAt === -1) {
    if (line.charCodeAt(at) !== QUOTE) return undefined;
    const keyEnd = skipString(line, at);
    if (keyEnd === -1 || line.charCodeAt(keyEnd) !== COLON) return undefined;
    if (keyEnd - at === 9 && line.startsWith('"partial"', at)) {
      partialAt = keyEnd + 1;
    } else {
      const valueEnd = skipValue(line, keyEnd + 1);
      if (valueEnd === -1 || line.charCodeAt(valueEnd) !== COMMA) return undefined;
      at = valueEnd + 1;
    }
  }
  // The rest must be  M + '},"message":' + M + '}'  with the same M twice.
  const length = (line.length - partialAt - MESSAGE_UPDATE_TAIL.length - 1) / 2;
  if (!Number.isInteger(length) || length <= 0 || line.charCodeAt(line.length - 1) !== CLOSE_BRACE) return undefined;
  const messageAt = partialAt + length + MESSAGE_UPDATE_TAIL.length;
  if (!line.startsWith(MESSAGE_UPDATE_TAIL, partialAt + length)) return undefined;
  const snapshot = line.slice(messageAt, line.length - 1);
  if (line.slice(partialAt, partialAt + length) !== snapshot) return undefined;
  let envelope: unknown;
  let message: unknown;
  try {
    // The envelope with a placeholder for `partial`, and the message once (a slice: no copy).
    envelope = JSON.parse(`${line.slice(0, partialAt)}0}}`);
    message = JSON.parse(snapshot);
  } catch {
    return undefined;
  }
  const event = (envelope as { assistantMessageEvent?: unknown }).assistantMessageEvent;
  if (typeof event !== 'object' || event === null || (event as { partial?: unknown }).partial !== 0) return undefined;
  (event as { partial: unknown }).partial = message;
  (envelope as { message: unknown }).message = message;
  return envelope;
}

/** The index just after the JSON string that starts at `at` (a quote), or -1. */
function skipString(text: string, at: number): number {
  let quote = text.indexOf('"', at + 1);
  while (quote !== -1) {
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes += 1;
    if (backslashes % 2 === 0) return quote + 1;
    quote = text.indexOf('"', quote + 1);
  }
  return -1;
}

/**
 * The index just after the JSON value that starts at `at`, or -1. Exact for valid JSON; for
 * anything else the caller's final `JSON.parse` decides.
 */
function skipValue(text: string, at: number): number {
  const first = text.charCodeAt(at);
  if (first === QUOTE) return skipString(text, at);
  if (first === 0x7b || first === 0x5b) {
    let depth = 0;
    for (let i = at; i < text.length; i += 1) {
      const code = text.charCodeAt(i);
      if (code === QUOTE) {
        const end = skipString(text, i);
        if (end === -1) return -1;
        i = end - 1;
      } else if (code === 0x7b || code === 0x5b) {
        depth += 1;
      } else if (code === CLOSE_BRACE || code === 0x5d) {
        depth -= 1;
        if (depth === 0) return i + 1;
      }
    }
    return -1;
  }
  // A number, true, false or null: up to the next separator.
  let i = at;
  while (i < text.length) {
    const code = text.charCodeAt(i);
    if (code === COMMA || code === CLOSE_BRACE || code === 0x5d || code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09) break;
    i += 1;
  }
  return i === at ? -1 : i;
}
