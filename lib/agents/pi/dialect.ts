import type { OperatorFunction } from 'rxjs';
import type { CliMessage, ToolContent, Usage } from '../../messages.js';
import { agentOutputToMessages } from '../../operators/agent-output-to-messages.js';
import type { TurnEnd } from '../../operators/buffer-thinking-until-turn-end.js';
import type { Conclusion, Dialect } from '../../operators/dialect.js';
import type { AgentEvent } from '../../operators/items.js';
import type { TextReading } from '../../operators/snapshot-to-delta.js';
import { firstMeaningfulLine } from '../../operators/stderr-lines.js';
import type { ProcessItem } from '../../process/items.js';
import { contentText } from '../shared/content.js';
import { field, narrowEvents, stringOf } from '../shared/events.js';
import { installHint } from '../shared/options.js';
import { SessionHeader } from '../shared/session.js';
import { ToolCalls } from '../shared/tool-calls.js';
import { addUsage } from '../../operators/add-usage.js';
import { usageOf } from '../shared/usage.js';
import { knownTypes } from '../../operators/unknown-types.js';
import { PI_LINE_TYPES, parsePiLine, piEventSchemas, type PiEvent, type PiEventOf, type PiMessage } from './events.js';
import { parsePiBytes } from './parse-bytes.js';
import { piTools } from './tools.js';

const known = narrowEvents<PiEvent>();

function messageKey(message: { readonly timestamp?: number | undefined }): string {
  return String(message.timestamp ?? '');
}

/**
 * Reads pi's text. `text_delta` and `thinking_delta` events carry true deltas (preferred: the
 * snapshot in the same line can run ahead of them); pi versions that send no delta are read from
 * the message snapshot of those events instead, never from other events (whose snapshots run ahead
 * of the deltas that follow). The assistant `message_end` carries the final text, which is
 * authoritative and reconciles anything the deltas missed.
 *
 * @example
 * lines.pipe(
 *   parseJsonLine({ schemas: piEventSchemas, parse: parsePiLine }),
 *   snapshotToDelta({ createReader: () => readPiText, replayedPrefix: true }),
 * );
 */
export function readPiText(event: AgentEvent): TextReading | readonly TextReading[] | null {
  const update = known(event, 'message_update');
  if (update !== null) {
    const { type, delta } = update.assistantMessageEvent;
    const channel = type === 'text_delta' ? 'assistant' : type === 'thinking_delta' ? 'thought' : null;
    if (channel === null) return null;
    const key = messageKey(update.message);
    if (delta !== undefined) return { channel, key, delta };
    return { channel, key, snapshot: contentText(update.message['content'], channel === 'assistant' ? 'text' : 'thinking') };
  }
  const end = known(event, 'message_end');
  if (end !== null && end.message.role === 'assistant') {
    const key = messageKey(end.message);
    return [
      { channel: 'thought', key, snapshot: contentText(end.message.content, 'thinking'), final: true },
      { channel: 'assistant', key, snapshot: contentText(end.message.content, 'text'), final: true },
    ];
  }
  return null;
}

/**
 * An assistant `message_end` ends the turn, unless it stopped to run tools.
 *
 * @example
 * items.pipe(bufferThinkingUntilTurnEnd({ turnEnd: piTurnEnd }));
 */
export function piTurnEnd(event: AgentEvent): TurnEnd {
  const end = known(event, 'message_end');
  if (end === null || end.message.role !== 'assistant') return null;
  return end.message.stopReason === 'toolUse' ? 'tool-use' : 'final';
}

/** The pi dialect's state for one run (created by `createState`). */
export interface PiState {
  readonly session: SessionHeader;
  readonly tools: ToolCalls;
  lastStopReason: string | undefined;
  /** An assistant message started and has not ended yet. */
  answering: boolean;
  lastError: string | undefined;
  /** An `agent_end` came and no `auto_retry_start` after it. */
  agentEnded: boolean;
  usage: Usage | undefined;
}

/** Options of {@link piDialect}. */
export interface PiDialectOptions {
  /** The run continues an existing session: the header becomes `session.resumed`. */
  readonly resuming?: boolean;
}

const PI_INSTALL_HINT = installHint('pi', '@mariozechner/pi-coding-agent');

/**
 * The pi dialect (`pi --mode json`): everything agent-rx knows about pi's output, for
 * `agentOutputToMessages`. pi's snapshots may repeat earlier messages' text after a tool turn (some
 * versions send snapshots only, and do): `replayedPrefix` is on.
 *
 * @example
 * // What runPi does, by hand: pi's JSON mode read as messages (the prompt on stdin; SIGTERM makes pi
 * // end its tool commands too).
 * processLines('pi', ['--mode', 'json'], { stdin: prompt, interrupt: { signal: 'SIGTERM' } })
 *   .pipe(agentOutputToMessages(piDialect()))
 *   .subscribe(render);
 */
export function piDialect(options: PiDialectOptions = {}): Dialect<PiState> {
  const resuming = options.resuming === true;
  return {
    name: 'pi',
    installHint: PI_INSTALL_HINT,
    tools: piTools,
    schemas: piEventSchemas,
    parse: parsePiLine,
    parseBytes: parsePiBytes,
    createTextReader: () => readPiText,
    replayedPrefix: true,
    turnEnd: piTurnEnd,
    createState: () => ({
      session: new SessionHeader(resuming),
      tools: new ToolCalls(),
      lastStopReason: undefined,
      answering: false,
      lastError: undefined,
      agentEnded: false,
      usage: undefined,
    }),
    map: mapPiEvent,
    conclude: concludePi,
    lastError: (state) => state.lastError,
    failureDetails: (state) => {
      // pi's errorMessage starts with the HTTP status of the model API's error ("429 rate limit exceeded").
      const status = /^(\d{3})\b/.exec(state.lastError ?? '')?.[1];
      return status === undefined ? {} : { httpStatus: Number(status) };
    },
    stderrLine: piStderrLine,
    sessionId: (state) => state.session.sessionId,
    unknownType: knownTypes(PI_LINE_TYPES),
  };
}

function mapPiEvent(state: PiState, event: AgentEvent): readonly CliMessage[] {
  switch (event.type) {
    case 'session': {
      const header = known(event, 'session');
      return header === null ? [] : state.session.announce(header.id);
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
      const { attempt, maxAttempts, delayMs, errorMessage } = retry;
      return [{ type: 'agent.retry', attempt, maxAttempts, delayMs, reason: errorMessage ?? 'unknown error' }];
    }
    case 'message_update': {
      const toolCall = known(event, 'message_update')?.assistantMessageEvent.toolCall;
      return toolCall === undefined ? [] : state.tools.call(toolCall.id, toolCall.name, toolCall.arguments);
    }
    case 'message_start':
      if (known(event, 'message_start')?.message.role === 'assistant') state.answering = true;
      return [];
    case 'message_end':
      return onMessageEnd(state, known(event, 'message_end'));
    case 'tool_execution_start': {
      const start = known(event, 'tool_execution_start');
      return start === null ? [] : state.tools.call(start.toolCallId, start.toolName, start.args);
    }
    case 'tool_execution_update': {
      const update = known(event, 'tool_execution_update');
      return update === null ? [] : state.tools.update(update.toolCallId, update.toolName, contentText(update.partialResult?.content));
    }
    case 'tool_execution_end': {
      const end = known(event, 'tool_execution_end');
      if (end === null) return [];
      const failed = end.isError === true;
      const messages = state.tools.result(end.toolCallId, end.toolName, contentText(end.result?.content), failed);
      const content = failed ? [] : toolImages(end.result?.content);
      return content.length === 0 ? messages : messages.map((message) => (message.type === 'tool.completed' ? { ...message, content } : message));
    }
    default:
      return [];
  }
}

/**
 * The images of a tool's result (pi-ai's `ImageContent` blocks: `{ type: 'image', data, mimeType }`,
 * e.g. pi's `read` of an image file), for `tool.completed.content`. Files a tool changed are not
 * read: pi's `edit` reports a display diff only (`details.diff`: numbered changed lines with a few
 * around them, the rest elided), never the text before and after, and `write` does not say whether
 * the file existed.
 */
function toolImages(content: readonly { readonly type: string }[] | undefined): ToolContent[] {
  const images: ToolContent[] = [];
  for (const block of content ?? []) {
    if (block.type !== 'image') continue;
    const data = stringOf(field(block, 'data'));
    const mimeType = stringOf(field(block, 'mimeType'));
    if (data !== undefined && data !== '' && mimeType !== undefined) images.push({ type: 'image', data, mimeType });
  }
  return images;
}

function onMessageEnd(state: PiState, end: PiEventOf<'message_end'> | null): readonly CliMessage[] {
  if (end === null || end.message.role !== 'assistant') return [];
  const message = end.message;
  state.answering = false;
  state.lastStopReason = message.stopReason;
  if (message.stopReason === 'error' || message.stopReason === 'aborted') {
    state.lastError = message.errorMessage ?? state.lastError;
  }
  if (message.usage !== undefined) state.usage = addUsage(state.usage, piUsage(message.usage));
  // Tool calls normally come with `toolcall_end`; the final message is authoritative.
  const messages: CliMessage[] = [];
  if (typeof message.content !== 'string') {
    for (const block of message.content) {
      if (block.type !== 'toolCall') continue;
      const { id, name, arguments: input } = block as { id?: unknown; name?: unknown; arguments?: unknown };
      if (typeof id === 'string' && typeof name === 'string') messages.push(...state.tools.call(id, name, input));
    }
  }
  return messages;
}

function piUsage(usage: NonNullable<PiMessage['usage']>): Usage {
  return usageOf({
    input: usage.input,
    output: usage.output,
    cacheRead: usage.cacheRead,
    cacheWrite: usage.cacheWrite,
    total: usage.totalTokens ?? usage.input + usage.output,
    cost: usage.cost?.total,
  });
}

// What pi prints that does not say why it stopped: its warnings (it goes on after them) and its pointer to /login.
const STDERR_NOISE = [/^Warning: /, /^Use \/login\b/];

/**
 * The stderr line that explains a failed exit of pi: the first that says what is wrong ("No API
 * key found for the selected model."), not a warning before it, its /login hint or the docs it
 * points to; a stderr of warnings only gives its first warning.
 */
export function piStderrLine(stderr: string): string | undefined {
  return firstMeaningfulLine(stderr, STDERR_NOISE) ?? firstMeaningfulLine(stderr);
}

function concludePi(state: PiState): Conclusion {
  if (state.lastStopReason === 'error') {
    return { kind: 'failed', reason: 'agent-error', message: `pi reported an error: ${state.lastError ?? 'unknown error'}`, ended: state.agentEnded };
  }
  if (state.lastStopReason === 'aborted') {
    return { kind: 'failed', reason: 'aborted', message: `pi aborted the request: ${state.lastError ?? 'aborted'}`, ended: state.agentEnded };
  }
  if (state.agentEnded && (state.lastStopReason === 'stop' || state.lastStopReason === 'length')) {
    return {
      kind: 'completed',
      stopReason: state.lastStopReason === 'stop' ? 'end_turn' : 'max_tokens',
      agentStopReason: state.lastStopReason,
      ...(state.usage === undefined ? {} : { usage: state.usage }),
    };
  }
  if (state.answering) {
    return { kind: 'inconclusive', message: 'pi exited in the middle of an answer' };
  }
  if (state.lastStopReason === undefined) {
    return { kind: 'inconclusive', message: 'pi exited without an answer (no assistant message; was a prompt given?)' };
  }
  return { kind: 'inconclusive', message: `pi exited before its run ended (last stop reason: ${state.lastStopReason})` };
}

/**
 * pi's whole pipeline: `agentOutputToMessages(piDialect(options))`. `runPi` is `processLines(...)`
 * piped through this; on its own it replays recorded pi output.
 *
 * @example
 * from(recordedItems).pipe(piOutputToMessages()).subscribe(console.log);
 */
export function piOutputToMessages(options: PiDialectOptions = {}): OperatorFunction<ProcessItem, CliMessage> {
  return agentOutputToMessages(piDialect(options));
}
