/**
 * `agent-rx`: runs the pi, Claude Code, Codex, Gemini CLI and Qwen Code coding agents as cold RxJS
 * Observables of one typed message stream ({@link CliMessage}). Each subscription starts one agent
 * process; the stream ends with exactly one terminal message and completes; unsubscribing stops
 * the agent and its whole process tree. Failures arrive in the stream, never as errors.
 *
 * @example
 * runPi({ prompt: 'Fix the failing test' })
 *   .pipe(retryAgentRun())
 *   .subscribe((message) => {
 *     if (message.type === 'assistant') process.stdout.write(message.text);
 *   });
 *
 * @module agent-rx
 */

// Sources
export { processLines } from './sources/process-lines.js';

// Sessions: one agent process, many turns
export { acpSession, type AcpSessionOptions, type AcpClientOptions } from './sources/acp-session.js';
export type { AcpClientHandlers } from './agents/acp/client.js';
export { PERMISSION_PRESETS, READ_ONLY_KINDS, type PermissionPolicy, type PermissionPreset, type PermissionCallback, type PermissionOptions, type RunPermissionOptions } from './operators/permission-policy.js';
export { serveAcp, ACP_STEER_METHOD, ACP_FOLLOW_UP_METHOD, type AcpServer, type ServeAcpOptions, type AcpSessionFactory, type AcpSessionRequest } from './serve/serve-acp.js';
export { processSession, type SessionSpec } from './sessions/process-session.js';
export type { SettingsOverlay } from './agents/definition.js';
export type { SessionProtocol, SessionPromptAbilities, SessionAsk, ProtocolOutput, ProtocolFact, ProtocolReaction, ProtocolChannel, ToolsKilledEvent, PermissionAsk } from './operators/session-protocol.js';
export type { TurnOutcome, SessionInput, SessionEffect, TurnTrace } from './sessions/session-machine.js';

// Operators
export { parseJsonLine, type ParseJsonLineOptions, type ParsedItem, type EventValidator } from './operators/parse-json-line.js';
export { collectInvalidLines, type CollectInvalidLinesOptions } from './operators/collect-invalid-lines.js';
export { snapshotToDelta, type SnapshotToDeltaOptions, type TextReading, type TextReader } from './operators/snapshot-to-delta.js';
export { bufferThinkingUntilTurnEnd, type BufferThinkingOptions, type TurnEnd } from './operators/buffer-thinking-until-turn-end.js';
export { mapToCliMessage } from './operators/map-to-cli-message.js';
export { budget, CHARACTERS_PER_TOKEN, type BudgetOptions, type BudgetLimits, type TokenPrice } from './operators/budget.js';
export { checkRunOutput } from './operators/turn-output.js';
export type { OutputContract } from './operators/output-schema.js';
export type { SpecPrompt, SpecPromptOptions } from './agents/shared/option-schemas.js';
export { MAX_IMAGE_BYTES, MAX_FILE_BYTES, type PromptContent, type ContentPart, type RunPrompt, type PromptAbilities } from './operators/prompt-parts.js';
export { tool, type HostTool, type ToolDefinition, type ToolRunContext, type ToolAnswer } from './tools/host-tool.js';
export { HOST_TOOLS_SERVER, type McpServerConfig, type McpServers, type McpStdioServer, type McpHttpServer } from './tools/mcp-servers.js';
export type { ToolOptions } from './tools/with-host-tools.js';
export { agentOutputToMessages } from './operators/agent-output-to-messages.js';
export type { Dialect, MessageMapping, Conclusion, FailureDetails, ToolVocabulary } from './operators/dialect.js';
export { knownTypes } from './operators/unknown-types.js';
export type {
  AgentEvent,
  EventItem,
  InvalidLineItem,
  TextItem,
  TextChannel,
  WithdrawItem,
  StderrLineItem,
  RunExit,
  InvalidOutputSummary,
  PipelineItem,
} from './operators/items.js';


// The agent table
// The agents: each one's definition, options, run and session (runPi, piSession, …), and the table of them
export * from './agent-table.js';
export { runAgent } from './sources/run-agent.js';
export { agentSession } from './sessions/agent-session.js';
export { createAgentPool, type AgentPool, type AgentPoolOptions, type PooledRunOptions } from './sessions/agent-pool.js';
export { poolSessions, type SessionPool, type SessionPoolOptions } from './sessions/session-pool.js';
export { folderStore, takeSnapshot, restoreSnapshot, parseSnapshot, ConversationSnapshotSchema, type ConversationOptions, type ConversationStore, type ConversationSnapshot, type ConversationFile, type ConversationPlace } from './sessions/conversation-snapshot.js';
export { passivatingSession, type PassivationSpec } from './sessions/passivating-session.js';
export type { AgentSpending, TelemetrySettings } from './agents/definition.js';
export type { AgentBudget, AgentTelemetry, WatchOptions } from './agents/shared/watch-options.js';
export type { AgentDefinition, AgentOptionSchemas, AgentFlag, AgentSetup, ConversationKeeping, RunInvocation, ProcessRunInvocation, SessionRunInvocation, SessionInvocation, ExecutableLookup, NativeBinary, PackageScript, Platform, RunOverlay } from './agents/definition.js';




// Messages (schemas, types, guards), fromAgentEventSource, retryAgentRun and isRetryableFailure:
// the browser-safe entry is an explicit barrel itself, so re-exporting it whole leaks nothing and
// keeps one list of names.
export * from './browser.js';

// Process layer
export { stopAllRuns, activeRunCount } from './process/run-registry.js';
export { RUN_MARKER_ENV } from './process/run-marker.js';
export type { ProcessItem, ProcessLine, ProcessLineBytes, ProcessOverlongLine, ProcessStderrLine, ProcessExit, SpawnProblem, StartFailure, StopCause } from './process/items.js';
export type { ProcessOptions, InterruptOptions, StopReport, StdinSource } from './process/options.js';
export type { TraceContext } from './process/trace-context.js';
