import * as z from 'zod';
import { TOOL_KINDS, type CliMessage, type ToolContent, type ToolKind } from '../../messages.js';
import type { TurnEnd } from '../../operators/buffer-thinking-until-turn-end.js';
import type { Conclusion, Dialect } from '../../operators/dialect.js';
import type { AgentEvent } from '../../operators/items.js';
import type { TextReader, TextReading } from '../../operators/snapshot-to-delta.js';
import { contentText } from '../shared/content.js';
import { field, narrowEvents, stringOf } from '../shared/events.js';
import { parseJsonRpcLine, rpcErrorText } from '../shared/json-rpc.js';
import { SessionHeader } from '../shared/session.js';
import { ToolCalls } from '../shared/tool-calls.js';
import { knownTypes } from '../../operators/unknown-types.js';

/**
 * The Agent Client Protocol messages the dialect reads: `session/update` notifications, the
 * updates of a session as the agent streams them (`parseJsonRpcLine` names each message's kind).
 * Loose: only `sessionUpdate` is checked; each kind's fields are read defensively.
 */
export const acpEventSchemas = {
  'session/update': z.looseObject({
    type: z.literal('session/update'),
    params: z.looseObject({ sessionId: z.string(), update: z.looseObject({ sessionUpdate: z.string() }) }),
  }),
} as const;

/**
 * Every type of message an ACP agent may send under the protocol's version 1 (the `@agentclientprotocol/sdk`
 * that agent-rx speaks): `response`, its notifications and requests by method, and a
 * `session/update` by its kind (`session/update:plan`). Most are left aside on purpose (plans,
 * available commands, modes, usage; terminal and elicitation requests, which the SDK answers
 * "method not found"). Extension methods (`_` first, the protocol's own way to extend it) are not
 * checked. Another type is an `agent.warning`, once per type.
 */
export const ACP_TYPES: readonly string[] = [
  'response',
  'session/request_permission',
  'fs/read_text_file',
  'fs/write_text_file',
  'terminal/create',
  'terminal/output',
  'terminal/release',
  'terminal/wait_for_exit',
  'terminal/kill',
  'elicitation/create',
  'elicitation/complete',
  'mcp/message',
  'auth/status_update',
  '$/cancel_request',
  ...[
    'user_message_chunk',
    'agent_message_chunk',
    'agent_thought_chunk',
    'tool_call',
    'tool_call_update',
    'plan',
    'plan_update',
    'plan_removed',
    'available_commands_update',
    'current_mode_update',
    'config_option_update',
    'session_info_update',
    'usage_update',
    'notice',
    'compaction_update',
    'compaction_summary_chunk',
    'session_message',
    'session_message_chunk',
    'subagent_update',
  ].map((kind) => `session/update:${kind}`),
];

/**
 * The type of an ACP message as {@link ACP_TYPES} names it: a request's method, an update's kind
 * (`session/update:tool_call`); `undefined` for an extension method (`_` first).
 *
 * @example
 * acpEventType({ type: 'session/update', params: { sessionId: 'S1', update: { sessionUpdate: 'plan' } } }); // 'session/update:plan'
 * acpEventType({ type: 'server-request', id: 0, method: '_vendor/ping' }); // undefined
 */
export function acpEventType(event: AgentEvent): string | undefined {
  const method = event.type === 'server-request' ? stringOf(event['method']) : event.type;
  if (method === undefined || method.startsWith('_')) return undefined;
  const update = method === 'session/update' ? stringOf(field(field(event['params'], 'update'), 'sessionUpdate')) : undefined;
  return update === undefined ? method : `${method}:${update}`;
}

type Schemas = typeof acpEventSchemas;
/** One Agent Client Protocol message the dialect reads: a `session/update` notification's update, a response. */
export type AcpEvent = { [K in keyof Schemas]: z.infer<Schemas[K]> }[keyof Schemas];

const known = narrowEvents<AcpEvent>();

/** The update of a `session/update` notification, or null. */
function updateOf(event: AgentEvent): (Record<string, unknown> & { readonly sessionUpdate: string }) | null {
  return known(event, 'session/update')?.params.update ?? null;
}

/** The text of a content block (`{ type: 'text', text }`), or undefined. */
function blockText(content: unknown): string | undefined {
  return field(content, 'type') === 'text' ? stringOf(field(content, 'text')) : undefined;
}

/**
 * Reads an ACP agent's text: `agent_message_chunk` and `agent_thought_chunk` carry true deltas
 * (text content blocks), keyed by their `messageId` where the agent gives one.
 *
 * @example
 * lines.pipe(
 *   parseJsonLine({ schemas: acpEventSchemas, parse: parseJsonRpcLine }),
 *   snapshotToDelta({ createReader: createAcpTextReader }),
 * );
 */
export function createAcpTextReader(): TextReader {
  return (event): TextReading | null => {
    const update = updateOf(event);
    if (update === null) return null;
    const channel = update.sessionUpdate === 'agent_message_chunk' ? 'assistant' : update.sessionUpdate === 'agent_thought_chunk' ? 'thought' : null;
    const text = blockText(update['content']);
    if (channel === null || text === undefined) return null;
    return { channel, key: stringOf(update['messageId']) ?? channel, delta: text };
  };
}

/**
 * A prompt turn of ACP ends with the answer to `session/prompt`, which the session protocol reads.
 *
 * @example
 * acpTurnEnd({ type: 'response' }); // 'final'
 * acpTurnEnd({ type: 'session/update' }); // null
 */
export function acpTurnEnd(event: AgentEvent): TurnEnd {
  return event.type === 'response' ? 'final' : null;
}

/** The ACP dialect's state for one turn or run (created by `createState`). */
export interface AcpState {
  readonly session: SessionHeader;
  readonly tools: ToolCalls;
  /** The names of the tool calls seen, by id (an update may leave its title out). */
  readonly names: Map<string, string>;
  /** Tool calls announced without their input, held until an update brings it (see {@link acpDialect}). */
  readonly held: Map<string, HeldCall>;
  /** The images and diffs of each call's latest content (an update's content replaces the one before). */
  readonly contents: Map<string, readonly ToolContent[]>;
  /** The last error an answer of the agent carried. */
  lastError: string | undefined;
}

/** A tool call the agent announced with an empty input: what it said of it so far. */
export interface HeldCall {
  name: string;
  kind: ToolKind | undefined;
  /** The call's latest title (`Shell: echo hello`), the input when no other comes. */
  title: string | undefined;
}

/**
 * The dialect of an Agent Client Protocol agent (JSON-RPC lines): text and thought chunks as
 * deltas, tool calls and their updates (whose content replaces the last), and notices as warnings.
 * How a turn ends is the session protocol's: the answer to its `session/prompt`. A call's content
 * gives its output (its text blocks) and, in `tool.completed.content`, the images it gave back
 * (`{ type: 'content', content: { type: 'image' } }`) and the files it changed (`diff` blocks:
 * path, old text or `null` for a new file, new text), as its latest content holds them.
 *
 * A tool call's `name` is the agent's own name for the tool where it gives one (`_meta.toolName`,
 * e.g. Qwen Code's `run_shell_command`), else its ACP `kind`; its `kind` is the ACP kind. An agent
 * may announce a call before its input is known (`rawInput: {}`, a bare title) and send the input
 * in a later `tool_call_update`: such a `tool.call` is held until the first update that carries an
 * input, and goes out at the latest with the call's first output or result, or with the answer
 * that ends the turn (then with its title as the input), so that none is lost or held for ever.
 *
 * @example
 * // The content of any ACP agent's session; its turns are acpClientProtocol's.
 * const session = processSession({
 *   command: 'my-acp-agent',
 *   args: [],
 *   processOptions: {},
 *   dialect: acpDialect('My agent'),
 *   protocol: acpClientProtocol({ name: 'My agent', cwd: process.cwd() }),
 * });
 * commands.pipe(session).subscribe(render);
 */
export function acpDialect(name = 'ACP agent', options: AcpDialectOptions = {}): Dialect<AcpState> {
  const nameOf = (update: Readonly<Record<string, unknown>>): string => acpToolName(update, options.toolName);
  return {
    name,
    schemas: acpEventSchemas,
    parse: parseJsonRpcLine,
    createTextReader: createAcpTextReader,
    turnEnd: acpTurnEnd,
    createState: () => ({ session: new SessionHeader(false), tools: new ToolCalls(), names: new Map(), held: new Map(), contents: new Map(), lastError: undefined }),
    map: (state, event) => mapAcpEvent(state, event, nameOf),
    conclude: (): Conclusion => ({ kind: 'inconclusive', message: `the ${name} ended its session` }),
    lastError: (state) => state.lastError,
    sessionId: (state) => state.session.sessionId,
    unknownType: knownTypes([...ACP_TYPES, ...(options.types ?? [])], acpEventType),
  };
}

/** What an agent's ACP dialect knows besides ACP. */
export interface AcpDialectOptions {
  /** The agent's name of a tool from the call's id, where its updates say no name (Gemini CLI's ids begin with it). */
  readonly toolName?: (toolCallId: string) => string | undefined;
  /**
   * The methods the agent sends besides ACP's own, which agent-rx leaves aside
   * (Qwen Code's `craft/drainMidTurnQueue` request): they are no unknown type.
   */
  readonly types?: readonly string[];
}

function mapAcpEvent(state: AcpState, event: AgentEvent, toolName: (update: Readonly<Record<string, unknown>>) => string): readonly CliMessage[] {
  if (event.type === 'server-request' && event['method'] === 'session/request_permission') {
    // The agent may ask before it announces the call: what it says of it is kept for the announcement.
    const call = field(event['params'], 'toolCall');
    const id = stringOf(field(call, 'toolCallId'));
    if (id === undefined || typeof call !== 'object' || call === null || state.names.has(id)) return [];
    const update = call as Readonly<Record<string, unknown>>;
    const held = state.held.get(id);
    if (held === undefined) {
      state.held.set(id, { name: toolName(update), kind: toolKind(update), title: stringOf(update['title']) });
      return [];
    }
    // A call held for its input: the request may carry it (Qwen Code's does).
    return emptyInput(update['rawInput']) ? [] : release(state, id, update['rawInput']);
  }
  if (event.type === 'response') {
    const error = rpcErrorText(event['error']);
    if (error !== undefined) state.lastError = error;
    // The answer ends the prompt: a call still waiting for its input goes out as it is.
    return [...state.held.keys()].flatMap((id) => release(state, id, undefined));
  }
  const update = updateOf(event);
  if (update === null) return [];
  switch (update.sessionUpdate) {
    case 'tool_call':
    case 'tool_call_update':
      return toolMessages(state, update, toolName);
    case 'notice': {
      const title = stringOf(update['title']) ?? '';
      const description = stringOf(update['description']);
      return [{ type: 'agent.warning', message: description === undefined ? title : `${title}: ${description}` }];
    }
    default:
      return [];
  }
}

/**
 * The name a tool is known by: the agent's own (`_meta.toolName`), its `name`, what the agent's
 * `fromId` reads in the call's id, else its kind (`execute`, `edit`, …), else `tool`.
 */
export function acpToolName(update: Readonly<Record<string, unknown>>, fromId?: (toolCallId: string) => string | undefined): string {
  const id = stringOf(update['toolCallId']);
  return (
    stringOf(field(update['_meta'], 'toolName')) ?? stringOf(update['name']) ?? (id === undefined ? undefined : fromId?.(id)) ?? stringOf(update['kind']) ?? 'tool'
  );
}

/** The call's ACP kind, when it is one of the contract's. */
export function toolKind(update: Readonly<Record<string, unknown>>): ToolKind | undefined {
  const kind = update['kind'];
  return (TOOL_KINDS as readonly unknown[]).includes(kind) ? (kind as ToolKind) : undefined;
}

/** Whether a call's `rawInput` says nothing yet: absent, null or `{}`. */
function emptyInput(input: unknown): boolean {
  return input === undefined || input === null || (typeof input === 'object' && !Array.isArray(input) && Object.keys(input).length === 0);
}

function announce(state: AcpState, id: string, name: string, kind: ToolKind | undefined, input: unknown): readonly CliMessage[] {
  state.names.set(id, name);
  return state.tools.call(id, name, input).map((message) => (message.type === 'tool.call' && kind !== undefined ? { ...message, kind } : message));
}

/** A held call goes out, with `input` or, when it has none, its title (`{ title }`). */
function release(state: AcpState, id: string, input: unknown): readonly CliMessage[] {
  const held = state.held.get(id);
  if (held === undefined) return [];
  state.held.delete(id);
  const fallback = held.title === undefined ? null : { title: held.title };
  return announce(state, id, held.name, held.kind, emptyInput(input) ? fallback : input);
}

function toolMessages(state: AcpState, update: Readonly<Record<string, unknown>>, toolName: (update: Readonly<Record<string, unknown>>) => string): readonly CliMessage[] {
  const id = stringOf(update['toolCallId']);
  if (id === undefined) return [];
  const rawInput = update['rawInput'];
  const title = stringOf(update['title']);
  const content = update['content'];
  const text = Array.isArray(content) ? contentText(content.map((part) => field(part, 'content'))) : undefined;
  if (Array.isArray(content)) state.contents.set(id, toolContent(content));
  // An empty content list (`content: []`, sent with most updates) is no output.
  const output = text === '' ? undefined : text;
  const status = update['status'];
  const ends = status === 'completed' || status === 'failed';
  const messages: CliMessage[] = [];
  const held = state.held.get(id);
  if (update['sessionUpdate'] === 'tool_call' && held === undefined && !state.names.has(id)) {
    const name = toolName(update);
    if (emptyInput(rawInput) && !ends && output === undefined) {
      state.held.set(id, { name, kind: toolKind(update), title });
      return [];
    }
    messages.push(...announce(state, id, name, toolKind(update), rawInput ?? (title === undefined ? null : { title })));
  } else if (held !== undefined) {
    // What a later update says of a held call: its own name, kind and title, maybe its input.
    const metaName = stringOf(field(update['_meta'], 'toolName'));
    if (metaName !== undefined) held.name = metaName;
    held.kind = toolKind(update) ?? held.kind;
    held.title = title ?? held.title;
    if (!emptyInput(rawInput) || ends || output !== undefined) messages.push(...release(state, id, rawInput));
  }
  const name = state.names.get(id) ?? toolName(update);
  if (ends) {
    messages.push(...state.tools.result(id, name, output ?? rawText(update['rawOutput']), status === 'failed', state.contents.get(id)));
    state.contents.delete(id);
  } else if (output !== undefined && update['sessionUpdate'] === 'tool_call_update') {
    messages.push(...state.tools.update(id, name, output));
  }
  return messages;
}
/**
 * The images and diffs among a call's ACP content (`{ type: 'content', content: { type: 'image',
 * data, mimeType } }`, `{ type: 'diff', path, oldText, newText }`); text and anything else left out.
 *
 * @example
 * toolContent([{ type: 'diff', path: '/w/a.txt', oldText: null, newText: 'A' }]); // [{ type: 'diff', path: '/w/a.txt', oldText: null, newText: 'A' }]
 */
export function toolContent(content: readonly unknown[]): ToolContent[] {
  const found: ToolContent[] = [];
  for (const part of content) {
    const type = field(part, 'type');
    if (type === 'diff') {
      const path = stringOf(field(part, 'path'));
      const newText = stringOf(field(part, 'newText'));
      const oldText = field(part, 'oldText');
      if (path !== undefined && newText !== undefined) found.push({ type: 'diff', path, oldText: typeof oldText === 'string' ? oldText : null, newText });
    } else if (type === 'content') {
      const inner = field(part, 'content');
      const data = stringOf(field(inner, 'data'));
      const mimeType = stringOf(field(inner, 'mimeType'));
      if (field(inner, 'type') === 'image' && data !== undefined && mimeType !== undefined) found.push({ type: 'image', data, mimeType });
    }
  }
  return found;
}

function rawText(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}
