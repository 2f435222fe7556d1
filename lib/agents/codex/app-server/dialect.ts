import type { CliMessage, Usage } from '../../../messages.js';
import type { TurnEnd } from '../../../operators/buffer-thinking-until-turn-end.js';
import type { Conclusion, Dialect } from '../../../operators/dialect.js';
import type { AgentEvent } from '../../../operators/items.js';
import type { TextReader, TextReading } from '../../../operators/snapshot-to-delta.js';
import { field, narrowEvents, numberOf, stringOf } from '../../shared/events.js';
import { installHint } from '../../shared/options.js';
import { SessionHeader } from '../../shared/session.js';
import { ToolCalls } from '../../shared/tool-calls.js';
import { addUsage } from '../../../operators/add-usage.js';
import { codexStderrLine, codexUsage, retryNotice } from '../dialect.js';
import { parseJsonRpcLine } from '../../shared/json-rpc.js';
import { knownTypes } from '../../../operators/unknown-types.js';
import { APP_SERVER_TYPES, appServerEventSchemas, appServerEventType, type AppServerEvent } from './events.js';
import { codexTools } from '../tools.js';
import { addedFiles, inlineImage, mcpImages, withContent } from '../tool-content.js';

const known = narrowEvents<AppServerEvent>();

/**
 * Reads the text of `codex app-server`, one reader per session: `item/agentMessage/delta` carries
 * true deltas (keyed by the message's item id), and `item/completed` of an agent message its final
 * text. Reasoning comes as summary deltas, each summary a key of its own; every summary after the
 * session's first begins with a blank line, as the turn's one thought reads them.
 *
 * @example
 * lines.pipe(
 *   parseJsonLine({ schemas: appServerEventSchemas, parse: parseJsonRpcLine }),
 *   snapshotToDelta({ createReader: createAppServerTextReader }),
 * );
 */
export function createAppServerTextReader(): TextReader {
  const summaries = new Map<string, string>();
  const summary = (key: string): string => {
    let prefix = summaries.get(key);
    if (prefix === undefined) {
      prefix = summaries.size === 0 ? '' : '\n\n';
      summaries.set(key, prefix);
    }
    return prefix;
  };
  return (event): TextReading | readonly TextReading[] | null => {
    const delta = known(event, 'item/agentMessage/delta');
    if (delta !== null) return { channel: 'assistant', key: delta.params.itemId, delta: delta.params.delta };
    const thinking = known(event, 'item/reasoning/summaryTextDelta');
    if (thinking !== null) {
      const key = `${thinking.params.itemId}:${String(thinking.params.summaryIndex ?? 0)}`;
      const first = !summaries.has(key);
      const prefix = summary(key);
      return { channel: 'thought', key, delta: `${first ? prefix : ''}${thinking.params.delta}` };
    }
    const completed = known(event, 'item/completed');
    if (completed === null) return null;
    const item = completed.params.item;
    if (item.type === 'agentMessage') {
      const text = stringOf(item['text']);
      return text === undefined ? null : { channel: 'assistant', key: item.id, snapshot: text, final: true };
    }
    if (item.type !== 'reasoning' || !Array.isArray(item['summary'])) return null;
    return (item['summary'] as unknown[]).flatMap((part, index) => {
      const text = stringOf(part);
      if (text === undefined || text === '') return [];
      const key = `${item.id}:${String(index)}`;
      return [{ channel: 'thought' as const, key, snapshot: `${summary(key)}${text}`, final: true }];
    });
  };
}

/**
 * A turn of Codex ends at `turn/completed`.
 *
 * @example
 * items.pipe(bufferThinkingUntilTurnEnd({ turnEnd: appServerTurnEnd }));
 */
export function appServerTurnEnd(event: AgentEvent): TurnEnd {
  return event.type === 'turn/completed' ? 'final' : null;
}

/** The Codex app-server dialect's state for one turn (created by `createState`). */
export interface AppServerState {
  readonly session: SessionHeader;
  readonly tools: ToolCalls;
  /** Output of running commands so far, by item id. */
  readonly output: Map<string, string>;
  /** How the last turn ended (`turn/completed`), with its error. */
  turn: { readonly status: string; readonly error: string | undefined } | undefined;
  /** The usage of the model requests seen (each `thread/tokenUsage/updated` reports its last one). */
  usage: Usage | undefined;
  /** The last error Codex reported: a final `error` notification, or an error answer to a request. */
  lastError: string | undefined;
}

const CODEX_INSTALL_HINT = installHint('Codex', '@openai/codex');

/**
 * The dialect of `codex app-server` (JSON-RPC lines), for sessions: text as true deltas, reasoning
 * summaries, commands and file changes as tools, warnings and retries. How a turn ended is read
 * from `turn/completed`; a state made for one turn (as the session protocol does) concludes that
 * turn, with the usage of its model requests.
 *
 * @example
 * // What codexSession does, by hand (without finding the native binary): one Codex thread in this folder.
 * commands
 *   .pipe(
 *     processSession({
 *       command: 'codex',
 *       args: ['app-server'],
 *       processOptions: {},
 *       dialect: codexAppServerDialect(),
 *       protocol: codexAppServerProtocol({ thread: { start: { cwd: process.cwd() } } }),
 *     }),
 *   )
 *   .subscribe(render);
 */
export function codexAppServerDialect(): Dialect<AppServerState> {
  return {
    name: 'Codex',
    installHint: CODEX_INSTALL_HINT,
    tools: codexTools,
    schemas: appServerEventSchemas,
    parse: parseJsonRpcLine,
    createTextReader: createAppServerTextReader,
    turnEnd: appServerTurnEnd,
    createState: () => ({ session: new SessionHeader(false), tools: new ToolCalls(), output: new Map(), turn: undefined, usage: undefined, lastError: undefined }),
    map: mapAppServerEvent,
    conclude: concludeTurn,
    lastError: (state) => state.turn?.error ?? state.lastError,
    // The same binary as `codex exec`: the same stderr.
    stderrLine: codexStderrLine,
    sessionId: (state) => state.session.sessionId,
    unknownType: knownTypes(APP_SERVER_TYPES, appServerEventType),
  };
}

function mapAppServerEvent(state: AppServerState, event: AgentEvent): readonly CliMessage[] {
  switch (event.type) {
    case 'item/started':
    case 'item/completed': {
      const line = known(event, event.type);
      return line === null ? [] : mapItem(state, line.params.item, event.type === 'item/completed');
    }
    case 'item/commandExecution/outputDelta': {
      const line = known(event, 'item/commandExecution/outputDelta');
      if (line === null) return [];
      const output = `${state.output.get(line.params.itemId) ?? ''}${line.params.delta}`;
      state.output.set(line.params.itemId, output);
      return state.tools.update(line.params.itemId, 'command_execution', output);
    }
    case 'thread/tokenUsage/updated': {
      const last = known(event, 'thread/tokenUsage/updated')?.params.tokenUsage.last;
      if (last === undefined) return [];
      const usage = codexUsage({
        input_tokens: last.inputTokens,
        cached_input_tokens: last.cachedInputTokens ?? 0,
        cache_write_input_tokens: last.cacheWriteInputTokens ?? 0,
        output_tokens: last.outputTokens,
      });
      state.usage = addUsage(state.usage, usage);
      return [];
    }
    case 'turn/completed': {
      const turn = known(event, 'turn/completed')?.params.turn;
      if (turn !== undefined) state.turn = { status: turn.status, error: turn.error?.message };
      return [];
    }
    case 'warning': {
      const message = known(event, 'warning')?.params.message;
      return message === undefined ? [] : [{ type: 'agent.warning', message }];
    }
    case 'error': {
      const line = known(event, 'error');
      if (line === null) return [];
      const message = line.params.error.message;
      if (line.params.willRetry === true) return [retryNotice(message) ?? { type: 'agent.retry', reason: message }];
      state.lastError = message;
      return [];
    }
    case 'response': {
      const error = known(event, 'response')?.error?.message;
      if (error !== undefined) state.lastError = error;
      return [];
    }
    default:
      return [];
  }
}

/** Tool items (named as `runCodex` names them); messages and reasoning are text. */
function mapItem(state: AppServerState, item: { readonly id: string; readonly type: string; readonly [key: string]: unknown }, done: boolean): readonly CliMessage[] {
  const { tools } = state;
  switch (item.type) {
    case 'commandExecution': {
      const call = tools.call(item.id, 'command_execution', { command: commandOf(item) });
      if (!done) return call;
      const output = stringOf(item['aggregatedOutput']) ?? state.output.get(item.id) ?? '';
      state.output.delete(item.id);
      const exitCode = numberOf(item['exitCode']);
      const failed = item['status'] !== 'completed' || (exitCode !== undefined && exitCode !== 0);
      return [...call, ...tools.result(item.id, 'command_execution', output, failed)];
    }
    case 'fileChange': {
      const changes = Array.isArray(item['changes']) ? (item['changes'] as unknown[]) : [];
      const call = tools.call(item.id, 'file_change', { changes: changes.map((change) => ({ path: field(change, 'path'), kind: field(field(change, 'kind'), 'type') })) });
      if (!done) return call;
      const output = changes.map((change) => `${stringOf(field(field(change, 'kind'), 'type')) ?? 'change'} ${stringOf(field(change, 'path')) ?? ''}`).join('\n');
      // New files come with their whole text; updates with a unified diff only (not content).
      return [...call, ...withContent(tools.result(item.id, 'file_change', output, item['status'] !== 'completed'), addedFiles(changes))];
    }
    case 'mcpToolCall': {
      const name = `mcp__${stringOf(item['server']) ?? 'unknown'}__${stringOf(item['tool']) ?? 'unknown'}`;
      const call = tools.call(item.id, name, item['arguments']);
      if (!done) return call;
      const error = stringOf(field(item['error'], 'message'));
      const result = tools.result(item.id, name, error ?? JSON.stringify(item['result'] ?? null), error !== undefined || item['status'] === 'failed');
      return [...call, ...withContent(result, mcpImages(field(item['result'], 'content')))];
    }
    case 'imageView': {
      // The image the model was shown: the item names its path only.
      const call = tools.call(item.id, 'view_image', { path: stringOf(item['path']) ?? '' });
      return done ? [...call, ...tools.result(item.id, 'view_image', '', false)] : call;
    }
    case 'imageGeneration': {
      const call = tools.call(item.id, 'image_generation', { revisedPrompt: stringOf(item['revisedPrompt']) ?? null });
      if (!done) return call;
      const failed = item['status'] === 'failed' || (item['failure'] !== undefined && item['failure'] !== null);
      const image = inlineImage(item['result']);
      const result = tools.result(item.id, 'image_generation', stringOf(item['savedPath']) ?? '', failed);
      return [...call, ...withContent(result, image === undefined ? [] : [image])];
    }
    default:
      return [];
  }
}

/** The command as the model wrote it: `commandActions[0].command`, else the shell line Codex runs (`/bin/bash -lc '…'`). */
export function commandOf(item: Readonly<Record<string, unknown>>): string {
  const actions = item['commandActions'];
  const first = Array.isArray(actions) ? stringOf(field(actions[0], 'command')) : undefined;
  return first ?? stringOf(item['command']) ?? '';
}

function concludeTurn(state: AppServerState): Conclusion {
  const turn = state.turn;
  if (turn === undefined) return { kind: 'inconclusive', message: 'Codex did not end the turn' };
  switch (turn.status) {
    case 'completed':
      return { kind: 'completed', stopReason: 'end_turn', agentStopReason: 'completed', ...(state.usage === undefined ? {} : { usage: state.usage }) };
    case 'interrupted':
      return { kind: 'failed', reason: 'aborted', message: 'Codex interrupted the turn', ended: true };
    default:
      return { kind: 'failed', reason: 'agent-error', message: `Codex reported an error: ${turn.error ?? state.lastError ?? turn.status}`, ended: true };
  }
}
