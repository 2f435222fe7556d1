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
export type InvalidOutputLine = z.infer<typeof InvalidOutputLineSchema>;

export const SessionStartedSchema = z.object({ type: z.literal('session.started'), sessionId: z.string() });
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
export const ToolCompletedSchema = z.object({
  type: z.literal('tool.completed'),
  toolCallId: z.string(),
  name: z.string(),
  output: z.string(),
});
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
export type StopReason = z.infer<typeof StopReasonSchema>;
export const TerminalCompletedSchema = z.object({
  type: z.literal('terminal.completed'),
  stopReason: StopReasonSchema,
  /** The agent's own stop reason, as it reported it (pi: `stop`, `length`; Claude Code: `end_turn`, `stop_sequence`, …). */
  agentStopReason: z.string().optional(),
  usage: UsageSchema.optional(),
  sessionId: z.string().optional(),
});

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
]);
export type FailureReason = z.infer<typeof FailureReasonSchema>;

export const TerminalFailedSchema = z.object({
  type: z.literal('terminal.failed'),
  reason: FailureReasonSchema,
  /** A human-readable diagnostic. */
  message: z.string(),
  exitCode: z.number().nullable(),
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
  /**
   * With reason `timeout`: which limit ran out (`run`: `timeoutMs`, the whole run; `idle`:
   * `idleTimeoutMs`, no output for that long) and its value in ms.
   */
  timeout: z.object({ limit: z.enum(['run', 'idle']), ms: z.number() }).optional(),
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

export type SessionStarted = z.infer<typeof SessionStartedSchema>;
export type SessionResumed = z.infer<typeof SessionResumedSchema>;
export type AssistantMessage = z.infer<typeof AssistantSchema>;
export type AssistantWithdrawn = z.infer<typeof AssistantWithdrawnSchema>;
export type AssistantThought = z.infer<typeof AssistantThoughtSchema>;
export type ToolCall = z.infer<typeof ToolCallSchema>;
export type ToolUpdate = z.infer<typeof ToolUpdateSchema>;
export type ToolCompleted = z.infer<typeof ToolCompletedSchema>;
export type ToolFailed = z.infer<typeof ToolFailedSchema>;
export type AgentRetry = z.infer<typeof AgentRetrySchema>;
export type AgentWarning = z.infer<typeof AgentWarningSchema>;
export type RunRetrying = z.infer<typeof RunRetryingSchema>;
export type TerminalCompleted = z.infer<typeof TerminalCompletedSchema>;
export type TerminalFailed = z.infer<typeof TerminalFailedSchema>;
export type TerminalMessage = TerminalCompleted | TerminalFailed;
export type CliMessage = z.infer<typeof CliMessageSchema>;
export type CliMessageType = CliMessage['type'];

const is =
  <T extends CliMessageType>(type: T) =>
  (message: CliMessage): message is Extract<CliMessage, { type: T }> =>
    message.type === type;

export const isSessionStarted = is('session.started');
export const isSessionResumed = is('session.resumed');
export const isAssistant = is('assistant');
export const isAssistantWithdrawn = is('assistant.withdrawn');
export const isAssistantThought = is('assistant.thought');
export const isToolCall = is('tool.call');
export const isToolUpdate = is('tool.update');
export const isToolCompleted = is('tool.completed');
export const isToolFailed = is('tool.failed');
export const isAgentRetry = is('agent.retry');
export const isAgentWarning = is('agent.warning');
export const isRunRetrying = is('run.retrying');
export const isTerminalCompleted = is('terminal.completed');
export const isTerminalFailed = is('terminal.failed');

/** `terminal.completed` or `terminal.failed`: the last message of a run. */
export function isTerminal(message: CliMessage): message is TerminalMessage {
  return message.type === 'terminal.completed' || message.type === 'terminal.failed';
}
