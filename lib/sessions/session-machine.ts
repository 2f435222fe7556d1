import {
  SessionCommandSchema,
  type BudgetExceeded,
  type CliMessage,
  type FailureReason,
  type InputKind,
  type OutputIssue,
  type PermissionDecision,
  type PermissionRequested,
  type PermissionResolver,
  type SessionMessage,
  type StopReason,
  type TerminalFailed,
  type Timeout,
  type TurnFailed,
  type Usage,
} from '../messages.js';
import { addUsage } from '../operators/add-usage.js';
import { budgetText } from '../operators/budget-text.js';
import type { OutputContract } from '../operators/output-schema.js';
import { preparedPromptOf, type PromptContent } from '../operators/prompt-parts.js';
import type { TraceContext } from '../process/trace-context.js';

/**
 * A session's turns and inputs as a pure state machine: `sessionTransition(state, input)` returns
 * the next state and the effects a shell carries out, in order (messages to emit, what to ask of
 * the agent, timers). No process, protocol or clock in here: the agent's protocol turns the asks
 * into lines, and the agent's lines into the inputs `content`, `turnEnded` and `inputRejected`.
 *
 *   opening ── opened (the commands held so far are read now, in order) ──┐
 *      │                                                                   ▼
 *      │          prompt | steer | follow-up          abort
 *      │ idle ────────────────────────────────► busy ─────────────► aborting
 *      │  ▲ ◄──── turnEnded, nothing queued ────┘ │ ◄── turnEnded ──────┘ (then the next follow-up)
 *      │  │                                       │
 *      │  └─ inputsCompleted ─► ending ◄──────────┘ inputsCompleted, once the turn ended
 *      └── inputsCompleted, nothing held ──┘ │ exited (any phase)
 *                                            ▼
 *                                          ended
 *
 * A session whose agent reports its session before the first prompt starts `opening`: commands
 * are held, unanswered, until the protocol says `opened` (after it announced the session, or
 * once it knows it cannot), so that `session.started` / `session.resumed` comes first whenever the
 * first command does. A session that ends while opening drops what it held (`session-ended`).
 *
 * Invariants it keeps: turns never overlap and each ends exactly once; content is emitted only
 * inside a turn; a turn still running when the process ends gets its `turn.failed` before the
 * terminal; every command gets `input.accepted` or `input.dropped`; one terminal, last.
 */
export type SessionPhase = 'opening' | 'idle' | 'busy' | 'aborting' | 'ending' | 'ended';

/** A prompt, follow-up or steer as the machine keeps it. */
export interface SessionInput {
  readonly kind: Exclude<InputKind, 'abort' | 'invalid'>;
  readonly text: string;
  /**
   * The prompt as the agent is given it, when the command had parts or a schema (its text first;
   * the schema's instruction last for an agent that is told it in the prompt); else `text` alone.
   */
  readonly content?: PromptContent;
  /** The schema the answer of the turn it starts must satisfy. */
  readonly output?: OutputContract;
  readonly commandId?: string;
}

export interface SessionState {
  readonly phase: SessionPhase;
  /** The running turn while busy or aborting; else the last one (0 before the first). */
  readonly turn: number;
  /** Kept by agent-rx, each sent as a later turn's prompt. */
  readonly followUps: readonly SessionInput[];
  /** The commands that came while opening, in order, read once the session is open. */
  readonly held: readonly unknown[];
  /** The command stream completed: the session ends once no turn runs. */
  readonly inputsDone: boolean;
  /** Why the running turn is being aborted. */
  readonly aborting: { readonly reason: 'aborted' | 'timeout'; readonly timeout?: Timeout } | { readonly reason: 'budget'; readonly budget: BudgetExceeded } | null;
  /** The stop reason of the last completed turn, for the session's `terminal.completed`. */
  readonly lastStopReason: StopReason | undefined;
  /** The turns' usage so far. */
  readonly usage: Usage | undefined;
  /** The id of the agent's session, from its `session.*` message. */
  readonly sessionId: string | undefined;
  /** The running turn's permission requests not resolved yet, in the order they came. */
  readonly permissions: readonly PendingPermission[];
}

/** A permission request waiting for its decision. */
export interface PendingPermission {
  readonly requestId: string;
  /** The decisions the agent accepts. */
  readonly options: readonly PermissionDecision[];
}

export const INITIAL_SESSION_STATE: SessionState = {
  phase: 'idle',
  turn: 0,
  followUps: [],
  held: [],
  inputsDone: false,
  aborting: null,
  lastStopReason: undefined,
  usage: undefined,
  sessionId: undefined,
  permissions: [],
};

/** The first state of a session whose agent reports its session before the first prompt: commands wait for `opened`. */
export const OPENING_SESSION_STATE: SessionState = { ...INITIAL_SESSION_STATE, phase: 'opening' };

/** How the agent ended a turn, as its protocol reads it. */
export type TurnOutcome =
  | { readonly kind: 'completed'; readonly stopReason: StopReason; readonly agentStopReason?: string; readonly usage?: Usage }
  | {
      readonly kind: 'failed';
      readonly reason: Extract<FailureReason, 'agent-error' | 'aborted' | 'output-schema' | 'budget'>;
      readonly message: string;
      readonly agentError?: string;
      readonly httpStatus?: number;
      readonly retryAfterMs?: number;
      /** With `output-schema` (the agent gave up on a schema it was given natively): how the answer failed it. */
      readonly outputIssues?: readonly OutputIssue[];
      /** With `output-schema`: the last answer it tried. */
      readonly answer?: string;
    };

export type SessionInputEvent =
  /** A value from the command stream; checked here (an invalid one is dropped, in the stream). */
  | { readonly type: 'command'; readonly command: unknown }
  /** The command stream completed. */
  | { readonly type: 'inputsCompleted' }
  /** The agent can take turns: its session was announced, or it never will be (an opening session reads its held commands now). */
  | { readonly type: 'opened' }
  /** A message of the agent's output: `session.*` always passes, anything else only inside a turn. */
  | { readonly type: 'content'; readonly message: CliMessage }
  /** The agent ended the running turn. */
  | { readonly type: 'turnEnded'; readonly outcome: TurnOutcome }
  /**
   * A steer that did not reach the turn: the agent refused it (`rejected`, the default), it holds
   * a part the agent said it cannot take (`unsupported`), or the abort came first (`aborted`). The
   * turn is not ended by that.
   */
  | { readonly type: 'inputRejected'; readonly input: SessionInput; readonly reason?: 'rejected' | 'aborted' | 'unsupported'; readonly message: string }
  /** No output for `ms` while a turn ran: the turn is aborted, and fails with `timeout`. */
  | { readonly type: 'idleExpired'; readonly ms: number }
  /** A budget was crossed while a turn ran: the turn is aborted, and fails with `budget`. */
  | { readonly type: 'budgetExceeded'; readonly exceeded: BudgetExceeded }
  /** The agent asks before it uses a tool (`requestId` given by the shell, unique in the session). */
  | { readonly type: 'permissionRequested'; readonly request: Omit<PermissionRequested, 'type'> }
  /** A decision for a pending request, from the policy, the caller's callback or the deadline (a late one is ignored). */
  | { readonly type: 'permissionDecided'; readonly requestId: string; readonly decision: PermissionDecision; readonly by: PermissionResolver }
  /**
   * Every pending request is denied now: the protocol cancelled the running prompt by itself
   * (`abort`, the default), or the session is being stopped (`run-end`).
   */
  | { readonly type: 'settlePermissions'; readonly by?: PermissionResolver }
  /**
   * The process is gone. `clean`: it exited the way its agent does at the end of its input;
   * `failure`: the terminal to give when the session did not end that way.
   */
  | { readonly type: 'exited'; readonly clean: boolean; readonly failure: TerminalFailed };

/** A turn's W3C trace context. */
export type TurnTrace = Readonly<TraceContext>;

/** What the session machine asks its shell to do: emit a message, start, steer or abort a turn, watch a limit, end. */
export type SessionEffect =
  | { readonly type: 'emit'; readonly message: SessionMessage }
  /**
   * Start a turn with this input as its prompt. `trace`: the turn's W3C trace context
   * (`traceparent`, `tracestate`), added by the shell when the session is traced, for a protocol
   * that can carry it (ACP's `_meta`).
   */
  | { readonly type: 'start'; readonly turn: number; readonly input: SessionInput; readonly trace?: TurnTrace }
  /** Send this input into the running turn. */
  | { readonly type: 'steer'; readonly turn: number; readonly input: SessionInput }
  /** Ask the agent to end the running turn. */
  | { readonly type: 'abort'; readonly turn: number }
  /** No more turns: end the agent's input, so that it exits. */
  | { readonly type: 'end' }
  /** The idle limit runs while a turn runs (`on`), and not between turns. */
  | { readonly type: 'watchIdle'; readonly on: boolean }
  /** The turn must end within the abort limit (`on`), or the session is stopped. */
  | { readonly type: 'watchAbort'; readonly on: boolean }
  /** The agent must exit within the end limit, or it is stopped. */
  | { readonly type: 'watchEnd' }
  /** Ask the session's permission policy (the preset, the caller's callback, the deadline) to decide this request. */
  | { readonly type: 'decidePermission'; readonly request: PermissionRequested }
  /** Give the agent this decision (and stop deciding it: the callback's signal aborts, the deadline goes). */
  | { readonly type: 'answerPermission'; readonly requestId: string; readonly decision: PermissionDecision }
  /** The stream completes: the terminal was the last message. */
  | { readonly type: 'complete' };

export interface SessionTransition {
  readonly state: SessionState;
  readonly effects: readonly SessionEffect[];
}

const emit = (message: SessionMessage): SessionEffect => ({ type: 'emit', message });

export function sessionTransition(state: SessionState, input: SessionInputEvent): SessionTransition {
  if (state.phase === 'ended') return { state, effects: [] };
  switch (input.type) {
    case 'command':
      if (state.phase === 'opening') return { state: { ...state, held: [...state.held, input.command] }, effects: [] };
      return onCommand(state, input.command);
    case 'inputsCompleted':
      // Nothing to wait for: no turn will run, the agent may go.
      if (state.phase === 'idle' || (state.phase === 'opening' && state.held.length === 0)) return end({ ...state, inputsDone: true }, []);
      return { state: { ...state, inputsDone: true }, effects: [] };
    case 'opened':
      return state.phase === 'opening' ? onOpened(state) : { state, effects: [] };
    case 'content': {
      const message = input.message;
      if (message.type === 'session.started' || message.type === 'session.resumed') {
        // Once: an agent that repeats its header (per turn) is announced the first time.
        if (state.sessionId !== undefined) return { state, effects: [] };
        return { state: { ...state, sessionId: message.sessionId }, effects: [emit(message)] };
      }
      const inTurn = state.phase === 'busy' || state.phase === 'aborting';
      return { state, effects: inTurn ? [emit(message)] : [] };
    }
    case 'turnEnded':
      return onTurnEnded(state, input.outcome);
    case 'inputRejected':
      return { state, effects: [emit(dropped(input.input.kind, input.reason ?? 'rejected', input.message, input.input))] };
    case 'idleExpired': {
      if (state.phase !== 'busy') return { state, effects: [] };
      const settled = settleAll(state, 'abort');
      return {
        state: { ...settled.state, phase: 'aborting', aborting: { reason: 'timeout', timeout: { limit: 'idle', ms: input.ms } } },
        effects: [...settled.effects, { type: 'watchIdle', on: false }, { type: 'abort', turn: state.turn }, { type: 'watchAbort', on: true }],
      };
    }
    case 'budgetExceeded': {
      if (state.phase !== 'busy') return { state, effects: [] };
      const settled = settleAll(state, 'abort');
      return {
        state: { ...settled.state, phase: 'aborting', aborting: { reason: 'budget', budget: input.exceeded } },
        effects: [...settled.effects, { type: 'watchIdle', on: false }, { type: 'abort', turn: state.turn }, { type: 'watchAbort', on: true }],
      };
    }
    case 'permissionRequested':
      return onPermissionRequested(state, input.request);
    case 'permissionDecided':
      return resolvePermission(state, input.requestId, input.decision, input.by);
    case 'settlePermissions':
      return settleAll(state, input.by ?? 'abort');
    case 'exited':
      return onExited(state, input);
  }
}

function onCommand(state: SessionState, value: unknown): SessionTransition {
  const parsed = SessionCommandSchema.safeParse(value);
  if (!parsed.success) return { state, effects: [emit(invalid(value, parsed.error.issues[0]))] };
  const command = parsed.data;
  const ids = command.id === undefined ? {} : { commandId: command.id };
  if (command.type === 'permission') return onPermissionCommand(state, command.requestId, command.decision, ids);
  if (command.type === 'abort') {
    if (state.phase === 'busy') {
      const dropping = state.followUps.map((queued) => emit(dropped(queued.kind, 'aborted', `dropped by the abort of turn ${state.turn}`, queued)));
      // Nothing waits on an approval nobody will give: the turn's requests are denied before the abort.
      const settled = settleAll(state, 'abort');
      return {
        state: { ...settled.state, phase: 'aborting', aborting: { reason: 'aborted' }, followUps: [] },
        effects: [
          emit({ type: 'input.accepted', kind: 'abort', as: 'abort', turn: state.turn, ...ids }),
          ...dropping,
          ...settled.effects,
          { type: 'watchIdle', on: false },
          { type: 'abort', turn: state.turn },
          { type: 'watchAbort', on: true },
        ],
      };
    }
    const why = state.phase === 'aborting' ? `turn ${state.turn} is already being aborted` : 'no turn is running';
    return { state, effects: [emit({ type: 'input.dropped', kind: 'abort', reason: 'no-turn', message: why, ...ids })] };
  }
  const prepared = preparedPromptOf(value);
  if (prepared !== undefined && 'refused' in prepared) {
    return { state, effects: [emit(dropped(command.type, 'unsupported', prepared.refused, { text: command.text, ...ids }))] };
  }
  const input: SessionInput = {
    kind: command.type,
    text: command.text,
    ...(prepared === undefined ? {} : { content: prepared.content }),
    ...(prepared?.output === undefined ? {} : { output: prepared.output }),
    ...ids,
  };
  if (state.phase === 'idle') return startTurn(state, input, []);
  if (command.type === 'steer' && state.phase === 'busy') {
    return {
      state,
      effects: [emit(accepted(input, 'steer', state.turn)), { type: 'steer', turn: state.turn, input }],
    };
  }
  // A turn runs (or is being aborted): the input waits for the next turn.
  return { state: { ...state, followUps: [...state.followUps, input] }, effects: [emit(accepted(input, 'follow-up', state.turn))] };
}

// The commands held while opening are read now, in their order, as if they came at this moment.
function onOpened(state: SessionState): SessionTransition {
  let next: SessionState = { ...state, phase: 'idle', held: [] };
  const effects: SessionEffect[] = [];
  for (const command of state.held) {
    const transition = onCommand(next, command);
    next = transition.state;
    effects.push(...transition.effects);
  }
  if (next.phase === 'idle' && next.inputsDone) return end(next, effects);
  return { state: next, effects };
}

function onTurnEnded(before: SessionState, outcome: TurnOutcome): SessionTransition {
  if (before.phase !== 'busy' && before.phase !== 'aborting') return { state: before, effects: [] };
  // Every request of the turn is resolved before the turn ends.
  const settled = settleAll(before, 'turn-end');
  const state = settled.state;
  const turn = state.turn;
  const closing: SessionEffect[] = [...settled.effects, { type: 'watchIdle', on: false }, { type: 'watchAbort', on: false }];
  let ended: SessionMessage;
  let next: SessionState = { ...state, phase: 'idle', aborting: null };
  if (outcome.kind === 'completed') {
    ended = {
      type: 'turn.completed',
      turn,
      stopReason: outcome.stopReason,
      ...(outcome.agentStopReason === undefined ? {} : { agentStopReason: outcome.agentStopReason }),
      ...(outcome.usage === undefined ? {} : { usage: outcome.usage }),
    };
    next = { ...next, lastStopReason: outcome.stopReason, usage: outcome.usage === undefined ? state.usage : addUsage(state.usage, outcome.usage) };
  } else if (state.aborting?.reason === 'budget' && outcome.reason === 'aborted') {
    ended = { type: 'turn.failed', turn, reason: 'budget', message: `${budgetText(state.aborting.budget)}: the turn was aborted`, budget: state.aborting.budget };
  } else if (state.aborting?.reason === 'timeout' && outcome.reason === 'aborted') {
    const timeout = state.aborting.timeout;
    ended = {
      type: 'turn.failed',
      turn,
      reason: 'timeout',
      message: `no output for idleTimeoutMs (${timeout?.ms ?? 0} ms): the turn was aborted`,
      ...(timeout === undefined ? {} : { timeout }),
    };
  } else {
    ended = {
      type: 'turn.failed',
      turn,
      reason: outcome.reason,
      message: outcome.message,
      ...(outcome.agentError === undefined ? {} : { agentError: outcome.agentError }),
      ...(outcome.httpStatus === undefined ? {} : { httpStatus: outcome.httpStatus }),
      ...(outcome.retryAfterMs === undefined ? {} : { retryAfterMs: outcome.retryAfterMs }),
      ...(outcome.outputIssues === undefined ? {} : { outputIssues: [...outcome.outputIssues] }),
      ...(outcome.answer === undefined ? {} : { answer: outcome.answer }),
    };
  }
  const effects = [...closing, emit(ended)];
  const [following, ...rest] = next.followUps;
  if (following !== undefined) return startTurn({ ...next, followUps: rest }, following, effects, false);
  if (next.inputsDone) return end(next, effects);
  return { state: next, effects };
}

/** Starts the next turn with `input`; `announce`: say `input.accepted` (a follow-up was accepted when it was queued). */
function startTurn(state: SessionState, input: SessionInput, before: readonly SessionEffect[], announce = true): SessionTransition {
  const turn = state.turn + 1;
  const ids = input.commandId === undefined ? {} : { commandId: input.commandId };
  return {
    state: { ...state, phase: 'busy', turn, aborting: null },
    effects: [
      ...before,
      ...(announce ? [emit(accepted(input, 'turn', turn))] : []),
      emit({ type: 'turn.started', turn, prompt: input.text, ...ids }),
      { type: 'start', turn, input },
      { type: 'watchIdle', on: true },
    ],
  };
}

function end(state: SessionState, before: readonly SessionEffect[]): SessionTransition {
  return { state: { ...state, phase: 'ending' }, effects: [...before, { type: 'end' }, { type: 'watchEnd' }] };
}

function onExited(before: SessionState, input: Extract<SessionInputEvent, { type: 'exited' }>): SessionTransition {
  const settled = settleAll(before, 'run-end');
  const state = settled.state;
  const effects: SessionEffect[] = [...settled.effects, { type: 'watchIdle', on: false }, { type: 'watchAbort', on: false }];
  const sessionId = state.sessionId === undefined ? {} : { sessionId: state.sessionId };
  const failure: TerminalFailed = { ...sessionId, ...input.failure };
  if (state.phase === 'busy' || state.phase === 'aborting') {
    const turnFailed: TurnFailed = {
      type: 'turn.failed',
      turn: state.turn,
      reason: failure.reason,
      message: failure.message,
      ...(failure.agentError === undefined ? {} : { agentError: failure.agentError }),
      ...(failure.httpStatus === undefined ? {} : { httpStatus: failure.httpStatus }),
      ...(failure.retryAfterMs === undefined ? {} : { retryAfterMs: failure.retryAfterMs }),
      ...(failure.timeout === undefined ? {} : { timeout: failure.timeout }),
      ...(failure.budget === undefined ? {} : { budget: failure.budget }),
    };
    effects.push(emit(turnFailed));
  }
  for (const queued of state.followUps) effects.push(emit(dropped(queued.kind, 'session-ended', 'the session ended before it could run', queued)));
  for (const command of state.held) effects.push(emit(droppedAtEnd(command)));
  const graceful = state.phase === 'ending' && input.clean;
  const terminal: SessionMessage = graceful
    ? {
        type: 'terminal.completed',
        stopReason: state.lastStopReason ?? 'end_turn',
        ...(state.usage === undefined ? {} : { usage: state.usage }),
        ...sessionId,
      }
    : failure;
  effects.push(emit(terminal), { type: 'complete' });
  return { state: { ...state, phase: 'ended', followUps: [], held: [], aborting: null, permissions: [] }, effects };
}

/**
 * A request of the agent: said, and decided by the policy while its turn runs (the idle limit
 * pauses while a request waits: a person may take a while). Outside a running turn nobody is
 * asked: it is denied at once (said only inside a turn, as all content is).
 */
function onPermissionRequested(state: SessionState, request: Omit<PermissionRequested, 'type'>): SessionTransition {
  const requested: PermissionRequested = { type: 'permission.requested', ...request };
  if (state.phase === 'busy') {
    if (state.permissions.some((pending) => pending.requestId === request.requestId)) return { state, effects: [] };
    return {
      state: { ...state, permissions: [...state.permissions, { requestId: request.requestId, options: request.options }] },
      effects: [emit(requested), { type: 'watchIdle', on: false }, { type: 'decidePermission', request: requested }],
    };
  }
  const answer: SessionEffect = { type: 'answerPermission', requestId: request.requestId, decision: 'deny' };
  if (state.phase === 'aborting') {
    return { state, effects: [emit(requested), emit({ type: 'permission.resolved', requestId: request.requestId, decision: 'deny', by: 'abort' }), answer] };
  }
  return { state, effects: [answer] };
}

/** A `permission` command: the caller answers a pending request (`input.accepted`), or there is none with that id (`input.dropped`). */
function onPermissionCommand(state: SessionState, requestId: string, decision: PermissionDecision, ids: { readonly commandId?: string }): SessionTransition {
  if (!state.permissions.some((pending) => pending.requestId === requestId)) {
    const message = `no pending permission request ${requestId}: unknown, or already resolved`;
    return { state, effects: [emit({ type: 'input.dropped', kind: 'permission', reason: 'no-request', message, requestId, ...ids })] };
  }
  const resolved = resolvePermission(state, requestId, decision, 'caller');
  return { state: resolved.state, effects: [emit({ type: 'input.accepted', kind: 'permission', as: 'permission', turn: state.turn, requestId, ...ids }), ...resolved.effects] };
}

/**
 * Resolves one pending request (a decision for none is ignored: each is resolved once). A decision
 * the agent does not offer is narrowed (`allow-always` to `allow`, `deny-always` to `deny`).
 */
function resolvePermission(state: SessionState, requestId: string, wanted: PermissionDecision, by: PermissionResolver): SessionTransition {
  const pending = state.permissions.find((candidate) => candidate.requestId === requestId);
  if (pending === undefined) return { state, effects: [] };
  const decision = offered(wanted, pending.options);
  const permissions = state.permissions.filter((candidate) => candidate !== pending);
  const resume: SessionEffect[] = permissions.length === 0 && state.phase === 'busy' ? [{ type: 'watchIdle', on: true }] : [];
  return {
    state: { ...state, permissions },
    effects: [emit({ type: 'permission.resolved', requestId, decision, by }), { type: 'answerPermission', requestId, decision }, ...resume],
  };
}

/** Denies every pending request, in order. */
function settleAll(state: SessionState, by: PermissionResolver): SessionTransition {
  if (state.permissions.length === 0) return { state, effects: [] };
  const effects = state.permissions.flatMap((pending): SessionEffect[] => [
    emit({ type: 'permission.resolved', requestId: pending.requestId, decision: 'deny', by }),
    { type: 'answerPermission', requestId: pending.requestId, decision: 'deny' },
  ]);
  return { state: { ...state, permissions: [] }, effects };
}

/** The decision as the agent can take it. */
export function offered(decision: PermissionDecision, options: readonly PermissionDecision[]): PermissionDecision {
  if (options.includes(decision)) return decision;
  return decision.startsWith('allow') && options.includes('allow') ? 'allow' : 'deny';
}

/** What a command held while opening gets when the session ends before it opened. */
function droppedAtEnd(value: unknown): SessionMessage {
  const parsed = SessionCommandSchema.safeParse(value);
  if (!parsed.success) return invalid(value, parsed.error.issues[0]);
  const command = parsed.data;
  const ids = command.id === undefined ? {} : { commandId: command.id };
  const what = command.type === 'abort' ? ids : command.type === 'permission' ? { requestId: command.requestId, ...ids } : { text: command.text, ...ids };
  return dropped(command.type, 'session-ended', 'the session ended before it could run', what);
}

/** The `input.dropped` of a value that is not a session command, saying what is wrong with it. */
function invalid(value: unknown, issue: { readonly path: readonly PropertyKey[]; readonly message: string } | undefined): SessionMessage {
  const where = issue === undefined || issue.path.length === 0 ? '' : `${issue.path.map(String).join('.')}: `;
  return dropped(commandKind(value), 'invalid', `not a session command (${where}${issue?.message ?? 'invalid'})`, textOf(value));
}

function accepted(input: SessionInput, as: 'turn' | 'follow-up' | 'steer', turn: number): SessionMessage {
  return {
    type: 'input.accepted',
    kind: input.kind,
    as,
    turn,
    text: input.text,
    ...(input.commandId === undefined ? {} : { commandId: input.commandId }),
  };
}

function dropped(
  kind: InputKind,
  reason: 'aborted' | 'rejected' | 'invalid' | 'session-ended' | 'unsupported',
  message: string,
  what: { readonly text?: string | undefined; readonly requestId?: string | undefined; readonly commandId?: string | undefined } | string | undefined,
): SessionMessage {
  const fields: { readonly text?: string | undefined; readonly requestId?: string | undefined; readonly commandId?: string | undefined } = typeof what === 'string' ? { text: what } : (what ?? {});
  return {
    type: 'input.dropped',
    kind,
    reason,
    message,
    ...(fields.text === undefined ? {} : { text: fields.text }),
    ...(fields.requestId === undefined ? {} : { requestId: fields.requestId }),
    ...(fields.commandId === undefined ? {} : { commandId: fields.commandId }),
  };
}

const KINDS: readonly string[] = ['prompt', 'follow-up', 'steer', 'abort', 'permission'];

function commandKind(value: unknown): InputKind {
  const type = typeof value === 'object' && value !== null ? (value as { type?: unknown }).type : undefined;
  return typeof type === 'string' && KINDS.includes(type) ? (type as InputKind) : 'invalid';
}

function textOf(value: unknown): string | undefined {
  const text = typeof value === 'object' && value !== null ? (value as { text?: unknown }).text : undefined;
  return typeof text === 'string' ? text : undefined;
}
