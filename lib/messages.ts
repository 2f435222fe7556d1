import * as z from 'zod';
import type { Holds, Same } from './same-type.js';

/**
 * The agent-independent message contract. Every run emits a stream of `CliMessage`s that ends
 * with exactly one terminal message (`terminal.completed` or `terminal.failed`).
 *
 * Each message is declared twice, side by side: as a named TypeScript type (what signatures,
 * editor hovers and compiler errors show) and as a zod schema (what validates a message at run
 * time). The checks at the end of this file make the build fail when the two differ in any field.
 */

/** Token counts of a run, summed over its model calls. */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  totalTokens: number;
  /** Cost in the provider's currency unit, when the agent reports one. */
  cost?: number | undefined;
}
/** Validates a {@link Usage}. */
export const UsageSchema = z.object({
  inputTokens: z.number(),
  outputTokens: z.number(),
  cacheReadTokens: z.number(),
  cacheWriteTokens: z.number(),
  totalTokens: z.number(),
  cost: z.number().optional(),
});

/** One stdout line that was not a valid event, cut to a bounded size. */
export interface InvalidOutputLine {
  /** 1-based position among the run's stdout lines. */
  lineNumber: number;
  /** `not-json`, `not-object`, `no-type`, `too-long` or `invalid-event`. */
  reason: 'not-json' | 'not-object' | 'no-type' | 'too-long' | 'invalid-event';
  /** What exactly was wrong (the parse error, the schema issue). */
  detail: string;
  /** The line, or its head when it was cut. */
  text: string;
  /** The line's full length in bytes. */
  bytes: number;
  /** Whether `text` was cut. */
  truncated: boolean;
}
/** Validates an {@link InvalidOutputLine}. */
export const InvalidOutputLineSchema = z.object({
  lineNumber: z.number(),
  reason: z.enum(['not-json', 'not-object', 'no-type', 'too-long', 'invalid-event']),
  detail: z.string(),
  text: z.string(),
  bytes: z.number(),
  truncated: z.boolean(),
});

/** One way a typed answer failed its schema: where (`path`, dotted; empty for the whole answer) and what. */
export interface OutputIssue {
  path: string;
  message: string;
}
/** Validates an {@link OutputIssue}. */
export const OutputIssueSchema = z.object({ path: z.string(), message: z.string() });

/** The agent started a new session: `sessionId` resumes it later (`resume` in the run options). */
export interface SessionStarted {
  type: 'session.started';
  sessionId: string;
  /**
   * The agent CLI's version, as it reported it in its own output (`2.1.197`); absent where it
   * reports none (pi, Codex's `exec`, Gemini CLI's runs). For telling which version a stream came
   * from when its protocol drifts.
   */
  agentVersion?: string | undefined;
  /**
   * The model the agent says it uses, in its own output (Claude Code, Gemini CLI and Qwen Code runs
   * say it as they start, as does a Claude Code session that continues the folder's latest); absent
   * where it says none (pi, Codex, other sessions). A budget's `prices` are looked up by it.
   */
  model?: string | undefined;
  /**
   * The agent process's pid, on the machine that runs it (a fleet worker's for a fleet run): for
   * finding it with the system's tools. Absent where no process of this host reads the agent (a
   * recording).
   */
  pid?: number | undefined;
  /** The run's process group: the agent leads its own, which holds its tools' processes unless they left it. */
  processGroup?: number | undefined;
}
/** Validates a {@link SessionStarted}. */
export const SessionStartedSchema = z.object({
  type: z.literal('session.started'),
  sessionId: z.string(),
  agentVersion: z.string().optional(),
  model: z.string().optional(),
  pid: z.number().int().positive().optional(),
  processGroup: z.number().int().positive().optional(),
});

/**
 * The agent resumed the session `sessionId` that the run asked for; in a session with `idleMs`, a
 * new process resumed the conversation after `session.passivated` (`resumeMs`).
 */
export interface SessionResumed {
  type: 'session.resumed';
  sessionId: string;
  /** The agent CLI's version, as it reported it (see {@link SessionStarted.agentVersion}). */
  agentVersion?: string | undefined;
  /** The model the agent says it uses (see {@link SessionStarted.model}). */
  model?: string | undefined;
  /**
   * After `session.passivated`: how long the wake took, in ms, from the command that woke the
   * session to the new process's resumed session (the saved state put back, the agent started).
   */
  resumeMs?: number | undefined;
  /** The agent process's pid (see {@link SessionStarted.pid}). */
  pid?: number | undefined;
  /** The run's process group (see {@link SessionStarted.processGroup}). */
  processGroup?: number | undefined;
}
/** Validates a {@link SessionResumed}. */
export const SessionResumedSchema = z.object({
  type: z.literal('session.resumed'),
  sessionId: z.string(),
  agentVersion: z.string().optional(),
  model: z.string().optional(),
  resumeMs: z.number().nonnegative().optional(),
  pid: z.number().int().positive().optional(),
  processGroup: z.number().int().positive().optional(),
});

/**
 * A session with `idleMs` went to sleep: no turn for `idleMs`, so its conversation was saved
 * (`snapshotBytes` in its store) and its agent process ended gracefully. The session stays
 * subscribed: the next command starts a process that resumes the conversation (`session.resumed`
 * with `resumeMs`), and its turns are numbered on.
 */
export interface SessionPassivated {
  type: 'session.passivated';
  /** The agent's session id, which the next process resumes. */
  sessionId: string;
  /** The conversation's key in the store (the session's `conversationId`, else `sessionId`). */
  conversationId: string;
  /** The idle time that passivated it, in ms. */
  idleMs: number;
  /** The size of the saved state, in bytes. */
  snapshotBytes: number;
}
/** Validates a {@link SessionPassivated}. */
export const SessionPassivatedSchema = z.object({
  type: z.literal('session.passivated'),
  sessionId: z.string(),
  conversationId: z.string(),
  idleMs: z.number().nonnegative(),
  snapshotBytes: z.number().int().nonnegative(),
});

/** A delta: concatenating every `assistant` text of a run gives its answer exactly once. */
export interface AssistantMessage {
  type: 'assistant';
  text: string;
}
/** Validates an {@link AssistantMessage}. */
export const AssistantSchema = z.object({ type: z.literal('assistant'), text: z.string() });

/**
 * The agent changed answer text it had already streamed (a snapshot that diverged, a fallback answer
 * that differs from an abandoned stream): the answer so far ends with `text`, and those
 * `text.length` characters are withdrawn. What replaces them follows in `assistant` messages.
 */
export interface AssistantWithdrawn {
  type: 'assistant.withdrawn';
  text: string;
}
/** Validates an {@link AssistantWithdrawn}. */
export const AssistantWithdrawnSchema = z.object({ type: z.literal('assistant.withdrawn'), text: z.string() });

/** Thinking, emitted whole when the turn ends. */
export interface AssistantThought {
  type: 'assistant.thought';
  text: string;
}
/** Validates an {@link AssistantThought}. */
export const AssistantThoughtSchema = z.object({ type: z.literal('assistant.thought'), text: z.string() });

/**
 * The kinds of tools, as the Agent Client Protocol names them: what a tool does, whatever the agent
 * calls it (pi's `bash`, Claude Code's `Bash` and Codex's `command_execution` are all `execute`).
 */
export const TOOL_KINDS = ['read', 'edit', 'delete', 'move', 'search', 'execute', 'think', 'fetch', 'other'] as const;
/** One of {@link TOOL_KINDS}. */
export type ToolKind = (typeof TOOL_KINDS)[number];

/** The agent decided to call a tool. Sent once per `toolCallId`. */
export interface ToolCall {
  type: 'tool.call';
  toolCallId: string;
  name: string;
  /** The tool's arguments as the agent gave them (`null` when it gave none). */
  input: unknown;
  /** What kind of tool it is (`execute`, `edit`, …), from the agent's own vocabulary; absent when the agent's is not known. */
  kind?: ToolKind | undefined;
  /** What the call does, in one line: the command, the path, the pattern (`echo hello`); absent when nothing says it better than the input. */
  summary?: string | undefined;
}
/** Validates a {@link ToolCall}. */
export const ToolCallSchema = z.object({
  type: z.literal('tool.call'),
  toolCallId: z.string(),
  name: z.string(),
  input: z.unknown(),
  kind: z.enum(TOOL_KINDS).optional(),
  summary: z.string().optional(),
});

/**
 * What the host may answer a permission request: `allow` (this once), `allow-always` (and the same
 * again for the rest of the session, where the agent offers it), `deny`, `deny-always`.
 */
export const PERMISSION_DECISIONS = ['allow', 'allow-always', 'deny', 'deny-always'] as const;
/** One of {@link PERMISSION_DECISIONS}. */
export type PermissionDecision = (typeof PERMISSION_DECISIONS)[number];
/** Validates a {@link PermissionDecision}. */
export const PermissionDecisionSchema = z.enum(PERMISSION_DECISIONS);

/**
 * The agent asks before it uses a tool: the host decides (the run's or session's `permission`, or a
 * session's `permission` command). `requestId` is agent-rx's, unique; `options` are the decisions
 * this agent accepts (always `allow` and `deny`). Every request is followed by exactly one
 * {@link PermissionResolved}, before the end of its turn or run.
 */
export interface PermissionRequested {
  type: 'permission.requested';
  requestId: string;
  /** The tool call it is for, where the agent says so (the `tool.call` may come before or after). */
  toolCallId?: string | undefined;
  /** The agent's name of the tool (`Bash`, `bash`, `run_shell_command`, `commandExecution`). */
  tool: string;
  /** What kind of tool it is. */
  kind: ToolKind;
  /** What it would do, in one line (the command, the path). */
  title: string;
  /** The tool's input as the agent gave it. */
  input: unknown;
  options: PermissionDecision[];
}
/** Validates a {@link PermissionRequested}. */
export const PermissionRequestedSchema = z.object({
  type: z.literal('permission.requested'),
  requestId: z.string(),
  toolCallId: z.string().optional(),
  tool: z.string(),
  kind: z.enum(TOOL_KINDS),
  title: z.string(),
  input: z.unknown(),
  options: z.array(PermissionDecisionSchema),
});

/**
 * Who settled a permission request: the caller (its callback, or a session's `permission` command),
 * a preset policy, the deadline (`permissionTimeoutMs`), an abort (an abort, a steer that cancels,
 * an idle limit), the end of its turn, or the end of the run (the process ended). All but the
 * first two deny.
 */
export type PermissionResolver = 'caller' | 'policy' | 'deadline' | 'abort' | 'turn-end' | 'run-end';
/** Validates a {@link PermissionResolver}. */
export const PermissionResolverSchema = z.enum(['caller', 'policy', 'deadline', 'abort', 'turn-end', 'run-end']);

/** How a permission request was settled: the decision the agent was given, and who made it. */
export interface PermissionResolved {
  type: 'permission.resolved';
  requestId: string;
  decision: PermissionDecision;
  by: PermissionResolver;
}
/** Validates a {@link PermissionResolved}. */
export const PermissionResolvedSchema = z.object({
  type: z.literal('permission.resolved'),
  requestId: z.string(),
  decision: PermissionDecisionSchema,
  by: PermissionResolverSchema,
});

/** Partial tool output so far: replaces the previous update, never appended to it. */
export interface ToolUpdate {
  type: 'tool.update';
  toolCallId: string;
  name: string;
  output: string;
}
/** Validates a {@link ToolUpdate}. */
export const ToolUpdateSchema = z.object({
  type: z.literal('tool.update'),
  toolCallId: z.string(),
  name: z.string(),
  output: z.string(),
});

/**
 * What a tool gave back besides its text, agent-independent: an image it made or read (base64 with
 * its type), or a file it changed (its path, the text before, `null` for a new file, and after).
 */
export type ToolContent =
  | { type: 'image'; data: string; mimeType: string }
  | { type: 'diff'; path: string; oldText: string | null; newText: string };
/** Validates a {@link ToolContent}. */
export const ToolContentSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('image'), data: z.string(), mimeType: z.string() }),
  z.object({ type: z.literal('diff'), path: z.string(), oldText: z.string().nullable(), newText: z.string() }),
]);

/**
 * A tool call's result, once per `toolCallId`: `output` is its text; `content`, where the agent
 * reports them, the images it gave back and the files it changed.
 */
export interface ToolCompleted {
  type: 'tool.completed';
  toolCallId: string;
  name: string;
  output: string;
  content?: ToolContent[] | undefined;
}
/** Validates a {@link ToolCompleted}. */
export const ToolCompletedSchema = z.object({
  type: z.literal('tool.completed'),
  toolCallId: z.string(),
  name: z.string(),
  output: z.string(),
  content: z.array(ToolContentSchema).optional(),
});

/** A tool call that failed, once per `toolCallId`: `output` is what the tool or the agent said. */
export interface ToolFailed {
  type: 'tool.failed';
  toolCallId: string;
  name: string;
  output: string;
}
/** Validates a {@link ToolFailed}. */
export const ToolFailedSchema = z.object({
  type: z.literal('tool.failed'),
  toolCallId: z.string(),
  name: z.string(),
  output: z.string(),
});

/** The agent CLI itself is retrying (for pi: `auto_retry_start`); what the agent does not say is left out. */
export interface AgentRetry {
  type: 'agent.retry';
  attempt?: number | undefined;
  maxAttempts?: number | undefined;
  delayMs?: number | undefined;
  reason: string;
}
/** Validates an {@link AgentRetry}. */
export const AgentRetrySchema = z.object({
  type: z.literal('agent.retry'),
  attempt: z.number().optional(),
  maxAttempts: z.number().optional(),
  delayMs: z.number().optional(),
  reason: z.string(),
});

/**
 * The agent reported a problem that does not end the run (Codex: an `error` item, such as unknown
 * model metadata), or sent an event of a type agent-rx does not know (once per type in a run or a
 * session: `Codex sent an event of unknown type "foo"; it was ignored`). The run goes on; a
 * failure that ends it is a `terminal.failed`.
 */
export interface AgentWarning {
  type: 'agent.warning';
  message: string;
}
/** Validates an {@link AgentWarning}. */
export const AgentWarningSchema = z.object({ type: z.literal('agent.warning'), message: z.string() });

/** Why a run's model stopped, the same for every agent; the agent's own value is in `agentStopReason`. */
export type StopReason =
  /** It finished. */
  | 'end_turn'
  /** It hit the output limit. */
  | 'max_tokens'
  /** It stopped to use tools and the run ended there (e.g. at a turn limit). */
  | 'tool_use'
  /** It refused. */
  | 'refusal'
  /** The request was aborted. */
  | 'aborted'
  /** Anything else. */
  | 'other';
/** Validates a {@link StopReason}. */
export const StopReasonSchema = z.enum(['end_turn', 'max_tokens', 'tool_use', 'refusal', 'aborted', 'other']);

/**
 * The run succeeded: always the last message of a run that succeeded. `stopReason` is normalized (see
 * {@link StopReason}); `usage` is the run's token counts when the agent reports them; `sessionId`
 * resumes the agent's session later.
 */
export interface TerminalCompleted<Output = unknown> {
  type: 'terminal.completed';
  stopReason: StopReason;
  /** The agent's own stop reason, as it reported it (pi: `stop`, `length`; Claude Code: `end_turn`, `stop_sequence`, …). */
  agentStopReason?: string | undefined;
  usage?: Usage | undefined;
  sessionId?: string | undefined;
  /**
   * With `outputSchema`: the answer, parsed and validated (the schema's output, typed through it).
   * A run whose answer does not validate ends `terminal.failed` (`output-schema`) instead.
   */
  output?: Output | undefined;
}
/** Validates a {@link TerminalCompleted}. */
export const TerminalCompletedSchema = z.object({
  type: z.literal('terminal.completed'),
  stopReason: StopReasonSchema,
  agentStopReason: z.string().optional(),
  usage: UsageSchema.optional(),
  sessionId: z.string().optional(),
  output: z.unknown().optional(),
});

/** Which time limit ran out, and its value in ms. */
export interface Timeout {
  /**
   * `run` (`timeoutMs`, the whole run or session), `idle` (`idleTimeoutMs`: no output for that long;
   * in a session, while a turn runs), `abort` (a session's agent did not end its turn within
   * `gracePeriodMs` of an abort) or `end` (a session's agent did not exit within `gracePeriodMs` of
   * the end of its input).
   */
  limit: 'run' | 'idle' | 'abort' | 'end';
  ms: number;
}
/** Validates a {@link Timeout}. */
export const TimeoutSchema = z.object({ limit: z.enum(['run', 'idle', 'abort', 'end']), ms: z.number() });

/** The limits of a budget (see `budget`): what a run, a session or a turn may spend. */
export const BUDGET_LIMITS = ['tokens', 'costUsd', 'wallMs', 'toolCalls', 'turns'] as const;
/** One of {@link BUDGET_LIMITS}. */
export type BudgetLimit = (typeof BUDGET_LIMITS)[number];

/** What a budget counted so far: tokens (reported, and estimated since the last report), cost, time, tool calls, turns. */
export interface BudgetSpent {
  tokens: number;
  /** In USD: reported by the agent, or from the caller's price; absent when neither gives one. */
  costUsd?: number | undefined;
  wallMs: number;
  toolCalls: number;
  turns: number;
  /**
   * How many of `tokens` are estimated: text the agent streamed since it last reported its usage
   * (answer, thinking, tool inputs and outputs), at 4 characters a token. 0 once it reported.
   */
  estimatedTokens: number;
}
/** Validates a {@link BudgetSpent}. */
export const BudgetSpentSchema = z.object({
  tokens: z.number().nonnegative(),
  costUsd: z.number().nonnegative().optional(),
  wallMs: z.number().nonnegative(),
  toolCalls: z.number().int().nonnegative(),
  turns: z.number().int().nonnegative(),
  estimatedTokens: z.number().nonnegative(),
});

/**
 * Which budget limit was crossed (reason `budget`): the limit, its value, what was used when it was
 * crossed, whether the limit was the whole run's or session's (`total`) or one turn's (`turn`), and
 * everything the budget counted by then.
 */
export interface BudgetExceeded {
  limit: BudgetLimit;
  max: number;
  used: number;
  per: 'total' | 'turn';
  spent: BudgetSpent;
  /**
   * Set when `costUsd` could not be kept: the budget prices by model (`prices`), the run's model
   * (`model`; `null` where neither the agent nor the run named it) has no price there, and the agent
   * reports no cost. The run was stopped as it started (a session's turns are aborted).
   */
  unpriced?: { model: string | null } | undefined;
}
/** Validates a {@link BudgetExceeded}. */
export const BudgetExceededSchema = z.object({
  limit: z.enum(BUDGET_LIMITS),
  max: z.number().nonnegative(),
  used: z.number().nonnegative(),
  per: z.enum(['total', 'turn']),
  spent: BudgetSpentSchema,
  unpriced: z.object({ model: z.string().nullable() }).optional(),
});

/** Why a run failed. */
export type FailureReason =
  /** The executable is missing or not runnable (or `cwd` is not a folder). */
  | 'spawn'
  /**
   * The run could not be prepared before its process (pi's settings overlay), or a source that is
   * not a process could not read its input (a recording).
   */
  | 'setup'
  /** Non-zero exit, or killed by a signal. */
  | 'exit'
  /** The agent reported an error (e.g. pi `stopReason: "error"` with exit code 0). */
  | 'agent-error'
  /** The agent reported that the request was aborted. */
  | 'aborted'
  /** The output was not understood, and nothing conclusive came. */
  | 'invalid-output'
  /** The process ended without saying how the run ended. */
  | 'missing-terminal'
  /** The host stopped the run (`stopAllRuns()`); the stop sequence ran first. */
  | 'stopped'
  /** A time limit of the run (`timeoutMs` or `idleTimeoutMs`) ran out; the stop sequence ran first. */
  | 'timeout'
  /**
   * A fleet run (`agent-rx/fleet`) did not end by itself nor at the caller's request: its worker
   * was killed, frozen, cut off or shut down, or Redis could not be reached for `lostAfterMs`. The
   * agent may have done part of its work.
   */
  | 'lost'
  /**
   * With `outputSchema`: the answer was not JSON, or did not satisfy the schema (`outputIssues`
   * says how, `answer` holds what came). The agent completed its turn: repair it in a session with
   * a follow-up that quotes the issues, or retry the run (not done by `isRetryableFailure`).
   */
  | 'output-schema'
  /**
   * A limit of the caller's `budget` was crossed (`budget` says which, and the figures): the run was
   * stopped the graceful way, or the session's turn was aborted. Never retried by `isRetryableFailure`.
   */
  | 'budget';
/** Validates a {@link FailureReason}. */
export const FailureReasonSchema = z.enum([
  'spawn',
  'setup',
  'exit',
  'agent-error',
  'aborted',
  'invalid-output',
  'missing-terminal',
  'stopped',
  'timeout',
  'lost',
  'output-schema',
  'budget',
]);

/**
 * The run failed: always the last message of a run that failed (a source never errors for anything
 * the agent or the OS did). `reason` says why (see {@link FailureReason}), `message` is a
 * human-readable diagnostic, and the rest is evidence: the exit code or signal, the end of stderr,
 * the first invalid output lines (all bounded, with what was cut), and what the agent itself said
 * (`agentError`, `httpStatus`, `retryAfterMs`), which {@link isRetryableFailure} reads first.
 */
export interface TerminalFailed {
  type: 'terminal.failed';
  reason: FailureReason;
  /** A human-readable diagnostic. */
  message: string;
  /** The process's exit code; `null` when it was killed by a signal or never started. */
  exitCode: number | null;
  /** The signal that killed the process (`SIGKILL`, …), or `null`. */
  signal: string | null;
  /** The end of stderr (bounded). */
  stderr: string;
  /** Bytes cut from the start of stderr. */
  stderrTruncatedBytes: number;
  /** The first invalid stdout lines (bounded in count and length). */
  invalidOutputLines: InvalidOutputLine[];
  /** How many invalid lines were not kept. */
  invalidOutputLinesOmitted: number;
  /** The agent's own last error message, when it reported one. */
  agentError?: string | undefined;
  /** The HTTP status of the model API's error, when the agent reports one (401, 429, 500, …). */
  httpStatus?: number | undefined;
  /** Set when the agent reports a retry-after hint: how long to wait before trying again, in ms. */
  retryAfterMs?: number | undefined;
  /** With reason `timeout`: which limit ran out, and its value in ms. */
  timeout?: Timeout | undefined;
  /** With reason `output-schema`: how the answer failed its schema. */
  outputIssues?: OutputIssue[] | undefined;
  /** With reason `output-schema`: the answer that failed (its final text, bounded). */
  answer?: string | undefined;
  /** With reason `budget`: which limit was crossed, and what was spent. */
  budget?: BudgetExceeded | undefined;
  sessionId?: string | undefined;
}
/** Validates a {@link TerminalFailed}. */
export const TerminalFailedSchema = z.object({
  type: z.literal('terminal.failed'),
  reason: FailureReasonSchema,
  message: z.string(),
  exitCode: z.number().nullable(),
  signal: z.string().nullable(),
  stderr: z.string(),
  stderrTruncatedBytes: z.number(),
  invalidOutputLines: z.array(InvalidOutputLineSchema),
  invalidOutputLinesOmitted: z.number(),
  agentError: z.string().optional(),
  httpStatus: z.number().int().optional(),
  retryAfterMs: z.number().nonnegative().optional(),
  timeout: TimeoutSchema.optional(),
  outputIssues: z.array(OutputIssueSchema).optional(),
  answer: z.string().optional(),
  budget: BudgetExceededSchema.optional(),
  sessionId: z.string().optional(),
});

/**
 * A caller-side retry begins (emitted by {@link retryAgentRun}, never by a source): the failed
 * attempt's terminal was swallowed, and attempt `attempt` starts after `delayMs`.
 */
export interface RunRetrying {
  type: 'run.retrying';
  /** The number of the attempt about to start: 2 for the first retry. */
  attempt: number;
  /** How long the retry waits before it starts the attempt. */
  delayMs: number;
  /** The swallowed `terminal.failed` of the previous attempt. */
  failure: TerminalFailed;
}
/** Validates a {@link RunRetrying}. */
export const RunRetryingSchema = z.object({
  type: z.literal('run.retrying'),
  attempt: z.number(),
  delayMs: z.number(),
  failure: TerminalFailedSchema,
});

/** The last message of every run: `terminal.completed` or `terminal.failed` (see {@link isTerminal}). */
export type TerminalMessage<Output = unknown> = TerminalCompleted<Output> | TerminalFailed;
/**
 * A message of a run, the same for every agent, keyed by `type`. A run that is not unsubscribed emits
 * exactly one {@link TerminalMessage}, as its last message, and then completes; concatenating its
 * `assistant` texts gives the answer exactly once.
 *
 * | type | meaning |
 * |---|---|
 * | `session.started` / `session.resumed` | the agent reports its session (`sessionId`, and its `agentVersion` where it says it) |
 * | `assistant` | a delta of the answer |
 * | `assistant.withdrawn` | answer text already streamed is withdrawn (the agent changed it) |
 * | `assistant.thought` | thinking, whole, when the turn ends |
 * | `tool.call` / `tool.update` / `tool.completed` / `tool.failed` | a tool call, its partial output (replaces), its result |
 * | `permission.requested` / `permission.resolved` | the agent asks to use a tool; the decision, and who made it |
 * | `agent.retry` | the agent CLI itself is retrying |
 * | `agent.warning` | the agent reported a problem that does not end the run, or sent an event of a type agent-rx does not know |
 * | `run.retrying` | {@link retryAgentRun} starts another attempt |
 * | `terminal.completed` / `terminal.failed` | how the run ended |
 */
export type CliMessage<Output = unknown> =
  | SessionStarted
  | SessionResumed
  | AssistantMessage
  | AssistantWithdrawn
  | AssistantThought
  | ToolCall
  | ToolUpdate
  | ToolCompleted
  | ToolFailed
  | PermissionRequested
  | PermissionResolved
  | AgentRetry
  | AgentWarning
  | RunRetrying
  | TerminalCompleted<Output>
  | TerminalFailed;
/** Validates a {@link CliMessage}: one discriminated union on `type`. */
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
  PermissionRequestedSchema,
  PermissionResolvedSchema,
  AgentRetrySchema,
  AgentWarningSchema,
  RunRetryingSchema,
  TerminalCompletedSchema,
  TerminalFailedSchema,
]);
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
/** Whether a message is `permission.requested`. */
export const isPermissionRequested = is('permission.requested');
/** Whether a message is `permission.resolved`. */
export const isPermissionResolved = is('permission.resolved');
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

/**
 * `terminal.completed` or `terminal.failed`: the last message of a run.
 *
 * @example
 * // How a run ended, whatever came before.
 * runPi({ prompt }).pipe(filter(isTerminal)).subscribe((terminal) => {
 *   console.log(terminal.type === 'terminal.completed' ? terminal.stopReason : `${terminal.reason}: ${terminal.message}`);
 * });
 */
export function isTerminal(message: SessionMessage): message is TerminalMessage {
  return message.type === 'terminal.completed' || message.type === 'terminal.failed';
}


// ---------------------------------------------------------------------------------------------
// Prompts: text, images and files

/** The image formats every agent's model takes. */
export const IMAGE_MIME_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'] as const;
/** One of {@link IMAGE_MIME_TYPES}. */
export type ImageMimeType = (typeof IMAGE_MIME_TYPES)[number];
/** Validates an {@link ImageMimeType}. */
export const ImageMimeTypeSchema = z.enum(IMAGE_MIME_TYPES);

/** Text of a prompt. */
export interface TextPart {
  type: 'text';
  text: string;
}
/** Validates a {@link TextPart}. */
export const TextPartSchema = z.object({ type: z.literal('text'), text: z.string() });

/**
 * An image in a prompt: a file (`path`, read when the run is made or the command is read; its type
 * from its bytes) or its bytes (`data`: a `Uint8Array`, or base64 in JSON) with their `mimeType`.
 */
export type ImagePart =
  | { type: 'image'; path: string; mimeType?: ImageMimeType | undefined }
  | { type: 'image'; data: string | Uint8Array; mimeType: ImageMimeType };
/** Validates an {@link ImagePart}. */
export const ImagePartSchema = z.union([
  z.object({ type: z.literal('image'), path: z.string(), mimeType: ImageMimeTypeSchema.optional() }),
  z.object({ type: z.literal('image'), data: z.union([z.string(), z.custom<Uint8Array>((value) => value instanceof Uint8Array)]), mimeType: ImageMimeTypeSchema }),
]);

/** A text file the agent is to read: given to it with its path and content. */
export interface FilePart {
  type: 'file';
  path: string;
}
/** Validates a {@link FilePart}. */
export const FilePartSchema = z.object({ type: z.literal('file'), path: z.string() });

/** One part of a prompt: text, an image, or a file. */
export type PromptPart = TextPart | ImagePart | FilePart;
/** Validates a {@link PromptPart}. */
export const PromptPartSchema = z.union([TextPartSchema, ImagePartSchema, FilePartSchema]);

/**
 * A prompt: a string, or parts in order (a string in the list is a text part).
 *
 * @example
 * const prompt: Prompt = ['What does this screenshot show?', { type: 'image', path: 'shot.png' }];
 */
export type Prompt = string | readonly (string | PromptPart)[];

/**
 * The schema a typed answer must satisfy: a zod schema (its output type types the answer), or a
 * JSON Schema object. See `outputSchema` on runs and on session commands.
 */
export type OutputSchema<T = unknown> = z.ZodType<T> | JsonSchemaObject;
/** A JSON Schema, as a plain object (`{ type: 'object', properties: … }`). */
export type JsonSchemaObject = { readonly [key: string]: unknown };
/** Validates an {@link OutputSchema}: a zod schema or a plain object. */
export const OutputSchemaSchema = z.custom<OutputSchema>(
  (value) => value instanceof z.ZodType || (typeof value === 'object' && value !== null && !Array.isArray(value)),
  { error: 'must be a zod schema or a JSON Schema object' },
);

// ---------------------------------------------------------------------------------------------
// Sessions: one agent process, many turns

/**
 * What a caller sends a session. Every command is answered in the stream: `input.accepted` (it
 * starts a turn, is queued as a follow-up, goes into the running turn, or aborts it) or
 * `input.dropped` (it cannot be honoured, and why); a command never throws and never vanishes.
 * `id` is the caller's own, echoed as `commandId`; `text` is never empty.
 */
export type SessionCommand =
  /** Idle: starts a turn. A turn running: queued, and sent as a later turn's prompt (a follow-up). */
  | PromptCommand
  /** Kept by agent-rx and sent as the next turn's prompt; idle: starts a turn now. */
  | FollowUpCommand
  /** A turn running: into that turn, as the agent allows (the README's table). Idle: starts a turn. */
  | SteerCommand
  /** Ends the running turn (`turn.failed`, reason `aborted`); the process stays; queued follow-ups are dropped. */
  | { type: 'abort'; id?: string | undefined }
  /** Answers the pending `permission.requested` with this `requestId` (`permission.resolved`, by `caller`). */
  | { type: 'permission'; requestId: string; decision: PermissionDecision; id?: string | undefined };

/**
 * What a `prompt`, `follow-up` or `steer` carries: its `text`, then any `parts` (images, files, more
 * text) in order, and for a command that starts a turn an `outputSchema` its answer must satisfy.
 */
export interface PromptFields {
  text: string;
  /** Images, files and text after `text`, in order (an agent that cannot take one drops the command, `unsupported`). */
  parts?: PromptPart[] | undefined;
  /** The answer of the turn this command starts must satisfy it: `turn.completed.output`, else `turn.failed` (`output-schema`). */
  outputSchema?: OutputSchema | undefined;
  id?: string | undefined;
}
/** A `prompt` command (see {@link SessionCommand}). */
export interface PromptCommand extends PromptFields {
  type: 'prompt';
}
/** A `follow-up` command (see {@link SessionCommand}). */
export interface FollowUpCommand extends PromptFields {
  type: 'follow-up';
}
/** A `steer` command (see {@link SessionCommand}). */
export interface SteerCommand extends PromptFields {
  type: 'steer';
}
const promptFields = {
  text: z.string().min(1),
  parts: z.array(PromptPartSchema).optional(),
  outputSchema: OutputSchemaSchema.optional(),
  id: z.string().optional(),
};
/** Validates a {@link SessionCommand}. */
export const SessionCommandSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('prompt'), ...promptFields }),
  z.object({ type: z.literal('follow-up'), ...promptFields }),
  z.object({ type: z.literal('steer'), ...promptFields }),
  z.object({ type: z.literal('abort'), id: z.string().optional() }),
  z.object({ type: z.literal('permission'), requestId: z.string().min(1), decision: PermissionDecisionSchema, id: z.string().optional() }),
]);
/** The `type` of a {@link SessionCommand}: `prompt`, `follow-up`, `steer`, `abort` or `permission`. */
export type SessionCommandKind = SessionCommand['type'];

/** A turn began: `prompt` is what it was started with (a prompt, a follow-up, or a steer sent while idle). */
export interface TurnStarted {
  type: 'turn.started';
  /** 1 for the session's first turn. */
  turn: number;
  prompt: string;
  commandId?: string | undefined;
}
/** Validates a {@link TurnStarted}. */
export const TurnStartedSchema = z.object({
  type: z.literal('turn.started'),
  turn: z.number().int().positive(),
  prompt: z.string(),
  commandId: z.string().optional(),
});

/** A turn ended as the agent finished it; `usage` is that turn's own. */
export interface TurnCompleted {
  type: 'turn.completed';
  turn: number;
  stopReason: StopReason;
  agentStopReason?: string | undefined;
  usage?: Usage | undefined;
  /** With the command's `outputSchema`: the answer, parsed and validated (else the turn fails with `output-schema`). */
  output?: unknown;
}
/** Validates a {@link TurnCompleted}. */
export const TurnCompletedSchema = z.object({
  type: z.literal('turn.completed'),
  turn: z.number().int().positive(),
  stopReason: StopReasonSchema,
  agentStopReason: z.string().optional(),
  usage: UsageSchema.optional(),
  output: z.unknown().optional(),
});

/**
 * A turn ended without an answer: `aborted` (an abort), `agent-error` (the agent reported an error),
 * `timeout` (no output for `idleTimeoutMs`: the turn was aborted), or why the session's process
 * ended while the turn ran (`exit`, `stopped`, `spawn`, …; the session's `terminal.failed` follows).
 */
export interface TurnFailed {
  type: 'turn.failed';
  turn: number;
  reason: FailureReason;
  message: string;
  agentError?: string | undefined;
  httpStatus?: number | undefined;
  retryAfterMs?: number | undefined;
  timeout?: Timeout | undefined;
  /** With reason `output-schema`: how the answer failed the command's schema. */
  outputIssues?: OutputIssue[] | undefined;
  /** With reason `output-schema`: the answer that failed (bounded). */
  answer?: string | undefined;
  /** With reason `budget`: which limit was crossed, and what was spent. */
  budget?: BudgetExceeded | undefined;
}
/** Validates a {@link TurnFailed}. */
export const TurnFailedSchema = z.object({
  type: z.literal('turn.failed'),
  turn: z.number().int().positive(),
  reason: FailureReasonSchema,
  message: z.string(),
  agentError: z.string().optional(),
  httpStatus: z.number().int().optional(),
  retryAfterMs: z.number().nonnegative().optional(),
  timeout: TimeoutSchema.optional(),
  outputIssues: z.array(OutputIssueSchema).optional(),
  answer: z.string().optional(),
  budget: BudgetExceededSchema.optional(),
});

/** The kinds of command, and `invalid` for a value that is not a command. */
export type InputKind = 'prompt' | 'follow-up' | 'steer' | 'abort' | 'permission' | 'invalid';
/** Validates an {@link InputKind}. */
export const InputKindSchema = z.enum(['prompt', 'follow-up', 'steer', 'abort', 'permission', 'invalid']);

/**
 * A command was taken: `as` says what it does. `turn` started a turn (`turn` is the new one);
 * `follow-up` is queued to run after turn `turn`; `steer` went into turn `turn`; `abort` ends turn
 * `turn`; `permission` answered the request `requestId` of turn `turn`.
 */
export interface InputAccepted {
  type: 'input.accepted';
  kind: 'prompt' | 'follow-up' | 'steer' | 'abort' | 'permission';
  as: 'turn' | 'follow-up' | 'steer' | 'abort' | 'permission';
  turn: number;
  text?: string | undefined;
  requestId?: string | undefined;
  commandId?: string | undefined;
}
/** Validates an {@link InputAccepted}. */
export const InputAcceptedSchema = z.object({
  type: z.literal('input.accepted'),
  kind: InputKindSchema.exclude(['invalid']),
  as: z.enum(['turn', 'follow-up', 'steer', 'abort', 'permission']),
  turn: z.number().int().positive(),
  text: z.string().optional(),
  requestId: z.string().optional(),
  commandId: z.string().optional(),
});

/**
 * A command that cannot be honoured, or a queued follow-up that will not run: `no-turn` (an abort
 * with no turn running), `aborted` (a follow-up dropped by an abort), `rejected` (the agent refused
 * it; `message` says why), `invalid` (not a command), `session-ended` (the session's process ended
 * first), `no-request` (a `permission` command for no pending request: unknown, or already resolved),
 * `unsupported` (a part the agent cannot take, or a part that cannot be read: `message` names it).
 */
export interface InputDropped {
  type: 'input.dropped';
  kind: InputKind;
  reason: 'no-turn' | 'aborted' | 'rejected' | 'invalid' | 'session-ended' | 'no-request' | 'unsupported';
  message: string;
  text?: string | undefined;
  requestId?: string | undefined;
  commandId?: string | undefined;
}
/** Validates an {@link InputDropped}. */
export const InputDroppedSchema = z.object({
  type: z.literal('input.dropped'),
  kind: InputKindSchema,
  reason: z.enum(['no-turn', 'aborted', 'rejected', 'invalid', 'session-ended', 'no-request', 'unsupported']),
  message: z.string(),
  text: z.string().optional(),
  requestId: z.string().optional(),
  commandId: z.string().optional(),
});

/**
 * A message of a session: every {@link CliMessage} plus `turn.started`, `turn.completed`, `turn.failed`,
 * `input.accepted` and `input.dropped`. Turns never overlap and each ends exactly once; every content
 * message lies inside a turn; the session ends with exactly one terminal message, last.
 */
export type SessionMessage<Output = unknown> = CliMessage<Output> | TurnStarted | TurnCompleted | TurnFailed | InputAccepted | InputDropped | SessionPassivated;
/**
 * Validates a {@link SessionMessage}: the run messages (content inside turns, `session.*`, and exactly
 * one `terminal.*` last, for the session as a whole) and the session's own turn and input messages.
 */
export const SessionMessageSchema = z.discriminatedUnion('type', [
  ...CliMessageSchema.options,
  TurnStartedSchema,
  TurnCompletedSchema,
  TurnFailedSchema,
  InputAcceptedSchema,
  InputDroppedSchema,
  SessionPassivatedSchema,
]);
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
/** Whether a message is `session.passivated`. */
export const isSessionPassivated = is('session.passivated');

/**
 * `turn.completed` or `turn.failed`: the end of a turn.
 *
 * @example
 * // One line for each turn of a session.
 * commands.pipe(piSession(), filter(isTurnEnd)).subscribe((end) => {
 *   console.log(`turn ${end.turn}:`, end.type === 'turn.completed' ? end.stopReason : end.message);
 * });
 */
export function isTurnEnd(message: SessionMessage): message is TurnCompleted | TurnFailed {
  return message.type === 'turn.completed' || message.type === 'turn.failed';
}

// ---------------------------------------------------------------------------------------------
// Each declared type is exactly what its schema validates. When a field, its type or whether it
// is optional differs, the line of that pair fails to compile ("Type 'false' does not satisfy the
// constraint 'true'"): `npm run typecheck`, the build and the docs stop there. Change both together.

type _MessageTypesMatchTheirSchemas = [
  Holds<Same<Usage, z.infer<typeof UsageSchema>>>,
  Holds<Same<InvalidOutputLine, z.infer<typeof InvalidOutputLineSchema>>>,
  Holds<Same<SessionStarted, z.infer<typeof SessionStartedSchema>>>,
  Holds<Same<SessionResumed, z.infer<typeof SessionResumedSchema>>>,
  Holds<Same<AssistantMessage, z.infer<typeof AssistantSchema>>>,
  Holds<Same<AssistantWithdrawn, z.infer<typeof AssistantWithdrawnSchema>>>,
  Holds<Same<AssistantThought, z.infer<typeof AssistantThoughtSchema>>>,
  Holds<Same<ToolCall, z.infer<typeof ToolCallSchema>>>,
  Holds<Same<ToolUpdate, z.infer<typeof ToolUpdateSchema>>>,
  Holds<Same<ToolCompleted, z.infer<typeof ToolCompletedSchema>>>,
  Holds<Same<ToolFailed, z.infer<typeof ToolFailedSchema>>>,
  Holds<Same<PermissionDecision, z.infer<typeof PermissionDecisionSchema>>>,
  Holds<Same<PermissionRequested, z.infer<typeof PermissionRequestedSchema>>>,
  Holds<Same<PermissionResolver, z.infer<typeof PermissionResolverSchema>>>,
  Holds<Same<PermissionResolved, z.infer<typeof PermissionResolvedSchema>>>,
  Holds<Same<AgentRetry, z.infer<typeof AgentRetrySchema>>>,
  Holds<Same<AgentWarning, z.infer<typeof AgentWarningSchema>>>,
  Holds<Same<StopReason, z.infer<typeof StopReasonSchema>>>,
  Holds<Same<TerminalCompleted, z.infer<typeof TerminalCompletedSchema>>>,
  Holds<Same<Timeout, z.infer<typeof TimeoutSchema>>>,
  Holds<Same<BudgetLimit, z.infer<typeof BudgetExceededSchema>['limit']>>,
  Holds<Same<BudgetSpent, z.infer<typeof BudgetSpentSchema>>>,
  Holds<Same<BudgetExceeded, z.infer<typeof BudgetExceededSchema>>>,
  Holds<Same<FailureReason, z.infer<typeof FailureReasonSchema>>>,
  Holds<Same<TerminalFailed, z.infer<typeof TerminalFailedSchema>>>,
  Holds<Same<RunRetrying, z.infer<typeof RunRetryingSchema>>>,
  Holds<Same<CliMessage, z.infer<typeof CliMessageSchema>>>,
  Holds<Same<SessionCommand, z.infer<typeof SessionCommandSchema>>>,
  Holds<Same<TurnStarted, z.infer<typeof TurnStartedSchema>>>,
  Holds<Same<TurnCompleted, z.infer<typeof TurnCompletedSchema>>>,
  Holds<Same<TurnFailed, z.infer<typeof TurnFailedSchema>>>,
  Holds<Same<InputKind, z.infer<typeof InputKindSchema>>>,
  Holds<Same<InputAccepted, z.infer<typeof InputAcceptedSchema>>>,
  Holds<Same<InputDropped, z.infer<typeof InputDroppedSchema>>>,
  Holds<Same<SessionPassivated, z.infer<typeof SessionPassivatedSchema>>>,
  Holds<Same<SessionMessage, z.infer<typeof SessionMessageSchema>>>,
];
