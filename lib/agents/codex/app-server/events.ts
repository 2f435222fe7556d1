import * as z from 'zod';

/**
 * The `codex app-server` messages the session reads. They are JSON-RPC without the `jsonrpc`
 * field: notifications `{ method, params }`, responses `{ id, result | error }`, and requests of
 * the server `{ id, method, params }`. `parseJsonRpcLine` gives each a `type`, so the pipeline
 * reads them like any agent's events: a notification's type is its method, a response's is
 * `response`, a server request's `server-request`. Schemas are loose: only what is read is checked.
 */

const Item = z.looseObject({ id: z.string(), type: z.string() });
const Notification = <M extends string, P extends z.ZodType>(method: M, params: P) => z.looseObject({ type: z.literal(method), params });

/** Codex's token counts in `thread/tokenUsage/updated` (`last`: the last model request). */
const TokenCounts = z.looseObject({
  inputTokens: z.number(),
  cachedInputTokens: z.number().optional(),
  cacheWriteInputTokens: z.number().optional(),
  outputTokens: z.number(),
});

/**
 * The zod schemas of the `codex app-server` messages agent-rx reads, by the kind
 * {@link parseJsonRpcLine} gives each; loose: only what is read is checked.
 */
export const appServerEventSchemas = {
  'item/started': Notification('item/started', z.looseObject({ item: Item })),
  'item/completed': Notification('item/completed', z.looseObject({ item: Item })),
  'item/agentMessage/delta': Notification('item/agentMessage/delta', z.looseObject({ itemId: z.string(), delta: z.string() })),
  'item/reasoning/summaryTextDelta': Notification(
    'item/reasoning/summaryTextDelta',
    z.looseObject({ itemId: z.string(), delta: z.string(), summaryIndex: z.number().optional() }),
  ),
  'item/commandExecution/outputDelta': Notification('item/commandExecution/outputDelta', z.looseObject({ itemId: z.string(), delta: z.string() })),
  'thread/tokenUsage/updated': Notification('thread/tokenUsage/updated', z.looseObject({ tokenUsage: z.looseObject({ last: TokenCounts }) })),
  'turn/started': Notification('turn/started', z.looseObject({ turn: z.looseObject({ id: z.string() }) })),
  'turn/completed': Notification(
    'turn/completed',
    z.looseObject({
      turn: z.looseObject({
        id: z.string(),
        status: z.string(),
        error: z.looseObject({ message: z.string() }).nullable().optional(),
      }),
    }),
  ),
  warning: Notification('warning', z.looseObject({ message: z.string() })),
  error: Notification('error', z.looseObject({ error: z.looseObject({ message: z.string() }), willRetry: z.boolean().optional() })),
  response: z.looseObject({
    type: z.literal('response'),
    id: z.union([z.string(), z.number()]),
    error: z.looseObject({ code: z.number().optional(), message: z.string() }).optional(),
  }),
  'server-request': z.looseObject({ type: z.literal('server-request'), id: z.union([z.string(), z.number()]), method: z.string() }),
} as const;

type Schemas = typeof appServerEventSchemas;
/** A known `codex app-server` message, after validation. */
export type AppServerEvent = { [K in keyof Schemas]: z.infer<Schemas[K]> }[keyof Schemas];
export type AppServerEventOf<T extends AppServerEvent['type']> = Extract<AppServerEvent, { type: T }>;
