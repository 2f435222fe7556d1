/**
 * `agent-rx/dialects`: how each agent's output is read, for code that builds its own pipeline or
 * its own agent definition from the parts of an existing one: each agent's dialect (its events'
 * schemas, text readers, turn ends, stderr readers), its session protocol, and the byte-level and
 * JSON-RPC readers under them. The main entry (`agent-rx`) has what running an agent needs; these
 * parts may change with the agents' CLIs.
 *
 * @example
 * import { from } from 'rxjs';
 * import { agentOutputToMessages } from 'agent-rx';
 * import { claudeDialect } from 'agent-rx/dialects';
 *
 * // A recorded Claude Code run, read as a run of it would be.
 * from(recordedItems).pipe(agentOutputToMessages(claudeDialect())).subscribe(console.log);
 *
 * @module agent-rx/dialects
 */

export { acpClientProtocol, type AcpClientState, type AcpProtocolOptions } from './agents/acp/client.js';
export { acpDialect, createAcpTextReader, acpTurnEnd, acpEventSchemas, type AcpState, type AcpEvent, type HeldCall, type AcpDialectOptions } from './agents/acp/dialect.js';
export { piSessionProtocol, type PiSessionState } from './agents/pi/session.js';
export { claudeSessionProtocol, type ClaudeSessionState } from './agents/claude/session.js';
export { codexAppServerProtocol, type AppServerSessionState, type AppServerSessionOptions } from './agents/codex/app-server/session.js';
export { codexAppServerDialect, createAppServerTextReader, appServerTurnEnd, type AppServerState } from './agents/codex/app-server/dialect.js';
export { appServerEventSchemas, type AppServerEvent } from './agents/codex/app-server/events.js';
export { parseJsonRpcLine } from './agents/shared/json-rpc.js';
export { piDialect, piOutputToMessages, readPiText, piTurnEnd, type PiState, type PiDialectOptions } from './agents/pi/dialect.js';
export { piEventSchemas, parsePiLine, type PiEvent, type PiMessage } from './agents/pi/events.js';
export { parsePiBytes } from './agents/pi/parse-bytes.js';
export { ByteLine } from './agents/shared/byte-line.js';
export { claudeDialect, claudeOutputToMessages, createClaudeTextReader, claudeTurnEnd, type ClaudeState, type ClaudeDialectOptions, type StructuredAnswer } from './agents/claude/dialect.js';
export { claudeEventSchemas, type ClaudeEvent } from './agents/claude/events.js';
export { codexDialect, codexOutputToMessages, createCodexTextReader, codexTurnEnd, codexStderrLine, type CodexState, type CodexDialectOptions } from './agents/codex/dialect.js';
export { codexEventSchemas, type CodexEvent, type CodexItem, type CodexUsage } from './agents/codex/events.js';
export { geminiEventSchemas, type GeminiEvent, type GeminiStats } from './agents/gemini/events.js';
export {
  geminiDialect,
  geminiOutputToMessages,
  createGeminiTextReader,
  geminiTurnEnd,
  geminiStderrLine,
  mapGeminiStderrLine,
  type GeminiState,
  type GeminiDialectOptions,
} from './agents/gemini/dialect.js';
export { qwenDialect, qwenOutputToMessages, createQwenTextReader, qwenTurnEnd, qwenStderrLine, type QwenState, type QwenDialectOptions } from './agents/qwen/dialect.js';
export { qwenEventSchemas, type QwenEvent } from './agents/qwen/events.js';
