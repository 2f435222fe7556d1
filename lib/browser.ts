// agent-rx/browser: what a browser (or any JavaScript without Node) needs to consume runs served
// over server-sent events. It imports nothing from Node: only rxjs and zod.

// Server-sent events → Observable
export { fromAgentEventSource, type FromAgentEventSourceOptions } from './browser/from-agent-event-source.js';
export type { EventSourceLike, EventSourceConstructor, EventLike } from './browser/event-source-like.js';

// Messages
export {
  CliMessageSchema,
  UsageSchema,
  InvalidOutputLineSchema,
  FailureReasonSchema,
  SessionStartedSchema,
  SessionResumedSchema,
  AssistantSchema,
  AssistantThoughtSchema,
  ToolCallSchema,
  ToolUpdateSchema,
  ToolCompletedSchema,
  ToolFailedSchema,
  AgentRetrySchema,
  RunRetryingSchema,
  TerminalCompletedSchema,
  TerminalFailedSchema,
  isSessionStarted,
  isSessionResumed,
  isAssistant,
  isAssistantThought,
  isToolCall,
  isToolUpdate,
  isToolCompleted,
  isToolFailed,
  isAgentRetry,
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
  SessionStarted,
  SessionResumed,
  AssistantMessage,
  AssistantThought,
  ToolCall,
  ToolUpdate,
  ToolCompleted,
  ToolFailed,
  AgentRetry,
  RunRetrying,
  TerminalCompleted,
  TerminalFailed,
  TerminalMessage,
} from './messages.js';