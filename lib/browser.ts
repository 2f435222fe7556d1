/**
 * `agent-rx/browser`: what a browser (or any JavaScript without Node) needs to consume runs and
 * sessions served over server-sent events: the message types, schemas and guards,
 * {@link fromAgentEventSource} and {@link fromSessionEventSource}, and {@link retryAgentRun} with
 * {@link isRetryableFailure}. It imports nothing from Node: only rxjs and zod.
 *
 * @module agent-rx/browser
 */

// Server-sent events → Observable
export { fromAgentEventSource, type FromAgentEventSourceOptions } from './browser/from-agent-event-source.js';
export { fromSessionEventSource, type FromSessionEventSourceOptions } from './browser/from-session-event-source.js';
export type { EventSourceLike, EventSourceConstructor, EventLike } from './browser/event-source-like.js';

// Caller-side retry (a wait holds no process: it works the same on both sides of the wire)
export { retryAgentRun, RETRY_BASE_DELAY_MS, RETRY_MAX_DELAY_MS, type RetryAgentRunOptions } from './operators/retry-agent-run.js';
export { isRetryableFailure } from './operators/is-retryable-failure.js';

// A run folded into one result (text, thoughts, tool calls, usage, terminal), as an operator or a promise
export {
  collectRun,
  collectRunResult,
  RunFailedError,
  type CollectRunResultOptions,
  type RunResult,
  type BaseRunResult,
  type CompletedRunResult,
  type FailedRunResult,
  type IncompleteRunResult,
  type RunOutput,
  type RunAttempt,
  type RunToolCall,
  type RunToolCallStatus,
} from './operators/collect-run.js';

// A one-prompt session read as a run
export { sessionToRun } from './operators/session-to-run.js';

// Messages
export {
  CliMessageSchema,
  UsageSchema,
  InvalidOutputLineSchema,
  FailureReasonSchema,
  StopReasonSchema,
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
  PermissionDecisionSchema,
  PermissionResolverSchema,
  AgentRetrySchema,
  AgentWarningSchema,
  RunRetryingSchema,
  TerminalCompletedSchema,
  TerminalFailedSchema,
  TimeoutSchema,
  TOOL_KINDS,
  PERMISSION_DECISIONS,
  SessionCommandSchema,
  SessionMessageSchema,
  TurnStartedSchema,
  TurnCompletedSchema,
  TurnFailedSchema,
  InputKindSchema,
  InputAcceptedSchema,
  InputDroppedSchema,
  isTurnStarted,
  isTurnCompleted,
  isTurnFailed,
  isTurnEnd,
  isInputAccepted,
  isInputDropped,
  isSessionStarted,
  isSessionResumed,
  isAssistant,
  isAssistantWithdrawn,
  isAssistantThought,
  isToolCall,
  isToolUpdate,
  isToolCompleted,
  isToolFailed,
  isPermissionRequested,
  isPermissionResolved,
  isAgentRetry,
  isAgentWarning,
  isRunRetrying,
  isTerminalCompleted,
  isTerminalFailed,
  isTerminal,
} from './messages.js';
export type {
  CliMessage,
  CliMessageType,
  Usage,
  InvalidOutputLine,
  FailureReason,
  StopReason,
  SessionStarted,
  SessionResumed,
  AssistantMessage,
  AssistantWithdrawn,
  AssistantThought,
  ToolCall,
  ToolKind,
  ToolUpdate,
  ToolCompleted,
  ToolFailed,
  PermissionRequested,
  PermissionResolved,
  PermissionDecision,
  PermissionResolver,
  AgentRetry,
  AgentWarning,
  RunRetrying,
  TerminalCompleted,
  TerminalFailed,
  TerminalMessage,
  Timeout,
  SessionCommand,
  SessionCommandKind,
  SessionMessage,
  SessionMessageType,
  TurnStarted,
  TurnCompleted,
  TurnFailed,
  InputKind,
  InputAccepted,
  InputDropped,
} from './messages.js';