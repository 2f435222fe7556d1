import type { PermissionDecision } from '../../messages.js';
import type { AgentEvent } from '../../operators/items.js';
import type { PermissionAsk, ProtocolReaction } from '../../operators/session-protocol.js';
import { field, stringOf } from '../shared/events.js';
import { claudeTools } from './tools.js';

/** What Claude Code is told of a tool the host denied (the tool's result, which the model reads). */
export const CLAUDE_DENIED_MESSAGE = 'denied by the host';

/**
 * A control request of Claude Code (`{"type":"control_request","request_id","request":{"subtype",…}}`):
 * `can_use_tool` (it asks before a tool, with `--permission-prompt-tool stdio`) is the session's
 * permission request; any other is answered with an error at once, so that the CLI never waits for
 * an answer that would not come (what claude-agent-sdk does with a request it does not know).
 */
export function claudeControlRequest(event: AgentEvent): ProtocolReaction {
  const requestId = stringOf(event['request_id']);
  const request = field(event, 'request');
  const subtype = stringOf(field(request, 'subtype'));
  if (requestId === undefined) return {};
  if (subtype !== 'can_use_tool' || typeof request !== 'object' || request === null) {
    return { outputs: [{ type: 'write', line: controlError(requestId, `agent-rx does not answer Claude Code's ${subtype ?? 'unnamed'} control requests`) }] };
  }
  const asked = request as Readonly<Record<string, unknown>>;
  const rules = sessionRules(asked['permission_suggestions']);
  return {
    facts: [
      {
        type: 'permission',
        request: permissionAsk(asked, rules.length > 0),
        answer: (decision) => ({ outputs: [{ type: 'write', line: controlSuccess(requestId, permissionResult(decision, asked['input'], rules)) }] }),
      },
    ],
  };
}

/** The request as the session says it: the tool, its kind and summary in Claude Code's vocabulary, its input. */
function permissionAsk(request: Readonly<Record<string, unknown>>, always: boolean): PermissionAsk {
  const tool = stringOf(request['tool_name']) ?? 'unknown';
  const input = request['input'] ?? null;
  const toolCallId = stringOf(request['tool_use_id']);
  return {
    ...(toolCallId === undefined ? {} : { toolCallId }),
    tool,
    kind: claudeTools.kind(tool),
    title: claudeTools.summary(tool, input) ?? stringOf(request['description']) ?? stringOf(request['display_name']) ?? tool,
    input,
    options: always ? ['allow', 'allow-always', 'deny'] : ['allow', 'deny'],
  };
}

/**
 * The rules Claude Code suggests to allow such a call again without asking (`addRules` with
 * `behavior: "allow"`, e.g. `Bash(touch x.txt)`), kept for this session only: it suggests them for
 * its local settings file (`.claude/settings.local.json` of the project), which would outlive it.
 */
function sessionRules(suggestions: unknown): readonly unknown[] {
  if (!Array.isArray(suggestions)) return [];
  return suggestions
    .filter((suggestion: unknown) => field(suggestion, 'type') === 'addRules' && field(suggestion, 'behavior') === 'allow' && Array.isArray(field(suggestion, 'rules')))
    .map((suggestion: unknown) => ({ ...(suggestion as object), destination: 'session' }));
}

/** Claude Code's `PermissionResult` for a decision: the call allowed with its own input (and the rules to allow it again), or denied. */
function permissionResult(decision: PermissionDecision, input: unknown, rules: readonly unknown[]): unknown {
  switch (decision) {
    case 'allow':
      return { behavior: 'allow', updatedInput: input ?? {} };
    case 'allow-always':
      return { behavior: 'allow', updatedInput: input ?? {}, updatedPermissions: rules };
    case 'deny':
    case 'deny-always':
      return { behavior: 'deny', message: CLAUDE_DENIED_MESSAGE };
  }
}

function controlSuccess(requestId: string, response: unknown): unknown {
  return { type: 'control_response', response: { subtype: 'success', request_id: requestId, response } };
}

function controlError(requestId: string, error: string): unknown {
  return { type: 'control_response', response: { subtype: 'error', request_id: requestId, error } };
}
