import { isObservable, type ObservableInput } from 'rxjs';
import { PERMISSION_DECISIONS, type PermissionDecision, type PermissionRequested, type ToolKind } from '../messages.js';

/**
 * A preset answer to every permission request: `allow-all`; `allow-reads` (tools that only read:
 * kinds `read`, `search` and `think`; nothing that edits, deletes, moves, executes or fetches);
 * `deny-all`; `ask` (a session only: each request waits for a `permission` command, and is denied
 * at the deadline).
 */
export type PermissionPreset = 'allow-all' | 'allow-reads' | 'deny-all' | 'ask';

/** The presets, in the order the command line lists them. */
export const PERMISSION_PRESETS: readonly PermissionPreset[] = ['allow-all', 'allow-reads', 'deny-all', 'ask'];

/**
 * The caller's decision for one request: a decision, a promise of one, or an Observable whose first
 * value is the decision (one that completes without a value leaves the request to the deadline).
 * `signal` aborts when the request is settled otherwise (a command answered it, the deadline passed,
 * the turn or run ended). What it throws (or its promise or Observable errors with) goes to the
 * stream's error channel, as every user callback's does, and the agent is stopped.
 *
 * @example
 * const permission: PermissionCallback = (request) => (request.kind === 'execute' && request.title.startsWith('rm ') ? 'deny' : 'allow');
 */
export type PermissionCallback = (request: PermissionRequested, signal: AbortSignal) => PermissionDecision | ObservableInput<PermissionDecision>;

/** How a run or session answers the agent's permission requests: a preset, or the caller's callback. */
export type PermissionPolicy = PermissionPreset | PermissionCallback;

/** How a run or session answers the agent's permission requests. */
export interface PermissionOptions {
  /**
   * Who decides when the agent asks before using a tool: a preset or a callback. Each request is
   * said (`permission.requested`) and resolved once (`permission.resolved`), before its turn or run
   * ends. Default: the agent's own (the README's table says, per agent).
   */
  readonly permission?: PermissionPolicy;
  /** How long `ask` or the callback may take before the request is denied (`by: 'deadline'`). Default 300000 (5 minutes). */
  readonly permissionTimeoutMs?: number;
}

/**
 * How a run answers the agent's permission requests: as a session does, but without `ask` (a run
 * takes no commands). A run given `permission` goes over the agent's interactive mode, where it
 * can ask (a one-prompt session: the README's table says which, per agent).
 */
export interface RunPermissionOptions {
  /** Who decides when the agent asks before using a tool: `allow-all`, `allow-reads`, `deny-all` or a callback. */
  readonly permission?: Exclude<PermissionPreset, 'ask'> | PermissionCallback;
  /** How long the callback may take before the request is denied (`by: 'deadline'`). Default 300000 (5 minutes). */
  readonly permissionTimeoutMs?: number;
}

/** The kinds `allow-reads` allows. */
export const READ_ONLY_KINDS: readonly ToolKind[] = ['read', 'search', 'think'];

/** A preset's decision for a request (`ask` decides nothing: `undefined`). */
export function presetDecision(preset: PermissionPreset, request: Pick<PermissionRequested, 'kind'>): PermissionDecision | undefined {
  switch (preset) {
    case 'allow-all':
      return 'allow';
    case 'deny-all':
      return 'deny';
    case 'allow-reads':
      return READ_ONLY_KINDS.includes(request.kind) ? 'allow' : 'deny';
    case 'ask':
      return undefined;
  }
}

/** Whether a value is a {@link PermissionPolicy}. */
export function isPermissionPolicy(value: unknown): value is PermissionPolicy {
  return typeof value === 'function' || (typeof value === 'string' && (PERMISSION_PRESETS as readonly string[]).includes(value));
}

/** Whether a value is a {@link PermissionDecision}. */
export function isPermissionDecision(value: unknown): value is PermissionDecision {
  return typeof value === 'string' && (PERMISSION_DECISIONS as readonly string[]).includes(value);
}

/** Whether a callback's result is to be waited on (a promise, an Observable, an iterable) rather than taken as it is. */
export function isAwaitedAnswer(value: unknown): value is ObservableInput<unknown> {
  if (isObservable(value)) return true;
  if (typeof value !== 'object' || value === null) return false;
  return typeof (value as { then?: unknown }).then === 'function' || Symbol.asyncIterator in value || Symbol.iterator in value;
}

/** The error of a callback's answer that is not a decision. */
export function notADecision(value: unknown, requestId: string): TypeError {
  const given = value === undefined ? 'nothing' : typeof value === 'string' ? `"${value}"` : typeof value;
  return new TypeError(`agent-rx: the permission callback gave ${given} for request ${requestId}: not allow, allow-always, deny or deny-always`);
}
