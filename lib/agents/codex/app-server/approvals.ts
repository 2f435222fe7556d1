import type { PermissionDecision } from '../../../messages.js';
import type { PermissionAsk } from '../../../operators/session-protocol.js';
import { field, stringOf } from '../../shared/events.js';
import { codexTools } from '../tools.js';
import { commandOf } from './dialect.js';

/** An approval request of `codex app-server`, as the permission channel asks it, and Codex's answer to each decision. */
export interface CodexApproval {
  readonly request: PermissionAsk;
  /** The JSON-RPC `result` that answers the request with a decision. */
  result(decision: PermissionDecision): unknown;
}

/** What the session remembers of the thread's items: the changes of the file changes started and not completed, by item id. */
export type FileChangesById = ReadonlyMap<string, unknown>;

/** Codex's v2 decisions, by the channel's (`cancel` would also interrupt the turn: a deny is `decline`, and Codex keeps no refusal). */
const V2_DECISIONS: Readonly<Record<PermissionDecision, string>> = { allow: 'accept', 'allow-always': 'acceptForSession', deny: 'decline', 'deny-always': 'decline' };

const DENIED_BY_HOST = { denied: { rejection: 'denied by the host' } };
/** The legacy `ReviewDecision`s, by the channel's. */
const LEGACY_DECISIONS: Readonly<Record<PermissionDecision, unknown>> = { allow: 'approved', 'allow-always': 'approved_for_session', deny: DENIED_BY_HOST, 'deny-always': DENIED_BY_HOST };

/** What Codex offers when it does not say: once, for the session, or no. */
const ALL_OFFERED: readonly PermissionDecision[] = ['allow', 'allow-always', 'deny'];

/**
 * Reads a request of the server as an approval (`undefined` for one that is not: a question to
 * the user, an elicitation, a call of a client tool).
 * - `item/commandExecution/requestApproval`: tool `command_execution` (kind `execute`), the
 *   command's item id as `toolCallId`, the command as title, input `{ command, cwd }` (and the
 *   `reason` Codex gives). The options are those of its `availableDecisions` (`accept`: allow,
 *   `acceptForSession`: allow-always), a deny always among them;
 * - `item/fileChange/requestApproval`: tool `file_change` (kind `edit`), input `{ changes }` from
 *   the `fileChange` item Codex started before it asked, the changed paths as title;
 * - `item/permissions/requestApproval` (the model asks for more sandbox: network, folders):
 *   tool `request_permissions`, kind `other`; allow grants what it asked for the turn,
 *   allow-always for the session, a deny grants nothing;
 * - the legacy `execCommandApproval` and `applyPatchApproval`, as the first two;
 * - `mcpServer/elicitation/request` whose `_meta.codex_approval_kind` is `mcp_tool_call` (Codex
 *   asks before it calls an MCP tool whose server's `default_tools_approval_mode` is `prompt`):
 *   tool `mcp__<server>__<tool>` as the stream names the call, input the call's arguments, Codex's
 *   question as title; allow is `accept`, a deny `decline` (the call fails with "user rejected MCP
 *   tool call" and the turn goes on). It names no item, so the request has no `toolCallId`, and
 *   Codex offers no approval for the session: `allow-always` is not among the options. Other
 *   elicitations (a server's own questions) are no approvals.
 *
 * A deny is `decline` (Codex goes on with the turn); `deny-always` too, as Codex keeps no refusal.
 * `allow-always` is `acceptForSession` (Codex asks no more for the same command or files in this
 * thread); where Codex does not offer it, an `allow-always` answers `accept`, once: its other
 * lasting approval (an exec-policy amendment) is written into Codex's rules, beyond the session.
 */
export function codexApproval(method: string, params: unknown, fileChanges: FileChangesById): CodexApproval | undefined {
  switch (method) {
    case 'item/commandExecution/requestApproval':
      return commandApproval(params);
    case 'item/fileChange/requestApproval':
      return fileChangeApproval(params, fileChanges);
    case 'item/permissions/requestApproval':
      return permissionsApproval(params);
    case 'execCommandApproval':
      return legacyCommandApproval(params);
    case 'applyPatchApproval':
      return legacyPatchApproval(params);
    case 'mcpServer/elicitation/request':
      return mcpToolApproval(params);
    default:
      return undefined;
  }
}

function ask(tool: string, toolCallId: string | undefined, title: string, input: unknown, options: readonly PermissionDecision[] = ALL_OFFERED): PermissionAsk {
  return { ...(toolCallId === undefined ? {} : { toolCallId }), tool, kind: codexTools.kind(tool), title: title === '' ? tool : title, input, options: [...options] };
}

/** `reason` when Codex gives one. */
function reasonOf(params: unknown): { readonly reason?: string } {
  const reason = stringOf(field(params, 'reason'));
  return reason === undefined || reason === '' ? {} : { reason };
}

function commandApproval(params: unknown): CodexApproval {
  const record = (typeof params === 'object' && params !== null ? params : {}) as Readonly<Record<string, unknown>>;
  const command = commandOf(record);
  const cwd = stringOf(record['cwd']);
  const line = codexTools.summary('command_execution', { command: stringOf(record['command']) ?? command }) ?? command;
  const offered = offeredOf(record['availableDecisions']);
  const input = { command, ...(cwd === undefined ? {} : { cwd }), ...reasonOf(params) };
  return {
    request: ask('command_execution', stringOf(record['itemId']), line, input, offered),
    result: (decision) => ({ decision: V2_DECISIONS[decision === 'allow-always' && !offered.includes('allow-always') ? 'allow' : decision] }),
  };
}

/** The decisions Codex's `availableDecisions` allow (all, when it does not say); a deny is always possible. */
function offeredOf(available: unknown): readonly PermissionDecision[] {
  if (!Array.isArray(available)) return ALL_OFFERED;
  const offered: PermissionDecision[] = [];
  if (available.includes('accept')) offered.push('allow');
  if (available.includes('acceptForSession')) offered.push('allow-always');
  return [...offered, 'deny'];
}

function fileChangeApproval(params: unknown, fileChanges: FileChangesById): CodexApproval {
  const itemId = stringOf(field(params, 'itemId'));
  const known = itemId === undefined ? undefined : fileChanges.get(itemId);
  const changes = (Array.isArray(known) ? known : []).map((change) => ({ path: field(change, 'path'), kind: field(field(change, 'kind'), 'type') }));
  const grantRoot = stringOf(field(params, 'grantRoot'));
  const input = { changes, ...(grantRoot === undefined ? {} : { grantRoot }), ...reasonOf(params) };
  return {
    request: ask('file_change', itemId, pathsOf(changes) || (grantRoot ?? ''), input),
    result: (decision) => ({ decision: V2_DECISIONS[decision] }),
  };
}

function pathsOf(changes: readonly { readonly path: unknown }[]): string {
  return changes.flatMap((change) => stringOf(change.path) ?? []).join(', ');
}

function permissionsApproval(params: unknown): CodexApproval {
  const permissions = field(params, 'permissions');
  const cwd = stringOf(field(params, 'cwd'));
  const network = field(permissions, 'network');
  const fileSystem = field(permissions, 'fileSystem');
  const granted = { ...(network === null || network === undefined ? {} : { network }), ...(fileSystem === null || fileSystem === undefined ? {} : { fileSystem }) };
  const reason = reasonOf(params).reason;
  return {
    request: ask('request_permissions', stringOf(field(params, 'itemId')), reason ?? describePermissions(network, fileSystem), { permissions, ...(cwd === undefined ? {} : { cwd }), ...reasonOf(params) }),
    result: (decision) => {
      switch (decision) {
        case 'allow':
          return { permissions: granted, scope: 'turn' };
        case 'allow-always':
          return { permissions: granted, scope: 'session' };
        default:
          return { permissions: {}, scope: 'turn' };
      }
    },
  };
}

/** What more sandbox the model asks for, in a few words. */
function describePermissions(network: unknown, fileSystem: unknown): string {
  const parts: string[] = [];
  if (field(network, 'enabled') === true) parts.push('network access');
  for (const [key, words] of [
    ['write', 'write'],
    ['read', 'read'],
  ] as const) {
    const paths = field(fileSystem, key);
    if (Array.isArray(paths) && paths.length > 0) parts.push(`${words} ${paths.filter((path) => typeof path === 'string').join(', ')}`);
  }
  return parts.length === 0 ? 'more permissions' : parts.join('; ');
}

function mcpToolApproval(params: unknown): CodexApproval | undefined {
  const meta = field(params, '_meta');
  const server = stringOf(field(params, 'serverName'));
  const toolName = stringOf(field(meta, 'tool_name'));
  if (field(meta, 'codex_approval_kind') !== 'mcp_tool_call' || server === undefined || toolName === undefined) return undefined;
  const name = `mcp__${server}__${toolName}`;
  const input = field(meta, 'tool_params') ?? {};
  return {
    request: ask(name, undefined, stringOf(field(params, 'message')) ?? name, input, ['allow', 'deny']),
    result: (decision) => (decision === 'allow' || decision === 'allow-always' ? { action: 'accept', content: {}, _meta: null } : { action: 'decline', content: null, _meta: null }),
  };
}

function legacyCommandApproval(params: unknown): CodexApproval {
  const argv = field(params, 'command');
  const command = Array.isArray(argv) ? argv.filter((part): part is string => typeof part === 'string') : [];
  // `["bash", "-lc", "<line>"]`: the line.
  const line = command.length === 3 && /^(?:\/\S*\/)?(?:ba|z)?sh$/.test(command[0] ?? '') && /^-l?c$/.test(command[1] ?? '') ? (command[2] ?? '') : command.join(' ');
  const cwd = stringOf(field(params, 'cwd'));
  return {
    request: ask('command_execution', stringOf(field(params, 'callId')), line, { command: line, ...(cwd === undefined ? {} : { cwd }), ...reasonOf(params) }),
    result: (decision) => ({ decision: LEGACY_DECISIONS[decision] }),
  };
}

function legacyPatchApproval(params: unknown): CodexApproval {
  const files = field(params, 'fileChanges');
  const changes = Object.entries(typeof files === 'object' && files !== null ? files : {}).map(([path, change]) => ({ path, kind: field(change, 'type') }));
  return {
    request: ask('file_change', stringOf(field(params, 'callId')), pathsOf(changes), { changes, ...reasonOf(params) }),
    result: (decision) => ({ decision: LEGACY_DECISIONS[decision] }),
  };
}
