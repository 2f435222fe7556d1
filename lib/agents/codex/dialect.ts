import type { OperatorFunction } from 'rxjs';
import type { CliMessage } from '../../messages.js';
import { agentOutputToMessages } from '../../operators/agent-output-to-messages.js';
import type { TurnEnd } from '../../operators/buffer-thinking-until-turn-end.js';
import type { Conclusion, Dialect, FailureDetails } from '../../operators/dialect.js';
import type { AgentEvent } from '../../operators/items.js';
import type { TextReader, TextReading } from '../../operators/snapshot-to-delta.js';
import { meaningfulLines, quoted } from '../../operators/stderr-lines.js';
import type { ProcessItem } from '../../process/items.js';
import { contentText } from '../shared/content.js';
import { field, narrowEvents, numberOf, stringOf } from '../shared/events.js';
import { installHint } from '../shared/options.js';
import { SessionHeader } from '../shared/session.js';
import { ToolCalls } from '../shared/tool-calls.js';
import { usageOf } from '../shared/usage.js';
import { knownTypes } from '../../operators/unknown-types.js';
import { CODEX_EVENT_TYPES, codexEventSchemas, codexEventType, type CodexEvent, type CodexItem, type CodexUsage } from './events.js';
import { codexTools } from './tools.js';
import { mcpImages, withContent } from './tool-content.js';

const known = narrowEvents<CodexEvent>();

const ITEM_EVENTS = ['item.started', 'item.updated', 'item.completed'] as const;
type ItemPhase = (typeof ITEM_EVENTS)[number];

/** The item of an `item.*` line, with the line's type, or null for any other line. */
function itemOf(event: AgentEvent): { readonly phase: ItemPhase; readonly item: CodexItem } | null {
  for (const phase of ITEM_EVENTS) {
    const line = known(event, phase);
    if (line !== null) return { phase, item: line.item };
  }
  return null;
}

/**
 * Reads Codex's text, one reader per run. Codex prints no deltas: an `agent_message` item holds a
 * whole message and a `reasoning` item a whole reasoning summary, once each, when they are
 * complete. Each item is a key of its own (`item_0`, `item_1`, … within a run), so the text before
 * and after a tool call are two texts, each emitted once. Reasoning summaries are separate pieces
 * of thinking: each after the first begins with a blank line, so the turn's one thought reads as
 * they do. Should a Codex print an item while it grows (`item.updated`), it is read as a snapshot
 * of the same key.
 *
 * @example
 * lines.pipe(parseJsonLine({ schemas: codexEventSchemas }), snapshotToDelta({ createReader: createCodexTextReader }));
 */
export function createCodexTextReader(): TextReader {
  // Reasoning keys seen, and whether each begins with the separator (decided at its first sight).
  const reasoning = new Map<string, string>();
  return (event): TextReading | null => {
    const line = itemOf(event);
    if (line === null) return null;
    const { phase, item } = line;
    const text = stringOf(item['text']);
    if (text === undefined) return null;
    const final = phase === 'item.completed';
    if (item.type === 'agent_message') return { channel: 'assistant', key: item.id, snapshot: text, final };
    if (item.type !== 'reasoning') return null;
    let prefix = reasoning.get(item.id);
    if (prefix === undefined) {
      if (text === '') return null;
      prefix = reasoning.size === 0 ? '' : '\n\n';
      reasoning.set(item.id, prefix);
    }
    return { channel: 'thought', key: item.id, snapshot: `${prefix}${text}`, final };
  };
}

/**
 * A Codex run is one turn: it ends at `turn.completed` or `turn.failed`.
 *
 * @example
 * items.pipe(bufferThinkingUntilTurnEnd({ turnEnd: codexTurnEnd }));
 */
export function codexTurnEnd(event: AgentEvent): TurnEnd {
  return event.type === 'turn.completed' || event.type === 'turn.failed' ? 'final' : null;
}

/** The Codex dialect's state for one run (created by `createState`). */
export interface CodexState {
  readonly session: SessionHeader;
  readonly tools: ToolCalls;
  /** `turn.completed` came, with this usage. */
  completed: { readonly usage: CodexUsage | undefined } | undefined;
  /** The message of `turn.failed`. */
  failed: string | undefined;
  /** The last `error` line that was not a retry notice. */
  lastError: string | undefined;
}

/** Options of {@link codexDialect}. */
export interface CodexDialectOptions {
  /** The run resumes a thread: `thread.started` becomes `session.resumed`. */
  readonly resuming?: boolean;
}

const CODEX_INSTALL_HINT = installHint('Codex', '@openai/codex');

/**
 * The Codex dialect (`codex exec --experimental-json`), for `agentOutputToMessages`.
 *
 * @example
 * // What runCodex does, by hand: `codex exec` read as messages (the prompt on stdin).
 * processLines('codex', ['exec', '--experimental-json', '--skip-git-repo-check'], { stdin: prompt })
 *   .pipe(agentOutputToMessages(codexDialect()))
 *   .subscribe(render);
 */
export function codexDialect(options: CodexDialectOptions = {}): Dialect<CodexState> {
  const resuming = options.resuming === true;
  return {
    name: 'Codex',
    installHint: CODEX_INSTALL_HINT,
    tools: codexTools,
    schemas: codexEventSchemas,
    createTextReader: createCodexTextReader,
    turnEnd: codexTurnEnd,
    createState: () => ({ session: new SessionHeader(resuming), tools: new ToolCalls(), completed: undefined, failed: undefined, lastError: undefined }),
    map: mapCodexEvent,
    conclude: concludeCodex,
    lastError: (state) => state.failed ?? state.lastError,
    failureDetails: codexFailureDetails,
    stderrLine: codexStderrLine,
    sessionId: (state) => state.session.sessionId,
    unknownType: knownTypes(CODEX_EVENT_TYPES, codexEventType),
  };
}

/**
 * Codex's whole pipeline: `agentOutputToMessages(codexDialect(options))`. On its own it replays
 * recorded output.
 *
 * @example
 * from(recordedItems).pipe(codexOutputToMessages()).subscribe(console.log);
 */
export function codexOutputToMessages(options: CodexDialectOptions = {}): OperatorFunction<ProcessItem, CliMessage> {
  return agentOutputToMessages(codexDialect(options));
}

function mapCodexEvent(state: CodexState, event: AgentEvent): readonly CliMessage[] {
  const line = itemOf(event);
  if (line !== null) return mapItem(state, line.phase, line.item);
  switch (event.type) {
    case 'thread.started': {
      const started = known(event, 'thread.started');
      return started === null ? [] : state.session.announce(started.thread_id);
    }
    case 'turn.completed':
      state.completed = { usage: known(event, 'turn.completed')?.usage };
      return [];
    case 'turn.failed':
      state.failed = known(event, 'turn.failed')?.error.message;
      return [];
    case 'error': {
      const message = known(event, 'error')?.message;
      if (message === undefined) return [];
      const retry = retryNotice(message);
      if (retry !== null) return [retry];
      // The final error, printed again by `turn.failed` just after.
      state.lastError = message;
      return [];
    }
    default:
      return [];
  }
}

/** Tool items, by type. Text items are read by `readCodexText`; `error` items are warnings. */
function mapItem(state: CodexState, phase: ItemPhase, item: CodexItem): readonly CliMessage[] {
  const { tools } = state;
  const done = phase === 'item.completed';
  switch (item.type) {
    case 'command_execution': {
      const call = tools.call(item.id, 'command_execution', { command: stringOf(item['command']) ?? '' });
      const output = stringOf(item['aggregated_output']) ?? '';
      if (!done) return [...call, ...tools.update(item.id, 'command_execution', output)];
      const exitCode = numberOf(item['exit_code']);
      const failed = item['status'] !== 'completed' || (exitCode !== undefined && exitCode !== 0);
      return [...call, ...tools.result(item.id, 'command_execution', output, failed)];
    }
    case 'file_change': {
      const changes = Array.isArray(item['changes']) ? (item['changes'] as unknown[]) : [];
      const call = tools.call(item.id, 'file_change', { changes });
      if (!done) return call;
      const output = changes.map((change) => `${stringOf(field(change, 'kind')) ?? 'change'} ${stringOf(field(change, 'path')) ?? ''}`).join('\n');
      return [...call, ...tools.result(item.id, 'file_change', output, item['status'] === 'failed')];
    }
    case 'mcp_tool_call': {
      // Named the way MCP tools are commonly named across agents: mcp__<server>__<tool>.
      const name = `mcp__${stringOf(item['server']) ?? 'unknown'}__${stringOf(item['tool']) ?? 'unknown'}`;
      const call = tools.call(item.id, name, item['arguments']);
      if (!done) return call;
      const error = stringOf(field(item['error'], 'message'));
      const result = item['result'];
      const text = contentText(field(result, 'content'));
      const structured = field(result, 'structured_content');
      const output = error ?? (text !== '' || structured == null ? text : JSON.stringify(structured));
      return [...call, ...withContent(tools.result(item.id, name, output, error !== undefined || item['status'] === 'failed'), mcpImages(field(result, 'content')))];
    }
    case 'web_search': {
      const call = tools.call(item.id, 'web_search', { query: stringOf(item['query']) ?? '' });
      return done ? [...call, ...tools.result(item.id, 'web_search', '', item['status'] === 'failed')] : call;
    }
    case 'todo_list': {
      // Codex's plan: each update replaces the list.
      const items = Array.isArray(item['items']) ? (item['items'] as unknown[]) : [];
      const call = tools.call(item.id, 'todo_list', { items });
      const output = items.map((entry) => `[${field(entry, 'completed') === true ? 'x' : ' '}] ${stringOf(field(entry, 'text')) ?? ''}`).join('\n');
      return [...call, ...(done ? tools.result(item.id, 'todo_list', output, false) : tools.update(item.id, 'todo_list', output))];
    }
    case 'error': {
      // Not fatal: the run goes on (e.g. "Model metadata for `x` not found").
      const message = stringOf(item['message']);
      return done && message !== undefined ? [{ type: 'agent.warning', message }] : [];
    }
    default:
      return [];
  }
}

/**
 * Codex's retry notices: `Reconnecting... 2/5 (<reason>)` for a failed request or stream, and
 * `Reconnecting... waiting for network (<reason>)` while the endpoint cannot be reached (that one
 * never gives up by itself).
 */
export function retryNotice(message: string): CliMessage | null {
  const notice = /^Reconnecting(?:\.\.\.|…)\s*(?:(\d+)\/(\d+))?\s*([^(]*?)\s*(?:\((.*)\))?\s*$/s.exec(message);
  if (notice === null) return null;
  const [, attempt, maxAttempts, what = '', why] = notice;
  const reason = [what, why].filter((part) => part !== undefined && part !== '').join(': ');
  return {
    type: 'agent.retry',
    ...(attempt === undefined ? {} : { attempt: Number(attempt) }),
    ...(maxAttempts === undefined ? {} : { maxAttempts: Number(maxAttempts) }),
    reason: reason === '' ? message : reason,
  };
}

/**
 * The model API's HTTP status, where Codex's text has one: `unexpected status 401 Unauthorized: …`
 * and `exceeded retry limit, last status: 429 Too Many Requests`. Codex replaces the text of a 5xx
 * answer with a generic one that carries no status.
 */
function codexFailureDetails(state: CodexState): FailureDetails {
  const text = state.failed ?? state.lastError;
  const status = text === undefined ? null : /\b(?:unexpected status|last status:)\s*(\d{3})\b/.exec(text);
  return status?.[1] === undefined ? {} : { httpStatus: Number(status[1]) };
}

// Lines Codex writes to stderr in every run; they explain nothing.
const STDERR_NOISE = [/^Reading (?:additional input|prompt) from stdin/, /^WARNING: proceeding, even though we could not create PATH aliases/];

/**
 * The stderr text that explains an exit without a terminal event: Codex's last `Error …` /
 * `error: …` line with the lines that continue it (a configuration error spans several), else
 * the last line that is not one Codex prints in every run.
 *
 * @example
 * codexStderrLine('Reading prompt from stdin...\nError: unexpected status 401 Unauthorized\n');
 * // 'Error: unexpected status 401 Unauthorized'
 */
export function codexStderrLine(stderr: string): string | undefined {
  const lines = meaningfulLines(stderr, STDERR_NOISE);
  // A Rust error may end with its backtrace: it explains nothing to a reader of the message.
  const backtrace = lines.findIndex((line) => /^Stack backtrace:?$/i.test(line));
  const explained = backtrace >= 0 ? lines.slice(0, backtrace) : lines;
  let start = -1;
  explained.forEach((line, i) => {
    if (/^error\b/i.test(line)) start = i;
  });
  return quoted(start >= 0 ? explained.slice(start).join(' ') : explained.at(-1));
}

function concludeCodex(state: CodexState): Conclusion {
  if (state.completed !== undefined) {
    const usage = state.completed.usage;
    return { kind: 'completed', stopReason: 'end_turn', ...(usage === undefined ? {} : { usage: codexUsage(usage) }) };
  }
  if (state.failed !== undefined) return { kind: 'failed', reason: 'agent-error', message: `Codex reported an error: ${state.failed}`, ended: true };
  if (state.lastError !== undefined) return { kind: 'failed', reason: 'agent-error', message: `Codex reported an error: ${state.lastError}`, ended: false };
  return { kind: 'inconclusive', message: 'Codex exited without turn.completed or turn.failed' };
}

/**
 * The contract's usage from Codex's. Codex reports the thread's total so far (a resumed thread
 * includes its earlier turns), summed over the turn's model calls; its `input_tokens` include the
 * cached ones, which the contract counts apart, and its output includes reasoning tokens.
 */
export function codexUsage(usage: CodexUsage): ReturnType<typeof usageOf> {
  const cached = usage.cached_input_tokens ?? 0;
  return usageOf({
    input: Math.max(0, usage.input_tokens - cached),
    output: usage.output_tokens,
    cacheRead: cached,
    cacheWrite: usage.cache_write_input_tokens ?? 0,
  });
}
