import type { CliMessage, Usage } from '../../messages.js';
import type { TurnEnd } from '../../operators/buffer-thinking-until-turn-end.js';
import type { Conclusion, Dialect } from '../../operators/dialect.js';
import type { AgentEvent } from '../../operators/items.js';
import type { TextReader, TextReading } from '../../operators/snapshot-to-delta.js';
import type { ClaudeEvent, ClaudeEventOf } from './events.js';

// Known line types arrive validated by `claudeEventSchemas`; narrow by `type` before reading.
function known<T extends ClaudeEvent['type']>(event: AgentEvent, type: T): ClaudeEventOf<T> | null {
  return event.type === type ? (event as unknown as ClaudeEventOf<T>) : null;
}

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/**
 * Reads Claude Code's text, one reader per run. `text_delta` and `thinking_delta` stream events
 * carry true deltas, keyed by API message id and block index. The block-level `assistant` lines
 * repeat each whole block, but do not say which block of the message they are: they come one per
 * block and in order, so the reader counts them per message to key them like the deltas, and
 * snapshotToDelta emits nothing for what was already streamed (or the whole block when partial
 * messages are off). Synthetic API-error lines and sub-agent output are not part of the answer.
 */
export function createClaudeTextReader(): TextReader {
  const blocksSeen = new Map<string, number>();
  // Stream events name their message in `api_message_id`; where a version does not, the id of
  // the last `message_start` event does.
  let streamingMessage = '';
  return (event): TextReading | readonly TextReading[] | null => {
    const streamed = known(event, 'stream_event');
    if (streamed !== null) {
      const inner = streamed.event;
      if (streamed.parent_tool_use_id != null) return null;
      if (inner.type === 'message_start') streamingMessage = text(field(field(inner, 'message'), 'id')) ?? '';
      if (inner.type !== 'content_block_delta') return null;
      const key = `${streamed.api_message_id ?? streamingMessage}:${String(inner.index ?? 0)}`;
      const delta = field(inner, 'delta');
      const type = field(delta, 'type');
      if (type === 'text_delta') return textReading('assistant', key, text(field(delta, 'text')));
      if (type === 'thinking_delta') return textReading('thought', key, text(field(delta, 'thinking')));
      return null;
    }
    const line = known(event, 'assistant');
    if (line === null) return null;
    const { id, content } = line.message;
    const first = blocksSeen.get(id) ?? 0;
    blocksSeen.set(id, first + content.length);
    if (line.is_api_error_message === true || line.error !== undefined || line.parent_tool_use_id != null) return null;
    const readings: TextReading[] = [];
    content.forEach((block, offset) => {
      const key = `${id}:${String(first + offset)}`;
      if (block.type === 'text') readings.push({ channel: 'assistant', key, snapshot: text(field(block, 'text')) ?? '' });
      if (block.type === 'thinking') readings.push({ channel: 'thought', key, snapshot: text(field(block, 'thinking')) ?? '' });
    });
    return readings;
  };
}

function textReading(channel: TextReading['channel'], key: string, delta: string | undefined): TextReading | null {
  return delta === undefined ? null : { channel, key, delta };
}

/** A message ends its turn at `message_delta` (unless it stopped for tools); the run at `result`. */
export function claudeTurnEnd(event: AgentEvent): TurnEnd {
  if (event.type === 'result') return 'final';
  const streamed = known(event, 'stream_event');
  if (streamed === null || streamed.event.type !== 'message_delta' || streamed.parent_tool_use_id != null) return null;
  const stopReason = field(field(streamed.event, 'delta'), 'stop_reason');
  if (typeof stopReason !== 'string') return null;
  return stopReason === 'tool_use' ? 'tool-use' : 'final';
}

export interface ClaudeState {
  readonly resuming: boolean;
  sessionId: string | undefined;
  readonly calls: Map<string, { name: string; done: boolean }>;
  result: ClaudeEventOf<'result'> | undefined;
  /** The text of the last synthetic API-error line. */
  apiError: string | undefined;
}

export interface ClaudeDialectOptions {
  /** The run continues an existing session: `system/init` becomes `session.resumed`. */
  readonly resuming?: boolean;
}

export const CLAUDE_INSTALL_HINT = 'Install Claude Code with `npm install -g @anthropic-ai/claude-code`, or pass `executable`.';

/** The Claude Code dialect for `mapToCliMessage`. */
export function claudeDialect(options: ClaudeDialectOptions = {}): Dialect<ClaudeState> {
  return {
    name: 'Claude Code',
    installHint: CLAUDE_INSTALL_HINT,
    createState: () => ({ resuming: options.resuming === true, sessionId: undefined, calls: new Map(), result: undefined, apiError: undefined }),
    map: mapClaudeEvent,
    conclude: concludeClaude,
    lastError,
    sessionId: (state) => state.sessionId ?? state.result?.session_id,
  };
}

function mapClaudeEvent(state: ClaudeState, event: AgentEvent): readonly CliMessage[] {
  switch (event.type) {
    case 'system':
      return onSystem(state, event);
    case 'assistant': {
      const line = known(event, 'assistant');
      if (line === null) return [];
      if (line.is_api_error_message === true || line.error !== undefined) {
        state.apiError = line.message.content.map((block) => text(field(block, 'text')) ?? '').join('') || line.error;
      }
      const messages: CliMessage[] = [];
      for (const block of line.message.content) {
        const id = text(field(block, 'id'));
        const name = text(field(block, 'name'));
        if (block.type !== 'tool_use' || id === undefined || name === undefined || state.calls.has(id)) continue;
        state.calls.set(id, { name, done: false });
        messages.push({ type: 'tool.call', toolCallId: id, name, input: field(block, 'input') ?? null });
      }
      return messages;
    }
    case 'user': {
      const content = known(event, 'user')?.message.content;
      if (content === undefined || typeof content === 'string') return [];
      const messages: CliMessage[] = [];
      for (const block of content) {
        const id = text(field(block, 'tool_use_id'));
        if (block.type !== 'tool_result' || id === undefined) continue;
        const call = state.calls.get(id) ?? { name: 'unknown', done: false };
        if (call.done) continue;
        call.done = true;
        state.calls.set(id, call);
        const output = resultText(field(block, 'content'));
        messages.push({ type: field(block, 'is_error') === true ? 'tool.failed' : 'tool.completed', toolCallId: id, name: call.name, output });
      }
      return messages;
    }
    case 'result': {
      const result = known(event, 'result');
      if (result !== null) state.result = result;
      return [];
    }
    default:
      return [];
  }
}

function onSystem(state: ClaudeState, event: AgentEvent): readonly CliMessage[] {
  const line = known(event, 'system');
  if (line === null) return [];
  if (line.subtype === 'init' && line.session_id !== undefined && state.sessionId === undefined) {
    state.sessionId = line.session_id;
    return [{ type: state.resuming ? 'session.resumed' : 'session.started', sessionId: line.session_id }];
  }
  if (line.subtype === 'api_retry') {
    const status = field(line, 'error_status');
    const error = text(field(line, 'error')) ?? 'error';
    const number = (key: string): number => {
      const value = field(line, key);
      return typeof value === 'number' ? value : 0;
    };
    return [
      {
        type: 'agent.retry',
        attempt: number('attempt'),
        maxAttempts: number('max_retries'),
        delayMs: number('retry_delay_ms'),
        reason: typeof status === 'number' ? `${String(status)} ${error}` : error,
      },
    ];
  }
  return [];
}

function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((block) => (field(block, 'type') === 'text' ? (text(field(block, 'text')) ?? '') : '')).join('');
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

function concludeClaude(state: ClaudeState): Conclusion {
  const result = state.result;
  if (result === undefined) {
    if (state.apiError !== undefined) return { kind: 'failed', reason: 'agent-error', message: `Claude Code reported an error: ${state.apiError}`, ended: false };
    return { kind: 'inconclusive', message: 'Claude Code exited without a result line' };
  }
  if (!result.is_error) {
    return { kind: 'completed', stopReason: result.stop_reason ?? 'end_turn', ...usageOf(result) };
  }
  const error = lastError(state) ?? result.subtype;
  if (result.subtype === 'error_during_execution' && result.terminal_reason?.startsWith('aborted') === true) {
    return { kind: 'failed', reason: 'aborted', message: `Claude Code aborted the run (${result.terminal_reason})`, ended: true };
  }
  return { kind: 'failed', reason: 'agent-error', message: `Claude Code reported an error: ${error}`, ended: true };
}

function usageOf(result: ClaudeEventOf<'result'>): { usage?: Usage } {
  const usage = result.usage;
  if (usage === undefined) return {};
  const input = usage.input_tokens ?? 0;
  const output = usage.output_tokens ?? 0;
  const cacheRead = usage.cache_read_input_tokens ?? 0;
  const cacheWrite = usage.cache_creation_input_tokens ?? 0;
  return {
    usage: {
      inputTokens: input,
      outputTokens: output,
      cacheReadTokens: cacheRead,
      cacheWriteTokens: cacheWrite,
      totalTokens: input + output + cacheRead + cacheWrite,
      ...(result.total_cost_usd === undefined ? {} : { cost: result.total_cost_usd }),
    },
  };
}
