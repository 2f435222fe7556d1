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

/**
 * The requests `codex app-server` (0.171) is known to make of its client: approvals, which a
 * session asks through its permission channel, and the others, which it declines.
 */
export const APP_SERVER_REQUESTS: readonly string[] = [
  'item/commandExecution/requestApproval', 'item/fileChange/requestApproval', 'item/tool/requestUserInput',
  'mcpServer/elicitation/request', 'item/permissions/requestApproval', 'item/tool/call',
  'account/chatgptAuthTokens/refresh', 'attestation/generate', 'applyPatchApproval', 'execCommandApproval',
];

/**
 * Every type `codex app-server` (0.171) is known to send: its notifications by method (the item
 * events by their item's type, `item:agentMessage`), its requests by method, and `response`. Most
 * are left aside on purpose (a thread's status and settings, rate limits, realtime audio, file
 * watches, …). Another type is an `agent.warning`, once per type; a request of an unknown method
 * is also answered with an error.
 */
export const APP_SERVER_TYPES: readonly string[] = [
  'response',
  ...APP_SERVER_REQUESTS,
  'error', 'thread/started', 'thread/status/changed', 'thread/readState/changed', 'thread/archived',
  'thread/deleted', 'thread/unarchived', 'thread/closed', 'thread/reverted', 'skills/changed', 'thread/name/updated',
  'thread/section/changed', 'thread/attachment/updated', 'thread/goal/updated', 'thread/prediction/updated',
  'thread/goal/cleared', 'thread/queue/changed', 'project/changed', 'thread/project/updated',
  'thread/environment/connected', 'thread/environment/disconnected', 'thread/settings/updated',
  'thread/tokenUsage/updated', 'turn/started', 'hook/started', 'turn/completed', 'hook/completed',
  'turn/diff/updated', 'turn/plan/updated', 'item/autoApprovalReview/started', 'item/autoApprovalReview/completed',
  'autoApprovalReview/strictReviewRequired', 'item/agentMessage/delta', 'item/plan/delta',
  'command/exec/outputDelta', 'process/outputDelta', 'thread/search/partial', 'process/exited',
  'item/commandExecution/outputDelta', 'item/commandExecution/terminalInteraction', 'item/fileChange/outputDelta',
  'item/fileChange/patchUpdated', 'serverRequest/resolved', 'item/mcpToolCall/progress',
  'mcpServer/oauthLogin/completed', 'mcpServer/startupStatus/updated', 'mcpServer/event/stream/notification',
  'account/updated', 'account/gatewayOAuth/changed', 'account/rateLimits/updated', 'app/list/updated',
  'remoteControl/status/changed', 'externalAgentConfig/import/progress', 'externalAgentConfig/import/completed',
  'fs/changed', 'item/reasoning/summaryTextDelta', 'item/reasoning/summaryPartAdded', 'item/reasoning/textDelta',
  'thread/compacted', 'model/rerouted', 'model/verification', 'modelProvider/authRecoveryStarted',
  'modelProvider/authRecoveryCompleted', 'turn/moderationMetadata', 'model/safetyBuffering/updated', 'warning',
  'guardianWarning', 'deprecationNotice', 'configWarning', 'fuzzyFileSearch/sessionUpdated',
  'fuzzyFileSearch/sessionCompleted', 'thread/realtime/started', 'thread/realtime/itemAdded',
  'thread/realtime/item/started', 'thread/realtime/item/transcript/delta', 'thread/realtime/item/completed',
  'thread/realtime/transcript/delta', 'thread/realtime/transcript/done', 'thread/realtime/outputAudio/delta',
  'thread/realtime/sdp', 'thread/realtime/error', 'thread/realtime/closed', 'windows/worldWritableWarning',
  'windowsSandbox/setupCompleted', 'account/login/completed',
  ...[
    'userMessage', 'hookPrompt', 'agentMessage', 'functionCallOutput', 'plan', 'reasoning', 'commandExecution',
    'fileChange', 'mcpToolCall', 'dynamicToolCall', 'collabAgentToolCall', 'subAgentActivity', 'webSearch',
    'imageView', 'sleep', 'imageGeneration', 'enteredReviewMode', 'exitedReviewMode', 'contextCompaction',
  ].map((type) => `item:${type}`),
];

/** The type of a `codex app-server` message as {@link APP_SERVER_TYPES} names it: a request's method, an item event's item type. */
export function appServerEventType(event: { readonly type: string; readonly [key: string]: unknown }): string {
  if (event.type === 'server-request') return typeof event['method'] === 'string' ? event['method'] : event.type;
  if (event.type !== 'item/started' && event.type !== 'item/completed') return event.type;
  const params = event['params'];
  const item = typeof params === 'object' && params !== null ? (params as { readonly item?: unknown }).item : undefined;
  const itemType = typeof item === 'object' && item !== null ? (item as { readonly type?: unknown }).type : undefined;
  return typeof itemType === 'string' ? `item:${itemType}` : event.type;
}

type Schemas = typeof appServerEventSchemas;
/** A known `codex app-server` message, after validation. */
export type AppServerEvent = { [K in keyof Schemas]: z.infer<Schemas[K]> }[keyof Schemas];
export type AppServerEventOf<T extends AppServerEvent['type']> = Extract<AppServerEvent, { type: T }>;
