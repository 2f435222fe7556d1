import * as acp from '@agentclientprotocol/sdk';
import { createRequire } from 'node:module';
import type { PermissionDecision, Usage } from '../../messages.js';
import type { AgentEvent } from '../../operators/items.js';
import { NO_REACTION, type PermissionAsk, type ProtocolChannel, type ProtocolFact, type ProtocolReaction, type SessionAsk, type SessionProtocol } from '../../operators/session-protocol.js';
import type { SessionInput, TurnOutcome, TurnTrace } from '../../sessions/session-machine.js';
import { fileBlock, type PromptContent } from '../../operators/prompt-parts.js';
import { field, stringOf } from '../shared/events.js';
import type { ToolVocabulary } from '../../operators/dialect.js';
import { acpToolName, toolKind } from './dialect.js';
import { rpcErrorText, withoutType } from '../shared/json-rpc.js';
import { sessionHeader } from '../shared/session.js';

/** The client capabilities a caller provides: off unless given. */
export interface AcpClientHandlers {
  /** `fs/read_text_file`: with it, the agent may read files through the client. */
  readonly readTextFile?: (request: acp.ReadTextFileRequest) => acp.ReadTextFileResponse | Promise<acp.ReadTextFileResponse>;
  /** `fs/write_text_file`: with it, the agent may write files through the client. */
  readonly writeTextFile?: (request: acp.WriteTextFileRequest) => acp.WriteTextFileResponse | Promise<acp.WriteTextFileResponse>;
}

/** Options of {@link acpClientProtocol}: the session an ACP client opens, and what it answers the agent. */
export interface AcpProtocolOptions {
  /** The session's working directory (absolute), for `session/new` (or `session/load`). */
  readonly cwd: string;
  /**
   * The id of a session the agent keeps, to load (`session/load`) instead of opening a new one:
   * announced with `session.resumed`. An agent whose `initialize` answer does not say
   * `loadSession` cannot: the session's first turn fails, saying so.
   */
  readonly resume?: string;
  /** MCP servers for the session. Default none. */
  readonly mcpServers?: readonly acp.McpServer[];
  /** The agent's name in diagnostics. */
  readonly name: string;
  /** The client capabilities offered to the agent (file reads and writes); none by default. */
  readonly handlers?: AcpClientHandlers;
  /** The turn's usage, where an agent puts it into its answer to `session/prompt` (ACP itself has no field for it). */
  readonly usageOf?: (response: acp.PromptResponse) => Usage | undefined;
  /** The agent's tools (kinds and summaries), for its permission requests. */
  readonly tools?: ToolVocabulary;
  /** The agent's name of a tool from a call's id, where the call says no name. */
  readonly toolName?: (toolCallId: string) => string | undefined;
  /** Keys of a prompt's `_meta` the agent reads a turn's trace context from, besides W3C's `traceparent` and `tracestate`. */
  readonly traceMeta?: (trace: TurnTrace) => Readonly<Record<string, string>>;
}

/** One agent-rx turn: one `session/prompt`, or more when a steer cut the one before. */
interface AcpTurn {
  /** The JSON-RPC id of the running `session/prompt`, once the SDK wrote it. */
  promptId: acp.JsonRpcId | undefined;
  /** A `session/prompt` is asked of the SDK and not answered yet. */
  prompting: boolean;
  /** Steers waiting for the running prompt to stop: they are sent as the next prompt. */
  readonly steers: SessionInput[];
  aborted: boolean;
  /** The turn's processes are being killed after a cancel: it ends once they are gone. */
  killing: TurnOutcome | null;
  /** The turn's trace context, carried in each of its prompts' `_meta`. */
  readonly trace: TurnTrace | undefined;
}

/** The ACP client protocol's state, one per session subscription (created by `createState`). */
export interface AcpClientState {
  connection: acp.ClientConnection | null;
  /** Feeds the SDK the agent's messages. */
  controller: ReadableStreamDefaultController<acp.AnyMessage> | null;
  channel: ProtocolChannel | null;
  sessionId: string | null;
  /** Asks held until the session exists. */
  readonly pending: SessionAsk[];
  turn: AcpTurn | null;
  fatal: string | undefined;
  /** The agent's own keys for a turn's trace context (see {@link AcpProtocolOptions.traceMeta}). */
  readonly traceMeta: AcpProtocolOptions['traceMeta'];
  /** What the agent said of its tool calls (name, kind, title, input), by id: a permission request may say less. */
  readonly calls: Map<string, Readonly<Record<string, unknown>>>;
  /** What the agent's prompts take (`initialize`'s `agentCapabilities.promptCapabilities`), once it answered. */
  promptCapabilities: acp.PromptCapabilities | undefined;
  /** The agent's version (`initialize`'s `agentInfo.version`), once it answered, where it says it. */
  agentVersion: string | undefined;
}

const VERSION = (createRequire(import.meta.url)('../../../package.json') as { version: string }).version;

/**
 * An Agent Client Protocol agent as a session protocol, with agent-rx as its client. The wire is
 * the ACP SDK's (`@agentclientprotocol/sdk`): it frames and checks requests, numbers them and
 * answers the agent's requests; the session reads the agent's lines in their order of arrival,
 * so a turn ends at the answer to its `session/prompt` only after every update before it.
 * - `initialize` and `session/new` go out at once; turns wait for the session id, which is
 *   announced with the agent's version where its `initialize` answer says it (`agentInfo.version`);
 *   with `resume`, `session/load` of that session instead (the agent must say `loadSession`),
 *   announced with `session.resumed`: the history the agent replays before its answer comes while
 *   no turn runs, and is left out;
 * - a prompt is `session/prompt`, an abort `session/cancel` (the answer then says `cancelled`);
 *   the turn ends once the processes it started are gone;
 * - a prompt's parts go as ACP content blocks, in order (`acpPromptBlocks`): text, images
 *   (`image` blocks, base64), files as embedded resources (`resource` with the file's URI and the
 *   text read when the command was made; as text for an agent without `embeddedContext`, and
 *   beside an image). An agent whose `initialize` says it takes no image gets no prompt with one:
 *   the turn fails, a steer is dropped (`unsupported`);
 * - ACP has no steer: a steer cancels the running prompt and is sent as the next prompt, in the same
 *   agent-rx turn (what Gemini CLI does with a second prompt); follow-ups are agent-rx's;
 * - a permission request is the session's (`permission.requested`, decided by its policy); the
 *   answer is the option the agent offered for the decision, or `cancelled` once the prompt was
 *   cancelled; file-system requests only with the caller's handlers, terminal requests never (the
 *   SDK answers "method not found").
 *
 * @example
 * // What acpSession does, by hand (its permission requests denied: processSession's default).
 * commands
 *   .pipe(
 *     processSession({
 *       command: 'my-acp-agent',
 *       args: ['--stdio'],
 *       processOptions: { interrupt: { signal: 'SIGTERM' } },
 *       dialect: acpDialect('My agent'),
 *       protocol: acpClientProtocol({ name: 'My agent', cwd: process.cwd() }),
 *     }),
 *   )
 *   .subscribe(render);
 */
export function acpClientProtocol(options: AcpProtocolOptions): SessionProtocol<AcpClientState> {
  return {
    name: options.name,
    // Images as `image` blocks, files as embedded resources; a schema is told in the prompt.
    prompts: { image: true, file: true },
    createState: () => ({
      connection: null,
      controller: null,
      channel: null,
      sessionId: null,
      pending: [],
      turn: null,
      fatal: undefined,
      traceMeta: options.traceMeta,
      calls: new Map(),
      promptCapabilities: undefined,
      agentVersion: undefined,
    }),
    // The session's id is the answer to `session/new`, before any prompt.
    announcesSession: () => true,
    open: (state, channel) => {
      connect(state, channel, options);
      return [];
    },
    act,
    read: (state, event) => read(state, event, options.usageOf),
    cleanExit: (state, exit) => exit.exitCode === 0 && state.fatal === undefined,
    close: (state) => {
      state.connection?.close();
      state.connection = null;
    },
  };
}

function connect(state: AcpClientState, channel: ProtocolChannel, options: AcpProtocolOptions): void {
  state.channel = channel;
  const readable = new ReadableStream<acp.AnyMessage>({
    start: (controller) => {
      state.controller = controller;
    },
  });
  const writable = new WritableStream<acp.AnyMessage>({
    write: (message) => {
      // The id the SDK gave the prompt: its answer ends the turn, in the order the agent's lines came.
      if ('method' in message && message.method === acp.methods.agent.session.prompt && 'id' in message && state.turn !== null) {
        state.turn.promptId = message.id;
      }
      channel.write(message);
    },
  });
  const app = acp
    .client({ name: 'agent-rx' })
    // Updates are read from the lines, in order (see `read`); the SDK only checks them.
    .onNotification(acp.methods.client.session.update, () => undefined)
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => ask(state, params, channel, options));
  const { readTextFile, writeTextFile } = options.handlers ?? {};
  if (readTextFile !== undefined) app.onRequest(acp.methods.client.fs.readTextFile, ({ params }) => readTextFile(params));
  if (writeTextFile !== undefined) app.onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => writeTextFile(params));
  const connection = app.connect({ readable, writable });
  state.connection = connection;
  const agent = connection.agent;
  agent
    .request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: readTextFile !== undefined, writeTextFile: writeTextFile !== undefined }, terminal: false },
      clientInfo: { name: 'agent-rx', version: VERSION },
    })
    .then(async (initialized) => {
      state.promptCapabilities = initialized.agentCapabilities?.promptCapabilities;
      state.agentVersion = initialized.agentInfo?.version;
      const mcpServers = [...(options.mcpServers ?? [])];
      const resume = options.resume;
      if (resume === undefined) return (await agent.request(acp.methods.agent.session.new, { cwd: options.cwd, mcpServers })).sessionId;
      if (initialized.agentCapabilities?.loadSession !== true) throw new Error('its initialize answer does not say loadSession');
      // The agent replays the session's history before it answers: no turn runs, so none of it is said.
      await agent.request(acp.methods.agent.session.load, { sessionId: resume, cwd: options.cwd, mcpServers });
      return resume;
    })
    .then(
      (sessionId) => {
        state.sessionId = sessionId;
        const asks = state.pending.splice(0).map((ask) => perform(state, ask));
        channel.react({
          facts: [{ type: 'content', message: sessionHeader(options.resume !== undefined, sessionId, { agentVersion: state.agentVersion }) }, { type: 'opened' }, ...asks.flatMap((reaction) => reaction.facts ?? [])],
          outputs: asks.flatMap((reaction) => reaction.outputs ?? []),
        });
      },
      (error: unknown) => {
        state.fatal = options.resume === undefined ? `the ${options.name} could not open a session: ${messageOf(error)}` : `the ${options.name} could not load the session ${options.resume}: ${messageOf(error)}`;
        // The session will not open: its first prompt's turn fails with this.
        const fatal = endFatal(state);
        channel.react({ ...fatal, facts: [...(fatal.facts ?? []), { type: 'opened' }] });
      },
    );
}

/** A permission request of the agent, asked of the session: answered when the session decides. */
function ask(state: AcpClientState, request: acp.RequestPermissionRequest, channel: ProtocolChannel, options: AcpProtocolOptions): Promise<acp.RequestPermissionResponse> {
  return new Promise((resolve) => {
    const answer = (decision: PermissionDecision): ProtocolReaction => {
      // Once the prompt is cancelled, every request it left is answered `cancelled`, as ACP asks.
      const cancelled = state.turn === null || state.turn.aborted || state.turn.steers.length > 0;
      resolve(cancelled ? { outcome: { outcome: 'cancelled' } } : acpAnswer(request, decision));
      return NO_REACTION;
    };
    channel.react({ facts: [{ type: 'permission', request: permissionAsk(request, state.calls, options), answer }] });
  });
}

const OPTION_KINDS: Readonly<Record<PermissionDecision, acp.PermissionOptionKind>> = { allow: 'allow_once', 'allow-always': 'allow_always', deny: 'reject_once', 'deny-always': 'reject_always' };

/** The request as the session says it, with what the agent said of the call before (its name, its input). */
function permissionAsk(request: acp.RequestPermissionRequest, calls: ReadonlyMap<string, Readonly<Record<string, unknown>>>, options: AcpProtocolOptions): PermissionAsk {
  const update = request.toolCall as unknown as Readonly<Record<string, unknown>>;
  const known = calls.get(request.toolCall.toolCallId) ?? {};
  const merged: Readonly<Record<string, unknown>> = { ...known, ...Object.fromEntries(Object.entries(update).filter(([, value]) => value !== undefined && value !== null)) };
  const tool = acpToolName(merged, options.toolName);
  const input = merged['rawInput'] ?? null;
  const offered = (Object.keys(OPTION_KINDS) as PermissionDecision[]).filter((decision) => request.options.some((option) => option.kind === OPTION_KINDS[decision]));
  return {
    toolCallId: request.toolCall.toolCallId,
    tool,
    kind: toolKind(merged) ?? options.tools?.kind(tool) ?? 'other',
    title: stringOf(merged['title']) ?? options.tools?.summary(tool, input) ?? tool,
    input,
    // A deny is always possible: without a reject option the answer is `cancelled`.
    options: offered.includes('deny') ? offered : [...offered, 'deny'],
  };
}

/** The option the agent offered for a decision (a deny it offered none for: `cancelled`). */
function acpAnswer(request: acp.RequestPermissionRequest, decision: PermissionDecision): acp.RequestPermissionResponse {
  const option = request.options.find((candidate) => candidate.kind === OPTION_KINDS[decision]);
  return { outcome: option === undefined ? { outcome: 'cancelled' } : { outcome: 'selected', optionId: option.optionId } };
}

/** Remembers what the agent says of a tool call (a permission request may carry only its id). */
function remember(state: AcpClientState, event: AgentEvent): void {
  if (event['method'] !== acp.methods.client.session.update) return;
  const update = field(event['params'], 'update');
  if (typeof update !== 'object' || update === null) return;
  const record = update as Readonly<Record<string, unknown>>;
  const kind = record['sessionUpdate'];
  const id = stringOf(record['toolCallId']);
  if ((kind !== 'tool_call' && kind !== 'tool_call_update') || id === undefined) return;
  const known = state.calls.get(id) ?? {};
  const fresh = Object.fromEntries(Object.entries(record).filter(([key, value]) => value !== undefined && value !== null && key !== 'content'));
  state.calls.set(id, { ...known, ...fresh });
}

function act(state: AcpClientState, ask: SessionAsk): ProtocolReaction {
  if (ask.type === 'end') return { outputs: [{ type: 'endInput' }] };
  if (ask.type === 'start') {
    state.turn = { promptId: undefined, prompting: false, steers: [], aborted: false, killing: null, trace: ask.trace };
    if (state.fatal !== undefined) return endFatal(state);
  }
  if (state.sessionId === null) {
    if (ask.type === 'abort' && state.turn !== null) {
      // Nothing was sent yet: the turn ends here.
      state.pending.length = 0;
      return end(state, { kind: 'failed', reason: 'aborted', message: 'the turn was aborted before the agent began it' });
    }
    state.pending.push(ask);
    return NO_REACTION;
  }
  return perform(state, ask);
}

function perform(state: AcpClientState, ask: SessionAsk): ProtocolReaction {
  const turn = state.turn;
  if (turn === null) return NO_REACTION;
  switch (ask.type) {
    case 'start': {
      const refused = refusal(state, ask.input);
      if (refused !== undefined) return end(state, { kind: 'failed', reason: 'agent-error', message: refused });
      prompt(state, turn, [ask.input]);
      return NO_REACTION;
    }
    case 'steer': {
      const refused = refusal(state, ask.input);
      if (refused !== undefined) return { facts: [{ type: 'inputRejected', input: ask.input, reason: 'unsupported', message: refused }] };
      turn.steers.push(ask.input);
      if (turn.steers.length > 1) return NO_REACTION;
      cancel(state);
      // The cancelled prompt's permission requests are settled (denied) before it ends.
      return { facts: [{ type: 'settlePermissions' }] };
    }
    case 'abort':
      turn.aborted = true;
      turn.steers.length = 0;
      cancel(state);
      return NO_REACTION;
    case 'end':
      return NO_REACTION;
  }
}

/** Why the agent cannot be given this input (it said at `initialize` that its prompts take no image), or `undefined`. */
function refusal(state: AcpClientState, input: SessionInput): string | undefined {
  if (state.promptCapabilities?.image === true || !(input.content ?? []).some((part) => part.type === 'image')) return undefined;
  return `the agent takes no image in its prompts (its initialize answer says promptCapabilities.image is not true)`;
}

function prompt(state: AcpClientState, turn: AcpTurn, inputs: readonly SessionInput[]): void {
  const { connection, sessionId } = state;
  if (connection === null || sessionId === null) return;
  turn.prompting = true;
  turn.promptId = undefined;
  const blocks = acpPromptBlocks(inputs, { embeddedContext: state.promptCapabilities?.embeddedContext === true });
  const meta = traceMeta(turn.trace, state.traceMeta);
  // The answer is read from the lines (see `read`); a failure to send shows there or as the exit.
  connection.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: blocks, ...(meta === undefined ? {} : { _meta: meta }) }).catch(() => undefined);
}

/**
 * A prompt's `_meta` for the turn's trace context: W3C's `traceparent` and `tracestate`, the keys
 * ACP reserves for them, and the agent's own where it reads others.
 */
function traceMeta(trace: TurnTrace | undefined, own: AcpProtocolOptions['traceMeta']): Record<string, string> | undefined {
  if (trace === undefined) return undefined;
  return { traceparent: trace.traceparent, ...(trace.tracestate === undefined ? {} : { tracestate: trace.tracestate }), ...own?.(trace) };
}

/**
 * The content blocks of a `session/prompt` for one or more inputs (a turn's prompt, or the steers
 * that cut it), in order: each input's `content` when it has one, else its `text`. Text goes as
 * `text` blocks (adjacent ones joined by a blank line, as the steers' texts are), an image as an
 * `image` block (base64 and its type), a file as an embedded `resource` (`file://` and its absolute
 * path, not percent-encoded: Gemini CLI and Qwen Code read the URI as it is; its text,
 * `text/plain`), which the agent puts before the model as referenced context, under a header that
 * names the file. A file goes as text instead (`<file path="…">…</file>`) to an agent without
 * `embeddedContext`, and in a prompt that holds an image: Gemini CLI (0.61) leaves a prompt's
 * images out once it has embedded context. Both agents write a resource into the prompt's text as
 * `@<uri>`, glued to the text around it: a line break keeps them apart.
 *
 * @example
 * acpPromptBlocks([{ kind: 'prompt', text: 'Look', content: [{ type: 'text', text: 'Look' }, { type: 'file', path: '/w/a.txt', text: 'A' }] }], { embeddedContext: true });
 * // [{ type: 'text', text: 'Look\n' }, { type: 'resource', resource: { uri: 'file:///w/a.txt', text: 'A', mimeType: 'text/plain' } }]
 */
export function acpPromptBlocks(inputs: readonly SessionInput[], abilities: { readonly embeddedContext: boolean }): acp.ContentBlock[] {
  const parts: PromptContent = inputs.flatMap((input) => input.content ?? [{ type: 'text' as const, text: input.text }]);
  const embed = abilities.embeddedContext && !parts.some((part) => part.type === 'image');
  const blocks: acp.ContentBlock[] = [];
  const text = (value: string): void => {
    const last = blocks.at(-1);
    if (last?.type === 'text') blocks[blocks.length - 1] = { type: 'text', text: `${last.text}\n\n${value}` };
    else blocks.push({ type: 'text', text: last?.type === 'resource' && !/^\s/.test(value) ? `\n${value}` : value });
  };
  for (const part of parts) {
    switch (part.type) {
      case 'text':
        if (part.text !== '') text(part.text);
        break;
      case 'image':
        blocks.push({ type: 'image', data: part.data, mimeType: part.mimeType });
        break;
      case 'file': {
        if (!embed) {
          text(fileBlock(part.path, part.text));
          break;
        }
        const last = blocks.at(-1);
        if (last?.type === 'text' && !/\s$/.test(last.text)) blocks[blocks.length - 1] = { type: 'text', text: `${last.text}\n` };
        blocks.push({ type: 'resource', resource: { uri: `file://${part.path}`, text: part.text, mimeType: 'text/plain' } });
        break;
      }
    }
  }
  return blocks.length === 0 ? [{ type: 'text', text: '' }] : blocks;
}

function cancel(state: AcpClientState): void {
  const { connection, sessionId } = state;
  if (connection === null || sessionId === null) return;
  connection.agent.notify(acp.methods.agent.session.cancel, { sessionId }).catch(() => undefined);
}

function read(state: AcpClientState, event: AgentEvent, usageOf: AcpProtocolOptions['usageOf']): ProtocolReaction {
  if (event.type === 'agent-rx.tools-killed') {
    const outcome = state.turn?.killing;
    return outcome === undefined || outcome === null ? NO_REACTION : end(state, outcome);
  }
  remember(state, event);
  try {
    state.controller?.enqueue(withoutType(event) as acp.AnyMessage);
  } catch {
    // The SDK closed its side (the connection ended): the lines are still read here.
  }
  const turn = state.turn;
  if (event.type !== 'response' || turn === null || !turn.prompting || event['id'] !== turn.promptId) return NO_REACTION;
  turn.prompting = false;
  const error = rpcErrorText(event['error']);
  const stopReason = stringOf(field(event['result'], 'stopReason'));
  const steers = turn.steers.splice(0);
  if (steers.length > 0 && !turn.aborted) {
    // The cut prompt answered: the steers are the next prompt of the same turn.
    prompt(state, turn, steers);
    return NO_REACTION;
  }
  const result = event['result'];
  const usage = usageOf === undefined || typeof result !== 'object' || result === null ? undefined : usageOf(result as acp.PromptResponse);
  const outcome = withUsage(outcomeOf(error, stopReason, turn.aborted), usage);
  if (stopReason === 'cancelled' || turn.aborted) {
    // Whatever the agent did with its tool on cancel, the turn's processes end with it.
    turn.killing = outcome;
    return { outputs: [{ type: 'killTools' }] };
  }
  return end(state, outcome);
}

function outcomeOf(error: string | undefined, stopReason: string | undefined, aborted: boolean): TurnOutcome {
  if (error !== undefined) return { kind: 'failed', reason: 'agent-error', message: `the agent answered the prompt with an error: ${error}`, agentError: error };
  switch (stopReason) {
    case 'end_turn':
      return { kind: 'completed', stopReason: 'end_turn', agentStopReason: stopReason };
    case 'max_tokens':
    case 'refusal':
      return { kind: 'completed', stopReason, agentStopReason: stopReason };
    case 'cancelled':
      return { kind: 'failed', reason: 'aborted', message: aborted ? 'the agent cancelled the turn' : 'the agent cancelled the turn by itself' };
    default:
      return { kind: 'completed', stopReason: 'other', ...(stopReason === undefined ? {} : { agentStopReason: stopReason }) };
  }
}

function withUsage(outcome: TurnOutcome, usage: Usage | undefined): TurnOutcome {
  return outcome.kind === 'completed' && usage !== undefined ? { ...outcome, usage } : outcome;
}

function end(state: AcpClientState, outcome: TurnOutcome): ProtocolReaction {
  if (state.turn === null) return NO_REACTION;
  state.turn = null;
  return { facts: [{ type: 'turnEnded', outcome }] };
}

function endFatal(state: AcpClientState): ProtocolReaction {
  const message = state.fatal ?? 'the agent cannot go on';
  const facts: ProtocolFact[] = state.turn === null ? [] : [{ type: 'turnEnded', outcome: { kind: 'failed', reason: 'agent-error', message } }];
  state.turn = null;
  state.pending.length = 0;
  return { facts, outputs: [{ type: 'endInput' }] };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
