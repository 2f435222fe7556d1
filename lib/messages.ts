import * as z from 'zod';

/**
 * The agent-independent message contract. Every run emits a stream of `CliMessage`s that ends
 * with exactly one terminal message (`terminal.completed` or `terminal.failed`).
 */

/** Token counts of a run, summed over its model calls. */
export const UsageSchema = z.object({
  inputTokens: z.number(),
  outputTokens: z.number(),
  cacheReadTokens: z.number(),
  cacheWriteTokens: z.number(),
  totalTokens: z.number(),
  /** Cost in the provider's currency unit, when the agent reports one. */
  cost: z.number().optional(),
});
/** Token counts of a run, summed over its model calls (see {@link UsageSchema}). */
export type Usage = z.infer<typeof UsageSchema>;

/** One stdout line that was not a valid event, cut to a bounded size. */
export const InvalidOutputLineSchema = z.object({
  /** 1-based position among the run's stdout lines. */
  lineNumber: z.number(),
  /** `not-json`, `not-object`, `no-type`, `too-long` or `invalid-event`. */
  reason: z.enum(['not-json', 'not-object', 'no-type', 'too-long', 'invalid-event']),
  /** What exactly was wrong (the parse error, the schema issue). */
  detail: z.string(),
  /** The line, or its head when it was cut. */
  text: z.string(),
  /** The line's full length in bytes. */
  bytes: z.number(),
  /** Whether `text` was cut. */
  truncated: z.boolean(),
});
/** One stdout line that was not a valid event (see {@link InvalidOutputLineSchema}). */
export type InvalidOutputLine = z.infer<typeof InvalidOutputLineSchema>;

/** The agent started a new session: `sessionId` resumes it later (`resume` in the run options). */
export const SessionStartedSchema = z.object({ type: z.literal('session.started'), sessionId: z.string() });
/** The agent resumed the session `sessionId` that the run asked for. */
export const SessionResumedSchema = z.object({ type: z.literal('session.resumed'), sessionId: z.string() });
/** A delta: concatenating every `assistant` text of a run gives its answer exactly once. */
export const AssistantSchema = z.object({ type: z.literal('assistant'), text: z.string() });
/**
 * The agent changed answer text it had already streamed (a snapshot that diverged, a fallback answer
 * that differs from an abandoned stream): the answer so far ends with `text`, and those
 * `text.length` characters are withdrawn. What replaces them follows in `assistant` messages.
 */
export const AssistantWithdrawnSchema = z.object({ type: z.literal('assistant.withdrawn'), text: z.string() });
/** Thinking, emitted whole when the turn ends. */
export const AssistantThoughtSchema = z.object({ type: z.literal('assistant.thought'), text: z.string() });
/**
 * The agent decided to call a tool: `input` is the tool's arguments as the agent gave them (`null` when it gave none).
 * Sent once per `toolCallId`.
 */
export const ToolCallSchema = z.object({
  type: z.literal('tool.call'),
  toolCallId: z.string(),
  name: z.string(),
  input: z.unknown(),
});
/** Partial tool output so far: replaces the previous update, never appended to it. */
export const ToolUpdateSchema = z.object({
  type: z.literal('tool.update'),
  toolCallId: z.string(),
  name: z.string(),
  output: z.string(),
});
/** A tool call's result, once per `toolCallId`: `output` is its text. */
export const ToolCompletedSchema = z.object({
  type: z.literal('tool.completed'),
  toolCallId: z.string(),
  name: z.string(),
  output: z.string(),
});
/** A tool call that failed, once per `toolCallId`: `output` is what the tool or the agent said. */
export const ToolFailedSchema = z.object({
  type: z.literal('tool.failed'),
  toolCallId: z.string(),
  name: z.string(),
  output: z.string(),
});
/** The agent CLI itself is retrying (for pi: `auto_retry_start`); what the agent does not say is left out. */
export const AgentRetrySchema = z.object({
  type: z.literal('agent.retry'),
  attempt: z.number().optional(),
  maxAttempts: z.number().optional(),
  delayMs: z.number().optional(),
  reason: z.string(),
});
/**
 * The agent reported a problem that does not end the run (Codex: an `error` item, such as unknown
 * model metadata). The run goes on; a failure that ends it is a `terminal.failed`.
 */
export const AgentWarningSchema = z.object({ type: z.literal('agent.warning'), message: z.string() });
/**
 * Why a run's model stopped, the same for every agent: `end_turn` (it finished), `max_tokens` (it
 * hit the output limit), `tool_use` (it stopped to use tools and the run ended there, e.g. at a turn
 * limit), `refusal`, `aborted`, `other` (anything else; the agent's own value is in `agentStopReason`).
 */
export const StopReasonSchema = z.enum(['end_turn', 'max_tokens', 'tool_use', 'refusal', 'aborted', 'other']);
/** Why a run's model stopped, the same for every agent (see {@link StopReasonSchema}). */
export type StopReason = z.infer<typeof StopReasonSchema>;
/**
 * The run succeeded: always the last message of a run that succeeded. `stopReason` is normalized (see
 * {@link StopReasonSchema}); `usage` is the run's token counts when the agent reports them; `sessionId`
 * resumes the agent's session later.
 */
export const TerminalCompletedSchema = z.object({
  type: z.literal('terminal.completed'),
  stopReason: StopReasonSchema,
  /** The agent's own stop reason, as it reported it (pi: `stop`, `length`; Claude Code: `end_turn`, `stop_sequence`, …). */
  agentStopReason: z.string().optional(),
  usage: UsageSchema.optional(),
  sessionId: z.string().optional(),
});

/**
 * Which time limit ran out, and its value in ms: `run` (`timeoutMs`, the whole run or session),
 * `idle` (`idleTimeoutMs`: no output for that long; in a session, while a turn runs), `abort` (a
 * session's agent did not end its turn within `gracePeriodMs` of an abort) or `end` (a session's
 * agent did not exit within `gracePeriodMs` of the end of its input).
 */
export const TimeoutSchema = z.object({ limit: z.enum(['run', 'idle', 'abort', 'end']), ms: z.number() });
/** Which time limit ran out, and its value in ms (see {@link TimeoutSchema}). */
export type Timeout = z.infer<typeof TimeoutSchema>;

/** Why a run failed. */
export const FailureReasonSchema = z.enum([
  /** The executable is missing or not runnable (or `cwd` is not a folder). */
  'spawn',
  /**
   * The run could not be prepared before its process (pi's settings overlay), or a source that is
   * not a process could not read its input (a recording).
   */
  'setup',
  /** Non-zero exit, or killed by a signal. */
  'exit',
  /** The agent reported an error (e.g. pi `stopReason: "error"` with exit code 0). */
  'agent-error',
  /** The agent reported that the request was aborted. */
  'aborted',
  /** The output was not understood, and nothing conclusive came. */
  'invalid-output',
  /** The process ended without saying how the run ended. */
  'missing-terminal',
  /** The host stopped the run (`stopAllRuns()`); the stop sequence ran first. */
  'stopped',
  /** A time limit of the run (`timeoutMs` or `idleTimeoutMs`) ran out; the stop sequence ran first. */
  'timeout',
  /**
   * A fleet run (`agent-rx/fleet`) did not end by itself nor at the caller's request: its worker
   * was killed, frozen, cut off or shut down, or Redis could not be reached for `lostAfterMs`. The
   * agent may have done part of its work.
   */
  'lost',
]);
/** Why a run failed (see {@link FailureReasonSchema}). */
export type FailureReason = z.infer<typeof FailureReasonSchema>;

/**
 * The run failed: always the last message of a run that failed (a source never errors for anything
 * the agent or the OS did). `reason` says why (see {@link FailureReasonSchema}), `message` is a
 * human-readable diagnostic, and the rest is evidence: the exit code or signal, the end of stderr,
 * the first invalid output lines (all bounded, with what was cut), and what the agent itself said
 * (`agentError`, `httpStatus`, `retryAfterMs`), which {@link isRetryableFailure} reads first.
 */
export const TerminalFailedSchema = z.object({
  type: z.literal('terminal.failed'),
  reason: FailureReasonSchema,
  /** A human-readable diagnostic. */
  message: z.string(),
  /** The process's exit code; `null` when it was killed by a signal or never started. */
  exitCode: z.number().nullable(),
  /** The signal that killed the process (`SIGKILL`, …), or `null`. */
  signal: z.string().nullable(),
  /** The end of stderr (bounded). */
  stderr: z.string(),
  /** Bytes cut from the start of stderr. */
  stderrTruncatedBytes: z.number(),
  /** The first invalid stdout lines (bounded in count and length). */
  invalidOutputLines: z.array(InvalidOutputLineSchema),
  /** How many invalid lines were not kept. */
  invalidOutputLinesOmitted: z.number(),
  /** The agent's own last error message, when it reported one. */
  agentError: z.string().optional(),
  /** The HTTP status of the model API's error, when the agent reports one (401, 429, 500, …). */
  httpStatus: z.number().int().optional(),
  /** Set when the agent reports a retry-after hint: how long to wait before trying again, in ms. */
  retryAfterMs: z.number().nonnegative().optional(),
  /** With reason `timeout`: which limit ran out, and its value in ms. */
  timeout: TimeoutSchema.optional(),
  sessionId: z.string().optional(),
});

/**
 * A caller-side retry begins (emitted by `retryAgentRun`, never by a source): the failed
 * attempt's terminal was swallowed, and attempt `attempt` starts after `delayMs`.
 */
export const RunRetryingSchema = z.object({
  type: z.literal('run.retrying'),
  /** The number of the attempt about to start: 2 for the first retry. */
  attempt: z.number(),
  /** How long the retry waits before it starts the attempt. */
  delayMs: z.number(),
  /** The swallowed `terminal.failed` of the previous attempt. */
  failure: TerminalFailedSchema,
});

/** Every message a run emits, as one discriminated union on `type` (see {@link CliMessage}). */
export const CliMessageSchema = z.discriminatedUnion('type', [
  SessionStartedSchema,
  SessionResumedSchema,
  AssistantSchema,
  AssistantWithdrawnSchema,
  AssistantThoughtSchema,
  ToolCallSchema,
  ToolUpdateSchema,
  ToolCompletedSchema,
  ToolFailedSchema,
  AgentRetrySchema,
  AgentWarningSchema,
  RunRetryingSchema,
  TerminalCompletedSchema,
  TerminalFailedSchema,
]);

/** See {@link SessionStartedSchema}. */
export type SessionStarted = z.infer<typeof SessionStartedSchema>;
/** See {@link SessionResumedSchema}. */
export type SessionResumed = z.infer<typeof SessionResumedSchema>;
/** A delta of the answer (see {@link AssistantSchema}). */
export type AssistantMessage = z.infer<typeof AssistantSchema>;
/** Answer text withdrawn (see {@link AssistantWithdrawnSchema}). */
export type AssistantWithdrawn = z.infer<typeof AssistantWithdrawnSchema>;
/** Thinking, whole (see {@link AssistantThoughtSchema}). */
export type AssistantThought = z.infer<typeof AssistantThoughtSchema>;
/** See {@link ToolCallSchema}. */
export type ToolCall = z.infer<typeof ToolCallSchema>;
/** See {@link ToolUpdateSchema}. */
export type ToolUpdate = z.infer<typeof ToolUpdateSchema>;
/** See {@link ToolCompletedSchema}. */
export type ToolCompleted = z.infer<typeof ToolCompletedSchema>;
/** See {@link ToolFailedSchema}. */
export type ToolFailed = z.infer<typeof ToolFailedSchema>;
/** See {@link AgentRetrySchema}. */
export type AgentRetry = z.infer<typeof AgentRetrySchema>;
/** See {@link AgentWarningSchema}. */
export type AgentWarning = z.infer<typeof AgentWarningSchema>;
/** See {@link RunRetryingSchema}. */
export type RunRetrying = z.infer<typeof RunRetryingSchema>;
/** See {@link TerminalCompletedSchema}. */
export type TerminalCompleted = z.infer<typeof TerminalCompletedSchema>;
/** See {@link TerminalFailedSchema}. */
export type TerminalFailed = z.infer<typeof TerminalFailedSchema>;
/** The last message of every run: `terminal.completed` or `terminal.failed` (see {@link isTerminal}). */
export type TerminalMessage = TerminalCompleted | TerminalFailed;
/**
 * A message of a run, the same for every agent, keyed by `type`. A run that is not unsubscribed emits
 * exactly one {@link TerminalMessage}, as its last message, and then completes; concatenating its
 * `assistant` texts gives the answer exactly once.
 *
 * | type | meaning |
 * |---|---|
 * | `session.started` / `session.resumed` | the agent reports its session (`sessionId`) |
 * | `assistant` | a delta of the answer |
 * | `assistant.withdrawn` | answer text already streamed is withdrawn (the agent changed it) |
 * | `assistant.thought` | thinking, whole, when the turn ends |
 * | `tool.call` / `tool.update` / `tool.completed` / `tool.failed` | a tool call, its partial output (replaces), its result |
 * | `agent.retry` | the agent CLI itself is retrying |
 * | `agent.warning` | the agent reported a problem that does not end the run |
 * | `run.retrying` | {@link retryAgentRun} starts another attempt |
 * | `terminal.completed` / `terminal.failed` | how the run ended |
 */
export type CliMessage = z.infer<typeof CliMessageSchema>;
/** The `type` of a {@link CliMessage}. */
export type CliMessageType = CliMessage['type'];

// One guard per type, for run and session messages alike (a `CliMessage` is a `SessionMessage`).
const is =
  <T extends SessionMessageType>(type: T) =>
  (message: SessionMessage): message is Extract<SessionMessage, { type: T }> =>
    message.type === type;

/** Whether a message is `session.started`. */
export const isSessionStarted = is('session.started');
/** Whether a message is `session.resumed`. */
export const isSessionResumed = is('session.resumed');
/** Whether a message is `assistant` (a delta of the answer). */
export const isAssistant = is('assistant');
/** Whether a message is `assistant.withdrawn`. */
export const isAssistantWithdrawn = is('assistant.withdrawn');
/** Whether a message is `assistant.thought`. */
export const isAssistantThought = is('assistant.thought');
/** Whether a message is `tool.call`. */
export const isToolCall = is('tool.call');
/** Whether a message is `tool.update`. */
export const isToolUpdate = is('tool.update');
/** Whether a message is `tool.completed`. */
export const isToolCompleted = is('tool.completed');
/** Whether a message is `tool.failed`. */
export const isToolFailed = is('tool.failed');
/** Whether a message is `agent.retry`. */
export const isAgentRetry = is('agent.retry');
/** Whether a message is `agent.warning`. */
export const isAgentWarning = is('agent.warning');
/** Whether a message is `run.retrying`. */
export const isRunRetrying = is('run.retrying');
/** Whether a message is `terminal.completed`. */
export const isTerminalCompleted = is('terminal.completed');
/** Whether a message is `terminal.failed`. */
export const isTerminalFailed = is('terminal.failed');

/** `terminal.completed` or `terminal.failed`: the last message of a run. */
export function isTerminal(message: SessionMessage): message is TerminalMessage {
  return message.type === 'terminal.completed' || message.type === 'terminal.failed';
}

// ---------------------------------------------------------------------------------------------
// Sessions: one agent process, many turns

/**
 * What a caller sends a session. Every command is answered in the stream: `input.accepted` (it
 * starts a turn, is queued as a follow-up, goes into the running turn, or aborts it) or
 * `input.dropped` (it cannot be honoured, and why); a command never throws and never vanishes.
 * `id` is the caller's own, echoed as `commandId`.
 */
export const SessionCommandSchema = z.discriminatedUnion('type', [
  /** Idle: starts a turn. A turn running: queued, and sent as a later turn's prompt (a follow-up). */
  z.object({ type: z.literal('prompt'), text: z.string().min(1), id: z.string().optional() }),
  /** Kept by agent-rx and sent as the next turn's prompt; idle: starts a turn now. */
  z.object({ type: z.literal('follow-up'), text: z.string().min(1), id: z.string().optional() }),
  /** A turn running: into that turn, as the agent allows (the README's table). Idle: starts a turn. */
  z.object({ type: z.literal('steer'), text: z.string().min(1), id: z.string().optional() }),
  /** Ends the running turn (`turn.failed`, reason `aborted`); the process stays; queued follow-ups are dropped. */
  z.object({ type: z.literal('abort'), id: z.string().optional() }),
]);
/** What a caller sends a session (see {@link SessionCommandSchema}). */
export type SessionCommand = z.infer<typeof SessionCommandSchema>;
/** The `type` of a {@link SessionCommand}: `prompt`, `follow-up`, `steer` or `abort`. */
export type SessionCommandKind = SessionCommand['type'];

/** A turn began: `prompt` is what it was started with (a prompt, a follow-up, or a steer sent while idle). */
export const TurnStartedSchema = z.object({
  type: z.literal('turn.started'),
  /** 1 for the session's first turn. */
  turn: z.number().int().positive(),
  prompt: z.string(),
  commandId: z.string().optional(),
});
/** A turn ended as the agent finished it; `usage` is that turn's own. */
export const TurnCompletedSchema = z.object({
  type: z.literal('turn.completed'),
  turn: z.number().int().positive(),
  stopReason: StopReasonSchema,
  agentStopReason: z.string().optional(),
  usage: UsageSchema.optional(),
});
/**
 * A turn ended without an answer: `aborted` (an abort), `agent-error` (the agent reported an error),
 * `timeout` (no output for `idleTimeoutMs`: the turn was aborted), or why the session's process
 * ended while the turn ran (`exit`, `stopped`, `spawn`, …; the session's `terminal.failed` follows).
 */
export const TurnFailedSchema = z.object({
  type: z.literal('turn.failed'),
  turn: z.number().int().positive(),
  reason: FailureReasonSchema,
  message: z.string(),
  agentError: z.string().optional(),
  httpStatus: z.number().int().optional(),
  retryAfterMs: z.number().nonnegative().optional(),
  timeout: TimeoutSchema.optional(),
});
/** The kinds of command, and `invalid` for a value that is not a command. */
export const InputKindSchema = z.enum(['prompt', 'follow-up', 'steer', 'abort', 'invalid']);
/**
 * A command was taken: `as` says what it does. `turn` started a turn (`turn` is the new one);
 * `follow-up` is queued to run after turn `turn`; `steer` went into turn `turn`; `abort` ends turn `turn`.
 */
export const InputAcceptedSchema = z.object({
  type: z.literal('input.accepted'),
  kind: InputKindSchema.exclude(['invalid']),
  as: z.enum(['turn', 'follow-up', 'steer', 'abort']),
  turn: z.number().int().positive(),
  text: z.string().optional(),
  commandId: z.string().optional(),
});
/**
 * A command that cannot be honoured, or a queued follow-up that will not run: `no-turn` (an abort
 * with no turn running), `aborted` (a follow-up dropped by an abort), `rejected` (the agent refused
 * it; `message` says why), `invalid` (not a command), `session-ended` (the session's process ended first).
 */
export const InputDroppedSchema = z.object({
  type: z.literal('input.dropped'),
  kind: InputKindSchema,
  reason: z.enum(['no-turn', 'aborted', 'rejected', 'invalid', 'session-ended']),
  message: z.string(),
  text: z.string().optional(),
  commandId: z.string().optional(),
});

/**
 * What a session emits: the run messages (content inside turns, `session.*`, and exactly one
 * `terminal.*` last, for the session as a whole) and the session's own turn and input messages.
 */
export const SessionMessageSchema = z.discriminatedUnion('type', [
  ...CliMessageSchema.options,
  TurnStartedSchema,
  TurnCompletedSchema,
  TurnFailedSchema,
  InputAcceptedSchema,
  InputDroppedSchema,
]);

/** See {@link TurnStartedSchema}. */
export type TurnStarted = z.infer<typeof TurnStartedSchema>;
/** See {@link TurnCompletedSchema}. */
export type TurnCompleted = z.infer<typeof TurnCompletedSchema>;
/** See {@link TurnFailedSchema}. */
export type TurnFailed = z.infer<typeof TurnFailedSchema>;
/** See {@link InputAcceptedSchema}. */
export type InputAccepted = z.infer<typeof InputAcceptedSchema>;
/** See {@link InputDroppedSchema}. */
export type InputDropped = z.infer<typeof InputDroppedSchema>;
/** See {@link InputKindSchema}. */
export type InputKind = z.infer<typeof InputKindSchema>;
/**
 * A message of a session: every {@link CliMessage} plus `turn.started`, `turn.completed`, `turn.failed`,
 * `input.accepted` and `input.dropped`. Turns never overlap and each ends exactly once; every content
 * message lies inside a turn; the session ends with exactly one terminal message, last.
 */
export type SessionMessage = z.infer<typeof SessionMessageSchema>;
/** The `type` of a {@link SessionMessage}. */
export type SessionMessageType = SessionMessage['type'];

/** Whether a message is `turn.started`. */
export const isTurnStarted = is('turn.started');
/** Whether a message is `turn.completed`. */
export const isTurnCompleted = is('turn.completed');
/** Whether a message is `turn.failed`. */
export const isTurnFailed = is('turn.failed');
/** Whether a message is `input.accepted`. */
export const isInputAccepted = is('input.accepted');
/** Whether a message is `input.dropped`. */
export const isInputDropped = is('input.dropped');

/** `turn.completed` or `turn.failed`: the end of a turn. */
export function isTurnEnd(message: SessionMessage): message is TurnCompleted | TurnFailed {
  return message.type === 'turn.completed' || message.type === 'turn.failed';
}
