import * as z from 'zod';

/**
 * The Codex `exec --experimental-json` lines the dialect reads, as loose zod schemas: the CLI adds
 * fields between versions, and only what is read is checked. Items (`item.started`, `item.updated`,
 * `item.completed`) are checked as far as every item type shares (`id`, `type`); the fields of each
 * item type are read defensively, so an item type added by a later Codex passes through.
 */

const Item = z.looseObject({ id: z.string(), type: z.string() });

const Usage = z.looseObject({
  input_tokens: z.number(),
  cached_input_tokens: z.number().optional(),
  cache_write_input_tokens: z.number().optional(),
  output_tokens: z.number(),
  reasoning_output_tokens: z.number().optional(),
});

/**
 * The zod schemas of the Codex lines agent-rx reads (`codex exec --experimental-json`), by their
 * `type`; loose: only what is read is checked. For `parseJsonLine`'s `schemas` (from `agent-rx`).
 */
export const codexEventSchemas = {
  'thread.started': z.looseObject({ type: z.literal('thread.started'), thread_id: z.string() }),
  'turn.completed': z.looseObject({ type: z.literal('turn.completed'), usage: Usage.optional() }),
  'turn.failed': z.looseObject({ type: z.literal('turn.failed'), error: z.looseObject({ message: z.string() }) }),
  'item.started': z.looseObject({ type: z.literal('item.started'), item: Item }),
  'item.updated': z.looseObject({ type: z.literal('item.updated'), item: Item }),
  'item.completed': z.looseObject({ type: z.literal('item.completed'), item: Item }),
  error: z.looseObject({ type: z.literal('error'), message: z.string() }),
} as const;

/**
 * Every type Codex's `exec --json` is known to print (0.171): its events, and an item's type as
 * `item:<type>` (`item:agent_message`), the item events being read by their item. A `turn.started`
 * and a `collab_tool_call` item (a sub-agent's call) are left aside on purpose. Another type is an
 * `agent.warning`, once per type.
 */
export const CODEX_EVENT_TYPES: readonly string[] = [
  'thread.started',
  'turn.started',
  'turn.completed',
  'turn.failed',
  'error',
  ...['agent_message', 'reasoning', 'command_execution', 'file_change', 'mcp_tool_call', 'collab_tool_call', 'web_search', 'todo_list', 'error'].map((type) => `item:${type}`),
];

/** The type of a Codex `exec` event as {@link CODEX_EVENT_TYPES} names it: an item event's is its item's. */
export function codexEventType(event: { readonly type: string; readonly [key: string]: unknown }): string {
  const item = event['item'];
  const itemType = event.type.startsWith('item.') && typeof item === 'object' && item !== null ? (item as { readonly type?: unknown }).type : undefined;
  return typeof itemType === 'string' ? `item:${itemType}` : event.type;
}

type Schemas = typeof codexEventSchemas;
/** A known Codex line, after validation. */
export type CodexEvent = { [K in keyof Schemas]: z.infer<Schemas[K]> }[keyof Schemas];
export type CodexEventOf<T extends CodexEvent['type']> = Extract<CodexEvent, { type: T }>;
/** An item of an `item.*` line: its `id` and `type`, and whatever else its type carries. */
export type CodexItem = z.infer<typeof Item>;
/** Codex's token counts (`turn.completed.usage`). */
export type CodexUsage = z.infer<typeof Usage>;
