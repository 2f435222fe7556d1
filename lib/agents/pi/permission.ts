import type { PermissionDecision } from '../../messages.js';
import type { AgentEvent } from '../../operators/items.js';
import type { PermissionAsk } from '../../operators/session-protocol.js';
import { parseJsonObject } from '../shared/json-object.js';
import { stringOf } from '../shared/events.js';
import { piTools } from './tools.js';

/**
 * The title of the dialogs of agent-rx's pi extension (`setup/permission-extension/`): it asks
 * before each tool call with a `confirm` whose message is the call as JSON.
 */
export const PI_PERMISSION_TITLE = 'agent-rx permission';

/** One of the extension's questions: the dialog's id (for the answer) and the request. */
export interface PiPermissionQuestion {
  readonly id: string;
  readonly request: PermissionAsk;
}

/**
 * The extension's question in an `extension_ui_request` line, or `undefined` for any other line
 * (another extension's dialog, a notification).
 *
 * @example
 * piPermissionQuestion({ type: 'extension_ui_request', id: 'u1', method: 'confirm', title: PI_PERMISSION_TITLE,
 *   message: '{"toolCallId":"call_1","tool":"bash","input":{"command":"ls"}}' });
 * // { id: 'u1', request: { toolCallId: 'call_1', tool: 'bash', kind: 'execute', title: 'ls', input: { command: 'ls' }, options: ['allow', 'deny'] } }
 */
export function piPermissionQuestion(event: AgentEvent): PiPermissionQuestion | undefined {
  if (event.type !== 'extension_ui_request' || event['method'] !== 'confirm' || event['title'] !== PI_PERMISSION_TITLE) return undefined;
  const id = stringOf(event['id']);
  const call = parseJsonObject(stringOf(event['message']) ?? '');
  if (id === undefined || call === undefined) return undefined;
  const tool = stringOf(call['tool']) ?? 'unknown';
  const toolCallId = stringOf(call['toolCallId']);
  const input = call['input'] ?? null;
  return {
    id,
    request: {
      ...(toolCallId === undefined ? {} : { toolCallId }),
      tool,
      kind: piTools.kind(tool),
      title: piTools.summary(tool, input) ?? tool,
      input,
      // A yes or a no: the extension remembers nothing, so pi has no "always".
      options: ['allow', 'deny'],
    },
  };
}

/** The `extension_ui_response` line that answers a question: yes for an allow, no for a deny. */
export function piPermissionAnswer(id: string, decision: PermissionDecision): { readonly type: 'extension_ui_response'; readonly id: string; readonly confirmed: boolean } {
  return { type: 'extension_ui_response', id, confirmed: decision === 'allow' || decision === 'allow-always' };
}
