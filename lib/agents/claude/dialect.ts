import type { OperatorFunction } from 'rxjs';
import type { CliMessage, OutputIssue, StopReason, Usage } from '../../messages.js';
import { agentOutputToMessages } from '../../operators/agent-output-to-messages.js';
import type { TurnEnd } from '../../operators/buffer-thinking-until-turn-end.js';
import type { Conclusion, Dialect } from '../../operators/dialect.js';
import type { AgentEvent } from '../../operators/items.js';
import { boundedAnswer, outputFailureMessage } from '../../operators/output-schema.js';
import type { TextReader, TextReading } from '../../operators/snapshot-to-delta.js';
import type { ProcessItem } from '../../process/items.js';
import { contentText } from '../shared/content.js';
import { field, narrowEvents, numberOf, stringOf } from '../shared/events.js';
import { installHint } from '../shared/options.js';
import { SessionHeader } from '../shared/session.js';
import { toolResultMessages, toolUseMessages } from '../shared/tool-blocks.js';
import { ToolCalls } from '../shared/tool-calls.js';
import { usageOf } from '../shared/usage.js';
import { knownTypes } from '../../operators/unknown-types.js';
import { CLAUDE_LINE_TYPES, claudeEventSchemas, type ClaudeEvent, type ClaudeEventOf } from './events.js';
import { claudeToolContent } from './tool-content.js';
import { claudeTools } from './tools.js';

const known = narrowEvents<ClaudeEvent>();

/**
 * Reads Claude Code's text, one reader per run. `text_delta` and `thinking_delta` stream events
 * carry true deltas, keyed by API message id and block index. The block-level `assistant` lines
 * repeat each whole block, but do not say which block of the message they are: they come one per
 * block and in order, so the reader counts them per message to key them like the deltas, and
 * snapshotToDelta emits nothing for what was already streamed (or the whole block when partial
 * messages are off).
 *
 * A stalled stream that the CLI abandons ends with a `message_stop` line carrying
 * `abandoned_blocks`; the CLI then asks again without streaming and prints the answer as
 * block-level lines under a new message id, never streamed. Those are keyed as the abandoned
 * message's blocks, so what was already streamed is not emitted again (and what differs is
 * withdrawn, not doubled). Synthetic API-error lines and sub-agent output are not part of the answer.
 *
 * @example
 * lines.pipe(parseJsonLine({ schemas: claudeEventSchemas }), snapshotToDelta({ createReader: createClaudeTextReader }));
 */
export function createClaudeTextReader(): TextReader {
  const blocksSeen = new Map<string, number>();
  const streamed = new Set<string>();
  // Stream events name their message in `api_message_id`; where a version does not, the id of
  // the last `message_start` event does.
  let streamingMessage = '';
  let abandoned: string | undefined;
  const aliases = new Map<string, string>();
  return (event): TextReading | readonly TextReading[] | null => {
    const line = known(event, 'stream_event');
    if (line !== null) {
      const inner = line.event;
      if (line.parent_tool_use_id != null) return null;
      if (inner.type === 'message_start') streamingMessage = stringOf(field(field(inner, 'message'), 'id')) ?? '';
      const id = line.api_message_id ?? streamingMessage;
      streamed.add(id);
      if (inner.type === 'message_stop') {
        const gaveUp = stringOf(field(line['abandoned_blocks'], 'api_message_id'));
        if (gaveUp !== undefined) abandoned = gaveUp;
      }
      if (inner.type !== 'content_block_delta') return null;
      const key = `${id}:${String(inner.index ?? 0)}`;
      const delta = field(inner, 'delta');
      const type = field(delta, 'type');
      if (type === 'text_delta') return textReading('assistant', key, stringOf(field(delta, 'text')));
      if (type === 'thinking_delta') return textReading('thought', key, stringOf(field(delta, 'thinking')));
      return null;
    }
    const block = known(event, 'assistant');
    if (block === null) return null;
    const { id, content } = block.message;
    const first = blocksSeen.get(id) ?? 0;
    blocksSeen.set(id, first + content.length);
    if (block.is_api_error_message === true || block.error !== undefined || block.parent_tool_use_id != null) return null;
    // The first answer line of a message never streamed, after an abandoned stream: the fallback.
    if (abandoned !== undefined && !streamed.has(id) && !aliases.has(id)) {
      aliases.set(id, abandoned);
      abandoned = undefined;
    }
    const keyId = aliases.get(id) ?? id;
    const readings: TextReading[] = [];
    content.forEach((part, offset) => {
      const key = `${keyId}:${String(first + offset)}`;
      // A block-level line holds the block's final text.
      if (part.type === 'text') readings.push({ channel: 'assistant', key, snapshot: stringOf(field(part, 'text')) ?? '', final: true });
      if (part.type === 'thinking') readings.push({ channel: 'thought', key, snapshot: stringOf(field(part, 'thinking')) ?? '', final: true });
    });
    return readings;
  };
}

function textReading(channel: TextReading['channel'], key: string, delta: string | undefined): TextReading | null {
  return delta === undefined ? null : { channel, key, delta };
}

/**
 * A message ends its turn at `message_delta` (unless it stopped for tools); the run at `result`.
 *
 * @example
 * items.pipe(bufferThinkingUntilTurnEnd({ turnEnd: claudeTurnEnd }));
 */
export function claudeTurnEnd(event: AgentEvent): TurnEnd {
  if (event.type === 'result') return 'final';
  const line = known(event, 'stream_event');
  if (line === null || line.event.type !== 'message_delta' || line.parent_tool_use_id != null) return null;
  const stopReason = field(field(line.event, 'delta'), 'stop_reason');
  if (typeof stopReason !== 'string') return null;
  return stopReason === 'tool_use' ? 'tool-use' : 'final';
}

/** The Claude Code dialect's state for one run (created by `createState`). */
export interface ClaudeState {
  readonly session: SessionHeader;
  readonly tools: ToolCalls;
  result: ClaudeEventOf<'result'> | undefined;
  /** The text of the last synthetic API-error line. */
  apiError: string | undefined;
  /** The answer given through the `StructuredOutput` tool (`--json-schema`), which is no tool call of the run's. */
  readonly structured: StructuredAnswer;
}

/** What the `StructuredOutput` calls of a run said. */
export interface StructuredAnswer {
  /** The ids of its calls: their results are not the run's either. */
  readonly calls: Set<string>;
  /** The input of the last call: the answer last tried. */
  lastInput: unknown;
  /** Why Claude Code refused the last answer (its `tool_result` error), until one is taken. */
  lastError: string | undefined;
}

/**
 * The tool Claude Code offers the model with `--json-schema`: the model gives its answer as the
 * tool's input, which the CLI checks against the schema (an error result makes the model try
 * again) and reports as the `result` line's `structured_output`.
 */
export const STRUCTURED_OUTPUT_TOOL = 'StructuredOutput';

/** Options of {@link claudeDialect}. */
export interface ClaudeDialectOptions {
  /** The run continues an existing session: `system/init` becomes `session.resumed`. */
  readonly resuming?: boolean;
}

const CLAUDE_INSTALL_HINT = installHint('Claude Code', '@anthropic-ai/claude-code');

/**
 * The Claude Code dialect (`claude -p --output-format stream-json`), for `agentOutputToMessages`.
 *
 * @example
 * // What runClaudeCode does, by hand: Claude Code's print mode read as messages.
 * processLines('claude', ['-p', '--output-format', 'stream-json', '--verbose', '--', prompt])
 *   .pipe(agentOutputToMessages(claudeDialect()))
 *   .subscribe(render);
 */
export function claudeDialect(options: ClaudeDialectOptions = {}): Dialect<ClaudeState> {
  const resuming = options.resuming === true;
  return {
    name: 'Claude Code',
    installHint: CLAUDE_INSTALL_HINT,
    tools: claudeTools,
    schemas: claudeEventSchemas,
    createTextReader: createClaudeTextReader,
    turnEnd: claudeTurnEnd,
    createState: () => ({
      session: new SessionHeader(resuming),
      tools: new ToolCalls(),
      result: undefined,
      apiError: undefined,
      structured: { calls: new Set(), lastInput: undefined, lastError: undefined },
    }),
    map: mapClaudeEvent,
    conclude: concludeClaude,
    lastError,
    failureDetails: (state) => {
      const status = state.result?.is_error === true ? state.result.api_error_status : undefined;
      return typeof status === 'number' ? { httpStatus: status } : {};
    },
    sessionId: (state) => state.session.sessionId ?? state.result?.session_id,
    unknownType: knownTypes(CLAUDE_LINE_TYPES),
  };
}

/**
 * Claude Code's whole pipeline: `agentOutputToMessages(claudeDialect(options))`. On its own it
 * replays recorded output.
 *
 * @example
 * from(recordedItems).pipe(claudeOutputToMessages()).subscribe(console.log);
 */
export function claudeOutputToMessages(options: ClaudeDialectOptions = {}): OperatorFunction<ProcessItem, CliMessage> {
  return agentOutputToMessages(claudeDialect(options));
}

function mapClaudeEvent(state: ClaudeState, event: AgentEvent): readonly CliMessage[] {
  switch (event.type) {
    case 'system':
      return onSystem(state, event);
    case 'assistant': {
      const line = known(event, 'assistant');
      if (line === null) return [];
      if (line.is_api_error_message === true || line.error !== undefined) state.apiError = contentText(line.message.content) || line.error;
      return toolUseMessages(
        state.tools,
        line.message.content.filter((block) => !takeStructuredCall(state.structured, block)),
      );
    }
    case 'user':
      return onUser(state, known(event, 'user'));
    case 'result': {
      const result = known(event, 'result');
      if (result !== null) state.result = result;
      return [];
    }
    default:
      return [];
  }
}

// The answer is not a tool call: a `StructuredOutput` call and its result are kept out of the content.
function takeStructuredCall(structured: StructuredAnswer, block: unknown): boolean {
  const id = stringOf(field(block, 'id'));
  if (field(block, 'type') !== 'tool_use' || field(block, 'name') !== STRUCTURED_OUTPUT_TOOL || id === undefined) return false;
  structured.calls.add(id);
  structured.lastInput = field(block, 'input');
  return true;
}

function takeStructuredResult(structured: StructuredAnswer, block: unknown): boolean {
  const id = stringOf(field(block, 'tool_use_id'));
  if (field(block, 'type') !== 'tool_result' || id === undefined || !structured.calls.has(id)) return false;
  structured.lastError = field(block, 'is_error') === true ? contentText(field(block, 'content')) : undefined;
  return true;
}

/**
 * Tool results, with what the tool's own account adds (`tool_use_result`, one per line: the line
 * of one result): the images it gave back, the file an Edit or a Write changed.
 */
function onUser(state: ClaudeState, line: ClaudeEventOf<'user'> | null): readonly CliMessage[] {
  const content = line?.message.content;
  if (line === null || content === undefined || typeof content === 'string') return [];
  const blocks = content.filter((block) => !takeStructuredResult(state.structured, block)).map(toolReferencesAsText);
  const results = blocks.filter((block) => block.type === 'tool_result');
  const account = results.length === 1 ? line.tool_use_result : undefined;
  return toolResultMessages(state.tools, blocks).map((message) => {
    if (message.type !== 'tool.completed') return message;
    const block = results.find((result) => result['tool_use_id'] === message.toolCallId);
    const toolContent = claudeToolContent(message.name, field(block, 'content'), account);
    return toolContent.length === 0 ? message : { ...message, content: toolContent };
  });
}

/**
 * A `ToolSearch` result (Claude Code 2.1.332, which defers MCP tools and some of its own until the
 * model loads them) holds `tool_reference` blocks, no text: its output is the names of the tools it
 * loaded, one a line.
 */
function toolReferencesAsText<B extends { readonly type: string }>(block: B): B {
  const content = field(block, 'content');
  if (block.type !== 'tool_result' || !Array.isArray(content) || !content.some((part) => field(part, 'type') === 'tool_reference')) return block;
  const names = content.map((part) => (field(part, 'type') === 'tool_reference' ? stringOf(field(part, 'tool_name')) : undefined)).filter((name) => name !== undefined);
  const text = [...names, contentText(content)].filter((line) => line !== '').join('\n');
  return { ...block, content: [{ type: 'text', text }] };
}

function onSystem(state: ClaudeState, event: AgentEvent): readonly CliMessage[] {
  const line = known(event, 'system');
  if (line === null) return [];
  if (line.subtype === 'init' && line.session_id !== undefined) return state.session.announce(line.session_id, { agentVersion: line.claude_code_version, model: line.model });
  if (line.subtype === 'api_retry') {
    const status = numberOf(field(line, 'error_status'));
    const error = stringOf(field(line, 'error')) ?? 'error';
    const attempt = numberOf(field(line, 'attempt'));
    const maxAttempts = numberOf(field(line, 'max_retries'));
    const delayMs = numberOf(field(line, 'retry_delay_ms'));
    return [
      {
        type: 'agent.retry',
        ...(attempt === undefined ? {} : { attempt }),
        ...(maxAttempts === undefined ? {} : { maxAttempts }),
        ...(delayMs === undefined ? {} : { delayMs }),
        reason: status === undefined ? error : `${String(status)} ${error}`,
      },
    ];
  }
  return [];
}

/** The error the CLI reported, with the HTTP status first when it gave one (`429 API Error: ...`). */
function lastError(state: ClaudeState): string | undefined {
  const result = state.result;
  if (result?.is_error === true) {
    const described = result.result ?? result.errors?.join('; ') ?? result.terminal_reason ?? result.subtype;
    const status = result.api_error_status;
    return typeof status === 'number' && !described.startsWith(String(status)) ? `${String(status)} ${described}` : described;
  }
  return state.apiError;
}

// The Messages API's stop reasons; a stop sequence is a normal end of the answer.
function claudeStopReason(value: string | null | undefined): StopReason {
  switch (value) {
    case undefined:
    case null:
    case 'end_turn':
    case 'stop_sequence':
      return 'end_turn';
    case 'max_tokens':
    case 'tool_use':
    case 'refusal':
      return value;
    default:
      return 'other';
  }
}

function concludeClaude(state: ClaudeState): Conclusion {
  const result = state.result;
  if (result === undefined) {
    if (state.apiError !== undefined) return { kind: 'failed', reason: 'agent-error', message: `Claude Code reported an error: ${state.apiError}`, ended: false };
    return { kind: 'inconclusive', message: 'Claude Code exited without a result line' };
  }
  // An interrupted turn, whatever `subtype` says (a line sent with priority "now" ends the running
  // turn with `subtype: "success"` and `terminal_reason: "aborted_streaming"`).
  if (result.terminal_reason?.startsWith('aborted') === true) {
    return { kind: 'failed', reason: 'aborted', message: `Claude Code aborted the run (${result.terminal_reason})`, ended: true };
  }
  if (result.subtype === 'error_max_structured_output_retries') return structuredFailure(state.structured, result);
  if (result.subtype === 'error_max_budget_usd') {
    const spent = result.total_cost_usd === undefined ? '' : `: $${result.total_cost_usd.toFixed(4)} spent`;
    return { kind: 'failed', reason: 'budget', message: `Claude Code ended the run at its own spending cap (--max-budget-usd)${spent}`, ended: true };
  }
  if (!result.is_error) {
    const usage = claudeUsage(result, result.total_cost_usd);
    // A structured answer ends the run with the model's `tool_use` stop: the answer is complete.
    const structured = 'structured_output' in result;
    return {
      kind: 'completed',
      stopReason: structured ? 'end_turn' : claudeStopReason(result.stop_reason),
      ...(typeof result.stop_reason === 'string' ? { agentStopReason: result.stop_reason } : {}),
      ...(usage === undefined ? {} : { usage }),
      ...(structured ? { output: result.structured_output } : {}),
    };
  }
  const error = lastError(state) ?? result.subtype;
  return { kind: 'failed', reason: 'agent-error', message: `Claude Code reported an error: ${error}`, ended: true };
}

/**
 * Claude Code gave up on a structured answer (`--json-schema`): the model's answers kept failing the
 * schema (5 tries by default, `MAX_STRUCTURED_OUTPUT_RETRIES`). The issues are what the CLI said of
 * the last one, the answer is that one.
 */
function structuredFailure(structured: StructuredAnswer, result: ClaudeEventOf<'result'>): Conclusion {
  const gaveUp = result.errors?.join('; ') ?? result.subtype;
  const issues = claudeSchemaIssues(structured.lastError ?? gaveUp);
  return {
    kind: 'failed',
    reason: 'output-schema',
    message: `${outputFailureMessage(issues)} (Claude Code: ${gaveUp})`,
    ended: true,
    outputIssues: issues,
    ...(structured.lastInput === undefined ? {} : { answer: boundedAnswer(JSON.stringify(structured.lastInput)) }),
  };
}

const SCHEMA_MISMATCH = 'Output does not match required schema: ';

/**
 * The issues in Claude Code's refusal of a structured answer (`Output does not match required
 * schema: root: must have required property 'n', /answer: must be string`): each with its path
 * (the JSON pointer made dotted, `''` for the root; a missing property's own) and what is wrong.
 * Other text is one issue at the root.
 */
export function claudeSchemaIssues(text: string): OutputIssue[] {
  const said = text.replace(/^<tool_use_error>|<\/tool_use_error>$/g, '').trim();
  if (!said.startsWith(SCHEMA_MISMATCH)) return [{ path: '', message: said }];
  return said
    .slice(SCHEMA_MISMATCH.length)
    .split(/, (?=(?:root|\/[^:,]*): )/)
    .map((piece) => {
      const match = /^(root|\/[^:,]*): ([\s\S]*)$/.exec(piece);
      if (match === null) return { path: '', message: piece };
      const pointer = match[1] ?? 'root';
      const at = pointer === 'root' ? [] : pointer.slice(1).split('/').map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'));
      const message = match[2] ?? '';
      // A missing property is an issue of that property, as the run's own check says it.
      const missing = /^must have required property '(.*)'$/.exec(message)?.[1];
      return { path: [...at, ...(missing === undefined ? [] : [missing])].join('.'), message };
    });
}

/**
 * The usage a `result` line reports (its `usage` is the CLI turn's own), with `cost`: for a run,
 * `total_cost_usd`; in a session, where that total is the session's so far, the part of it since
 * the previous result.
 */
export function claudeUsage(result: ClaudeEventOf<'result'>, cost: number | undefined): Usage | undefined {
  const usage = result.usage;
  if (usage === undefined) return undefined;
  return usageOf({
    input: usage.input_tokens ?? 0,
    output: usage.output_tokens ?? 0,
    cacheRead: usage.cache_read_input_tokens,
    cacheWrite: usage.cache_creation_input_tokens,
    cost,
  });
}
