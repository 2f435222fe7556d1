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

type Schemas = typeof codexEventSchemas;
/** A known Codex line, after validation. */
export type CodexEvent = { [K in keyof Schemas]: z.infer<Schemas[K]> }[keyof Schemas];
export type CodexEventOf<T extends CodexEvent['type']> = Extract<CodexEvent, { type: T }>;
/** An item of an `item.*` line: its `id` and `type`, and whatever else its type carries. */
export type CodexItem = z.infer<typeof Item>;
/** Codex's token counts (`turn.completed.usage`). */
export type CodexUsage = z.infer<typeof Usage>;
