import type { OperatorFunction } from 'rxjs';
import type { CliMessage, Usage } from '../../messages.js';
import { agentOutputToMessages } from '../../operators/agent-output-to-messages.js';
import type { TurnEnd } from '../../operators/buffer-thinking-until-turn-end.js';
import type { Conclusion, Dialect, FailureDetails } from '../../operators/dialect.js';
import type { AgentEvent } from '../../operators/items.js';
import { meaningfulLines } from '../../operators/stderr-lines.js';
import type { TextReader, TextReading } from '../../operators/snapshot-to-delta.js';
import type { ProcessItem } from '../../process/items.js';
import { field, narrowEvents, numberOf, stringOf } from '../shared/events.js';
import { installHint } from '../shared/options.js';
import { SessionHeader } from '../shared/session.js';
import { toolResultMessages, toolUseMessages } from '../shared/tool-blocks.js';
import { ToolCalls } from '../shared/tool-calls.js';
import { usageOf } from '../shared/usage.js';
import { knownTypes } from '../../operators/unknown-types.js';
import { QWEN_LINE_TYPES, qwenEventSchemas, type QwenEvent, type QwenEventOf } from './events.js';
import { qwenTools } from './tools.js';

const known = narrowEvents<QwenEvent>();

/** How Qwen Code prints a model API error: as answer text that starts with this. */
const API_ERROR = '[API Error: ';

/** The text before an `[API Error: …]` Qwen Code put into a block (all of it when there is none). */
function withoutApiError(text: string): string {
  const at = text.indexOf(API_ERROR);
  return at === -1 ? text : text.slice(0, at);
}

/**
 * Reads Qwen Code's text, one reader per run. Its stream events carry true deltas
 * (`text_delta`, `thinking_delta`) but, unlike Claude Code's, no message id to key them on: every
 * block says `index: 0`, and a response's later blocks get `assistant` lines under new ids. So
 * the reader numbers them itself: a response at each `message_start`, a block at each
 * `content_block_start`; the block's `assistant` line (after its `content_block_stop`) is its
 * final text under the same key, and emits nothing that was streamed already. An `assistant`
 * line with no block streamed before it (partial messages off) gets a key of its own.
 *
 * A model API error arrives as answer text, `[API Error: 401 …]`: it is left out of the answer
 * (the run's failure says it), as are sub-agents' lines.
 *
 * @example
 * lines.pipe(parseJsonLine({ schemas: qwenEventSchemas }), snapshotToDelta({ createReader: createQwenTextReader }));
 */
export function createQwenTextReader(): TextReader {
  let response = 0;
  let block = 0;
  // The streamed block whose `assistant` line has not come yet.
  let open: string | undefined;
  let unstreamed = 0;
  // The open block's text is an API error: its deltas are left out.
  let apiError = false;
  let atBlockStart = false;
  return (event): TextReading | readonly TextReading[] | null => {
    const line = known(event, 'stream_event');
    if (line !== null) {
      if (line.parent_tool_use_id != null) return null;
      const inner = line.event;
      if (inner.type === 'message_start') {
        response += 1;
        block = 0;
      } else if (inner.type === 'content_block_start') {
        block += 1;
        open = `${String(response)}:${String(block)}`;
        apiError = false;
        atBlockStart = true;
      } else if (inner.type === 'content_block_delta' && open !== undefined) {
        const delta = field(inner, 'delta');
        const type = field(delta, 'type');
        if (type === 'text_delta') {
          const text = stringOf(field(delta, 'text'));
          if (text === undefined) return null;
          if (atBlockStart && text.startsWith(API_ERROR)) apiError = true;
          atBlockStart = false;
          if (apiError) return null;
          const kept = withoutApiError(text);
          if (kept !== text) apiError = true;
          return kept === '' ? null : { channel: 'assistant', key: open, delta: kept };
        }
        if (type === 'thinking_delta') {
          const thinking = stringOf(field(delta, 'thinking'));
          atBlockStart = false;
          return thinking === undefined ? null : { channel: 'thought', key: open, delta: thinking };
        }
      }
      return null;
    }
    const whole = known(event, 'assistant');
    if (whole === null || whole.parent_tool_use_id != null) return null;
    const readings: TextReading[] = [];
    for (const part of whole.message.content) {
      const key = open ?? `unstreamed:${String((unstreamed += 1))}`;
      open = undefined;
      if (part.type === 'text') readings.push({ channel: 'assistant', key, snapshot: withoutApiError(stringOf(field(part, 'text')) ?? ''), final: true });
      if (part.type === 'thinking') readings.push({ channel: 'thought', key, snapshot: stringOf(field(part, 'thinking')) ?? '', final: true });
    }
    return readings;
  };
}

/**
 * Qwen Code prints no `message_delta` (no stop reason in the stream): a response that stops for
 * tools says so on its `tool_use` block's `assistant` line (`stop_reason: "tool_use"`); the run
 * ends at `result`.
 *
 * @example
 * items.pipe(bufferThinkingUntilTurnEnd({ turnEnd: qwenTurnEnd }));
 */
export function qwenTurnEnd(event: AgentEvent): TurnEnd {
  if (event.type === 'result') return 'final';
  const line = known(event, 'assistant');
  if (line === null || line.parent_tool_use_id != null) return null;
  return line.message.stop_reason === 'tool_use' ? 'tool-use' : null;
}

/** The Qwen Code dialect's state for one run (created by `createState`). */
export interface QwenState {
  readonly session: SessionHeader;
  readonly tools: ToolCalls;
  result: QwenEventOf<'result'> | undefined;
  /** The text of the last `[API Error: …]` the CLI printed as an answer. */
  apiError: string | undefined;
}

/** Options of {@link qwenDialect}. */
export interface QwenDialectOptions {
  /** The run continues an existing session: `system/init` becomes `session.resumed`. */
  readonly resuming?: boolean;
}

const QWEN_INSTALL_HINT = installHint('Qwen Code', '@qwen-code/qwen-code');

/**
 * The Qwen Code dialect (`qwen --output-format stream-json --include-partial-messages`), for
 * `agentOutputToMessages`. Its lines are shaped as Claude Code's (`system/init`, `stream_event`,
 * one `assistant` line per block, `user` tool results, `result`), with differences: see
 * {@link createQwenTextReader} for the text; a model API error is a text block `[API Error: …]`
 * and a `result` with `subtype: "error_during_execution"` and `error.message` (a
 * `terminal.failed` with reason `agent-error`, its HTTP status in `httpStatus`); with
 * `--json-schema`, the `result`'s `structured_result` is `terminal.completed.output`, and a run the
 * CLI ended because the model answered in prose (`Model produced plain text instead of calling the
 * structured_output tool…`, exit 1) a `terminal.failed` with reason `output-schema`; a run stopped by
 * SIGINT or SIGTERM prints no `result` and exits 130; `system/retry` lines are its retries of a
 * stream (`agent.retry`); `goal_state` stream events say nothing for the run.
 *
 * @example
 * // What runQwen does, by hand: Qwen Code's headless mode read as messages.
 * processLines('qwen', ['--output-format', 'stream-json', '--include-partial-messages', `--prompt=${prompt}`])
 *   .pipe(agentOutputToMessages(qwenDialect()))
 *   .subscribe(render);
 */
export function qwenDialect(options: QwenDialectOptions = {}): Dialect<QwenState> {
  const resuming = options.resuming === true;
  return {
    name: 'Qwen Code',
    installHint: QWEN_INSTALL_HINT,
    tools: qwenTools,
    schemas: qwenEventSchemas,
    createTextReader: createQwenTextReader,
    turnEnd: qwenTurnEnd,
    createState: () => ({ session: new SessionHeader(resuming), tools: new ToolCalls(), result: undefined, apiError: undefined }),
    map: mapQwenEvent,
    conclude: concludeQwen,
    lastError,
    failureDetails: qwenFailureDetails,
    stderrLine: qwenStderrLine,
    sessionId: (state) => state.session.sessionId ?? state.result?.session_id,
    unknownType: knownTypes(QWEN_LINE_TYPES),
  };
}

/**
 * Qwen Code's whole pipeline: `agentOutputToMessages(qwenDialect(options))`. On its own it
 * replays recorded output.
 *
 * @example
 * from(recordedItems).pipe(qwenOutputToMessages()).subscribe(console.log);
 */
export function qwenOutputToMessages(options: QwenDialectOptions = {}): OperatorFunction<ProcessItem, CliMessage> {
  return agentOutputToMessages(qwenDialect(options));
}

function mapQwenEvent(state: QwenState, event: AgentEvent): readonly CliMessage[] {
  switch (event.type) {
    case 'system':
      return onSystem(state, event);
    case 'assistant': {
      const line = known(event, 'assistant');
      if (line === null) return [];
      for (const part of line.message.content) {
        const text = part.type === 'text' ? stringOf(field(part, 'text')) : undefined;
        const at = text?.indexOf(API_ERROR) ?? -1;
        if (text !== undefined && at !== -1) state.apiError = text.slice(at);
      }
      return toolUseMessages(state.tools, line.message.content);
    }
    case 'user':
      return toolResultMessages(state.tools, known(event, 'user')?.message.content);
    case 'result': {
      const result = known(event, 'result');
      if (result !== null) state.result = result;
      return [];
    }
    default:
      return [];
  }
}

function onSystem(state: QwenState, event: AgentEvent): readonly CliMessage[] {
  const line = known(event, 'system');
  if (line === null) return [];
  if (line.subtype === 'init' && line.session_id !== undefined) return state.session.announce(line.session_id, { agentVersion: line.qwen_code_version, model: line.model });
  if (line.subtype === 'retry') {
    // A model stream that failed after Qwen Code's own retries of the request is tried again.
    const data = line.data;
    const attempt = numberOf(field(data, 'attempt'));
    const maxAttempts = numberOf(field(data, 'maxRetries'));
    const delayMs = numberOf(field(data, 'delayMs'));
    return [
      {
        type: 'agent.retry',
        ...(attempt === undefined ? {} : { attempt }),
        ...(maxAttempts === undefined ? {} : { maxAttempts }),
        ...(delayMs === undefined ? {} : { delayMs }),
        reason: `Qwen Code tries the model stream again (${stringOf(field(data, 'reason')) ?? 'retry'})`,
      },
    ];
  }
  return [];
}

/** The error the CLI reported: the `result`'s, else the last `[API Error: …]` it printed. */
function lastError(state: QwenState): string | undefined {
  const result = state.result;
  if (result?.is_error === true) return result.error?.message ?? state.apiError ?? result.result ?? result.subtype;
  return state.apiError;
}

/** The HTTP status Qwen Code names in `[API Error: 429 …]`. */
function qwenFailureDetails(state: QwenState): FailureDetails {
  const error = lastError(state);
  const status = error === undefined ? undefined : /\[API Error: (\d{3}) /.exec(error)?.[1];
  return status === undefined ? {} : { httpStatus: Number(status) };
}

/** How Qwen Code ends a `--json-schema` run whose model answered in prose instead of calling `structured_output`. */
const PROSE_INSTEAD_OF_STRUCTURED = 'Model produced plain text instead of calling the structured_output tool';

function concludeQwen(state: QwenState): Conclusion {
  const result = state.result;
  if (result === undefined) {
    if (state.apiError !== undefined) return { kind: 'failed', reason: 'agent-error', message: `Qwen Code reported an error: ${state.apiError}`, ended: false };
    // SIGINT or SIGTERM (exit 130), --max-wall-time or --max-session-turns (55, 53): no result line.
    return { kind: 'inconclusive', message: 'Qwen Code exited without a result line' };
  }
  if (result.is_error) {
    // A run given `--json-schema` whose model answered in prose: its answer failed the schema.
    if (result.error?.message.startsWith(PROSE_INSTEAD_OF_STRUCTURED) === true) {
      return { kind: 'failed', reason: 'output-schema', message: 'Qwen Code ended the run: the model answered in prose instead of calling its structured_output tool', ended: true };
    }
    return { kind: 'failed', reason: 'agent-error', message: `Qwen Code reported an error: ${lastError(state) ?? result.subtype}`, ended: true };
  }
  const usage = qwenUsage(result.usage);
  // A run given `--json-schema`: the arguments of the model's valid `structured_output` call.
  const structured = (result as { readonly structured_result?: unknown }).structured_result;
  return { kind: 'completed', stopReason: 'end_turn', ...(usage === undefined ? {} : { usage }), ...(structured === undefined ? {} : { output: structured }) };
}

/** The contract's usage from a `result`'s: `input_tokens` counts the cached input too. */
function qwenUsage(usage: QwenEventOf<'result'>['usage']): Usage | undefined {
  if (usage === undefined) return undefined;
  const cacheRead = usage.cache_read_input_tokens ?? 0;
  const input = Math.max(0, (usage.input_tokens ?? 0) - cacheRead);
  return usageOf({ input, output: usage.output_tokens ?? 0, cacheRead, ...(usage.total_tokens === undefined ? {} : { total: usage.total_tokens }) });
}

/** Qwen Code's routine stderr lines: they explain no failure. */
const ROUTINE = [/^Ripgrep not available/, /^Warning: running headless with --yolo/];

/**
 * What of Qwen Code's stderr explains a failed exit: its first meaningful line that is not a routine notice.
 *
 * @example
 * qwenStderrLine('Ripgrep not available: …\nRun aborted: wall-clock budget of 2s exceeded (--max-wall-time).\n');
 * // 'Run aborted: wall-clock budget of 2s exceeded (--max-wall-time).'
 */
export function qwenStderrLine(stderr: string): string | undefined {
  return meaningfulLines(stderr, ROUTINE)[0];
}
