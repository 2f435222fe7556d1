import type { CliMessage, Usage } from '../../messages.js';
import type { Conclusion, Dialect } from '../../operators/dialect.js';
import type { AgentEvent } from '../../operators/items.js';
import type { TextReading } from '../../operators/snapshot-to-delta.js';
import type { TurnEnd } from '../../operators/buffer-thinking-until-turn-end.js';
import type { PiEvent, PiEventOf, PiMessage } from './events.js';

/**
 * Events arrive validated by `piEventSchemas` when their type is known; an unknown type is an
 * arbitrary object and is ignored. Narrow by `type` before reading fields.
 */
function known<T extends PiEvent['type']>(event: AgentEvent, type: T): PiEventOf<T> | null {
  return event.type === type ? (event as unknown as PiEventOf<T>) : null;
}

/** Text of the given block type in a message's content, concatenated in order. */
function blocksText(message: PiMessage, blockType: 'text' | 'thinking'): string {
  if (typeof message.content === 'string') return blockType === 'text' ? message.content : '';
  let text = '';
  for (const block of message.content) {
    if (block.type !== blockType) continue;
    const value = (block as Record<string, unknown>)[blockType];
    if (typeof value === 'string') text += value;
  }
  return text;
}

function messageKey(message: { readonly timestamp?: number | undefined }): string {
  return String(message.timestamp ?? '');
}

/**
 * Reads pi's text: `text_delta` and `thinking_delta` carry true deltas (preferred: the snapshot
 * in the same line can run ahead of them); the assistant `message_end` carries the final text,
 * which is authoritative and fills in anything the deltas missed.
 */
export function readPiText(event: AgentEvent): TextReading | readonly TextReading[] | null {
  const update = known(event, 'message_update');
  if (update !== null) {
    const { type, delta } = update.assistantMessageEvent;
    if (delta === undefined) return null;
    if (type === 'text_delta') return { channel: 'assistant', key: messageKey(update.message), delta };
    if (type === 'thinking_delta') return { channel: 'thought', key: messageKey(update.message), delta };
    return null;
  }
  const end = known(event, 'message_end');
  if (end !== null && end.message.role === 'assistant') {
    const key = messageKey(end.message);
    return [
      { channel: 'thought', key, snapshot: blocksText(end.message, 'thinking') },
      { channel: 'assistant', key, snapshot: blocksText(end.message, 'text') },
    ];
  }
  return null;
}

/** An assistant `message_end` ends the turn, unless it stopped to run tools. */
export function piTurnEnd(event: AgentEvent): TurnEnd {
  const end = known(event, 'message_end');
  if (end === null || end.message.role !== 'assistant') return null;
  return end.message.stopReason === 'toolUse' ? 'tool-use' : 'final';
}

export interface PiState {
  readonly resuming: boolean;
  sessionId: string | undefined;
  /** Tool calls announced, with their input, and those that have a result. */
  readonly calls: Map<string, { name: string; input: unknown; lastOutput: string; done: boolean }>;
  lastStopReason: string | undefined;
  /** An assistant message started and has not ended yet. */
  answering: boolean;
  lastError: string | undefined;
  /** An `agent_end` came and no `auto_retry_start` after it. */
  agentEnded: boolean;
  usage: Usage | undefined;
}

export interface PiDialectOptions {
  /** The run continues an existing session: the header becomes `session.resumed`. */
  readonly resuming?: boolean;
}

export const PI_INSTALL_HINT = 'Install pi with `npm install -g @mariozechner/pi-coding-agent`, or pass `executable`.';

/** The pi dialect for `mapToCliMessage`. */
export function piDialect(options: PiDialectOptions = {}): Dialect<PiState> {
  return {
    name: 'pi',
    installHint: PI_INSTALL_HINT,
    createState: () => ({
      resuming: options.resuming === true,
      sessionId: undefined,
      calls: new Map(),
      lastStopReason: undefined,
      answering: false,
      lastError: undefined,
      agentEnded: false,
      usage: undefined,
    }),
    map: mapPiEvent,
    conclude: concludePi,
    lastError: (state) => state.lastError,
    sessionId: (state) => state.sessionId,
  };
}

function mapPiEvent(state: PiState, event: AgentEvent): readonly CliMessage[] {
  switch (event.type) {
    case 'session': {
      const header = known(event, 'session');
      if (header === null || state.sessionId !== undefined) return [];
      state.sessionId = header.id;
      return [{ type: state.resuming ? 'session.resumed' : 'session.started', sessionId: header.id }];
    }
    case 'agent_start':
      state.agentEnded = false;
      return [];
    case 'agent_end':
      state.agentEnded = true;
      return [];
    case 'auto_retry_start': {
      const retry = known(event, 'auto_retry_start');
      if (retry === null) return [];
      state.agentEnded = false;
      return [
        {
          type: 'agent.retry',
          attempt: retry.attempt,
          maxAttempts: retry.maxAttempts,
          delayMs: retry.delayMs,
          reason: retry.errorMessage ?? 'unknown error',
        },
      ];
    }
    case 'message_update': {
      const toolCall = known(event, 'message_update')?.assistantMessageEvent.toolCall;
      return toolCall === undefined ? [] : announce(state, toolCall.id, toolCall.name, toolCall.arguments);
    }
    case 'message_start':
      if ((event as { message?: { role?: unknown } }).message?.role === 'assistant') state.answering = true;
      return [];
    case 'message_end':
      return onMessageEnd(state, known(event, 'message_end'));
    case 'tool_execution_start': {
      const start = known(event, 'tool_execution_start');
      return start === null ? [] : announce(state, start.toolCallId, start.toolName, start.args);
    }
    case 'tool_execution_update': {
      const update = known(event, 'tool_execution_update');
      if (update === null) return [];
      const call = state.calls.get(update.toolCallId);
      const output = resultText(update.partialResult?.content);
      if (call?.done === true || output === (call?.lastOutput ?? '')) return [];
      const messages = call === undefined ? announce(state, update.toolCallId, update.toolName, undefined) : [];
      const tracked = state.calls.get(update.toolCallId);
      if (tracked !== undefined) tracked.lastOutput = output;
      return [...messages, { type: 'tool.update', toolCallId: update.toolCallId, name: update.toolName, output }];
    }
    case 'tool_execution_end': {
      const end = known(event, 'tool_execution_end');
      if (end === null || state.calls.get(end.toolCallId)?.done === true) return [];
      const messages = state.calls.has(end.toolCallId) ? [] : announce(state, end.toolCallId, end.toolName, undefined);
      const tracked = state.calls.get(end.toolCallId);
      if (tracked !== undefined) tracked.done = true;
      const output = resultText(end.result?.content);
      return [
        ...messages,
        { type: end.isError === true ? 'tool.failed' : 'tool.completed', toolCallId: end.toolCallId, name: end.toolName, output },
      ];
    }
    default:
      return [];
  }
}

function onMessageEnd(state: PiState, end: PiEventOf<'message_end'> | null): readonly CliMessage[] {
  if (end === null || end.message.role !== 'assistant') return [];
  const message = end.message;
  state.answering = false;
  state.lastStopReason = message.stopReason;
  if (message.stopReason === 'error' || message.stopReason === 'aborted') {
    state.lastError = message.errorMessage ?? state.lastError;
  }
  if (message.usage !== undefined) state.usage = addUsage(state.usage, message.usage);
  // Tool calls normally come with `toolcall_end`; the final message is authoritative.
  const messages: CliMessage[] = [];
  if (typeof message.content !== 'string') {
    for (const block of message.content) {
      if (block.type !== 'toolCall') continue;
      const { id, name, arguments: input } = block as { id?: unknown; name?: unknown; arguments?: unknown };
      if (typeof id === 'string' && typeof name === 'string') messages.push(...announce(state, id, name, input));
    }
  }
  return messages;
}

function announce(state: PiState, toolCallId: string, name: string, input: unknown): readonly CliMessage[] {
  if (state.calls.has(toolCallId)) return [];
  state.calls.set(toolCallId, { name, input, lastOutput: '', done: false });
  return [{ type: 'tool.call', toolCallId, name, input: input ?? null }];
}

function resultText(content: readonly { readonly type: string }[] | undefined): string {
  if (content === undefined) return '';
  let text = '';
  for (const block of content) {
    const value = (block as { text?: unknown }).text;
    if (block.type === 'text' && typeof value === 'string') text += value;
  }
  return text;
}

function addUsage(total: Usage | undefined, usage: NonNullable<PiMessage['usage']>): Usage {
  const cost = usage.cost?.total;
  const sum: Usage = {
    inputTokens: (total?.inputTokens ?? 0) + usage.input,
    outputTokens: (total?.outputTokens ?? 0) + usage.output,
    cacheReadTokens: (total?.cacheReadTokens ?? 0) + (usage.cacheRead ?? 0),
    cacheWriteTokens: (total?.cacheWriteTokens ?? 0) + (usage.cacheWrite ?? 0),
    totalTokens: (total?.totalTokens ?? 0) + (usage.totalTokens ?? usage.input + usage.output),
  };
  return cost === undefined && total?.cost === undefined ? sum : { ...sum, cost: (total?.cost ?? 0) + (cost ?? 0) };
}

function concludePi(state: PiState): Conclusion {
  if (state.lastStopReason === 'error') {
    return { kind: 'failed', reason: 'agent-error', message: `pi reported an error: ${state.lastError ?? 'unknown error'}`, ended: state.agentEnded };
  }
  if (state.lastStopReason === 'aborted') {
    return { kind: 'failed', reason: 'aborted', message: `pi aborted the request: ${state.lastError ?? 'aborted'}`, ended: state.agentEnded };
  }
  if (state.agentEnded && (state.lastStopReason === 'stop' || state.lastStopReason === 'length')) {
    return { kind: 'completed', stopReason: state.lastStopReason, ...(state.usage === undefined ? {} : { usage: state.usage }) };
  }
  if (state.answering) {
    return { kind: 'inconclusive', message: 'pi exited in the middle of an answer' };
  }
  if (state.lastStopReason === undefined) {
    return { kind: 'inconclusive', message: 'pi exited without an answer (no assistant message; was a prompt given?)' };
  }
  return { kind: 'inconclusive', message: `pi exited before its run ended (last stop reason: ${state.lastStopReason})` };
}
