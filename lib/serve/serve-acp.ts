import * as acp from '@agentclientprotocol/sdk';
import { createRequire } from 'node:module';
import { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import * as z from 'zod';
import { Subject, type OperatorFunction, type Subscription } from 'rxjs';
import { IMAGE_MIME_TYPES, type ImageMimeType, type PermissionDecision, type PermissionRequested, type PromptFields, type PromptPart, type SessionCommand, type SessionMessage, type StopReason, type TurnFailed, type Usage } from '../messages.js';
import { fileBlock } from '../operators/prompt-parts.js';
import { currentRunScope, RunScope } from '../process/run-scope.js';
import { traceContextOf, traceEnv, type TraceContext } from '../process/trace-context.js';
import { fromAcpMcpServers, type McpServers } from '../tools/mcp-servers.js';

/** What a new ACP session asks for: its working directory and MCP servers, and how its permission requests reach the editor. */
export interface AcpSessionRequest {
  /** The session's working directory (absolute), as the client sent it. */
  readonly cwd: string;
  /**
   * The MCP servers the client asks the session to use, by name, as agent-rx sessions take them
   * (`piSession({ cwd, permission, mcpServers })`): the client's `session/new` servers made into
   * {@link McpServers} (`fromAcpMcpServers`). SSE servers are left out (no agent here takes
   * them): named in `skippedMcpServers`, and the editor is told with a notice.
   */
  readonly mcpServers: McpServers;
  /** The client's servers as it sent them (ACP's form). */
  readonly acpMcpServers: readonly acp.McpServer[];
  /** The names of the client's SSE servers, left out of `mcpServers`. */
  readonly skippedMcpServers: readonly string[];
  /**
   * The permission policy that lets the editor decide: `'ask'`. Given to the session
   * (`piSession({ cwd, permission })`), each of its `permission.requested` is asked of the editor
   * (`session/request_permission`) and the editor's choice is the session's `permission` command.
   * A session made without it keeps the agent's own rules (or the policy the factory gives).
   */
  readonly permission: 'ask';
  /**
   * The editor's trace context, where its `session/new` carried one in `_meta` (`traceparent`,
   * `tracestate`): the session's agent process gets it as `TRACEPARENT` already; a traced session
   * continues it with `traceSession({ context: traceContext })` (`agent-rx/otel`).
   */
  readonly traceContext?: TraceContext | undefined;
}

/** Makes the agent-rx session behind one ACP session (one agent process per subscription). */
export type AcpSessionFactory = (request: AcpSessionRequest) => OperatorFunction<SessionCommand, SessionMessage>;

/** Options of {@link serveAcp}: the streams to talk ACP on, and the name the agent gives itself. */
export interface ServeAcpOptions {
  /** Where the client's messages come from. Default `process.stdin`. */
  readonly input?: Readable;
  /** Where the messages to the client go. Default `process.stdout`. */
  readonly output?: Writable;
  /** The agent's name and title in `initialize`. Default `agent-rx`. */
  readonly name?: string;
  /** The agent's human-readable title in `initialize`. Default: none. */
  readonly title?: string;
  /**
   * Whether the sessions take images: `promptCapabilities.image` in `initialize` (an editor sends
   * image blocks only when it is true). Give what the session's protocol says
   * (`sessionInvocation(definition, options).protocol.prompts?.image`). Default false; an image an
   * editor sends anyway reaches the session, which drops it (`unsupported`) when its agent takes
   * none, and the prompt is answered with that error.
   */
  readonly images?: boolean;
  /**
   * Whether the sessions take MCP servers over HTTP: `mcpCapabilities.http` in `initialize` (an
   * editor sends http servers only when it is true; stdio servers always). Default false.
   */
  readonly mcpHttp?: boolean;
}

/** A running ACP server (from {@link serveAcp}). */
export interface AcpServer {
  /** Settles when the client's connection has closed and every session was let go (their stop sequences run). */
  readonly closed: Promise<void>;
  /** Closes the connection: every session is stopped. */
  close(): void;
}

const VERSION = (createRequire(import.meta.url)('../../package.json') as { version: string }).version;

/**
 * The extension method for a `steer` command (`{ sessionId, text }`): into the running turn, as the
 * agent allows (idle: starts a turn). ACP has no method of its own for it, nor for a follow-up.
 */
export const ACP_STEER_METHOD = '_agent-rx/steer';
/**
 * The extension method for a `follow-up` command (`{ sessionId, text }`): kept and sent as the next
 * turn's prompt.
 */
export const ACP_FOLLOW_UP_METHOD = '_agent-rx/follow-up';

const InputParams = z.object({ sessionId: z.string(), text: z.string().min(1) });

/**
 * Serves agent-rx sessions as an Agent Client Protocol agent on stdio (or the given streams),
 * through the ACP SDK: an editor talks ACP, each of its sessions is an agent-rx session.
 * - `session/new` subscribes a session (`createSession`, given the client's MCP servers by name:
 *   stdio, and http when `mcpHttp` says the sessions take it; an SSE server is left out and the
 *   editor told with a notice), and answers once the agent announced its session (an agent that
 *   could not start answers with an error);
 * - `session/prompt` is a `prompt` command, its blocks made into the command's text and parts
 *   (`acpPromptFields`: text, images, embedded resources as `<file>` text, `file://` links as
 *   files; a block of any other kind refuses the prompt); it answers when that prompt's turn ends: `end_turn`,
 *   `max_tokens` or `refusal`, `cancelled` for an aborted turn (or a prompt queued behind one), a
 *   JSON-RPC error with the failure's message otherwise; the turn's usage is in `_meta["agent-rx"]`;
 * - `session/cancel` is an `abort`;
 * - the session's messages are `session/update`s: text and thought chunks, `tool_call` (with the
 *   raw input) and `tool_call_update` (content replaced, then `completed` or `failed`), warnings and
 *   retries as notices;
 * - a `permission.requested` of the session is a `session/request_permission` to the editor: the
 *   tool call (`toolCallId`: the call's, or the request's id when the agent names none; its title,
 *   kind and raw input) and the options the agent accepts (`allow_once`, `allow_always`,
 *   `reject_once`, `reject_always`). The editor's choice is the session's `permission` command;
 *   `cancelled` or an error is a deny. A request the session settles first (its deadline
 *   `permissionTimeoutMs`, an abort, the turn's end) is withdrawn (`$/cancel_request`), and a late
 *   answer is dropped. The factory's request carries `permission: 'ask'` for the session's options:
 *   a session made without it (or with a preset) never asks the editor;
 * - `_agent-rx/steer` and `_agent-rx/follow-up` (`{ sessionId, text }`) steer or queue;
 * - the editor's trace context (W3C `traceparent` and `tracestate` in `_meta`) goes on: that of
 *   `session/new` to the factory (`traceContext`) and to the agent process (`TRACEPARENT`), that of
 *   each `session/prompt` to its turn (an ACP agent under the session gets it in its prompt's
 *   `_meta`, unless a `traceSession` in the factory gives the turn a span of its own);
 * - when the connection closes (the editor quit), every session is unsubscribed: the stop sequence
 *   leaves no agent process behind.
 *
 * @example
 * // A script an editor starts: it talks ACP on stdin and stdout, and each of the editor's sessions
 * // is a Claude Code session in the folder the editor asked for, with the editor's MCP servers,
 * // whose tool calls the editor approves.
 * const server = serveAcp(({ cwd, permission, mcpServers }) => claudeCodeSession({ cwd, permission, mcpServers }), { mcpHttp: true });
 * await server.closed; // the editor closed the connection: every session was stopped
 */
export function serveAcp(createSession: AcpSessionFactory, options: ServeAcpOptions = {}): AcpServer {
  const sessions = new Map<string, BridgedSession>();
  const input = options.input ?? process.stdin;
  const output = options.output ?? process.stdout;
  const app = acp
    .agent({ name: options.name ?? 'agent-rx' })
    .onRequest(acp.methods.agent.initialize, () => ({
      protocolVersion: acp.PROTOCOL_VERSION,
      agentCapabilities: {
        loadSession: false,
        // Embedded resources are given to the agent as text (`<file>` blocks): every agent takes them.
        promptCapabilities: { image: options.images === true, audio: false, embeddedContext: true },
        mcpCapabilities: { http: options.mcpHttp === true, sse: false },
        _meta: { 'agent-rx': { steer: ACP_STEER_METHOD, followUp: ACP_FOLLOW_UP_METHOD } },
      },
      agentInfo: { name: options.name ?? 'agent-rx', title: options.title ?? 'agent-rx', version: VERSION },
      authMethods: [],
    }))
    .onRequest(acp.methods.agent.session.new, async ({ params, client }) => {
      const { servers, skipped } = fromAcpMcpServers(params.mcpServers);
      const traceContext = traceContextOf(params._meta);
      const request: AcpSessionRequest = {
        cwd: params.cwd,
        mcpServers: servers,
        acpMcpServers: params.mcpServers,
        skippedMcpServers: skipped,
        permission: 'ask',
        ...(traceContext === undefined ? {} : { traceContext }),
      };
      const session = new BridgedSession(createSession(request), client, traceContext);
      const sessionId = await session.started;
      sessions.set(sessionId, session);
      void session.ended.then(() => sessions.delete(sessionId));
      // After the answer: the editor knows the session by then.
      if (skipped.length > 0) {
        setImmediate(() => {
          session.notice(`MCP servers over SSE are not supported: left out: ${skipped.join(', ')}`, 'Give them as stdio or http (streamable HTTP) servers.');
        });
      }
      return { sessionId, ...(skipped.length > 0 ? { _meta: { 'agent-rx': { skippedMcpServers: skipped } } } : {}) };
    })
    .onRequest(acp.methods.agent.session.prompt, ({ params, signal }) => sessionOf(sessions, params.sessionId).prompt(params.prompt, signal, traceContextOf(params._meta)))
    .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
      sessions.get(params.sessionId)?.abort();
    })
    .onRequest(ACP_STEER_METHOD, InputParams, ({ params }) => sessionOf(sessions, params.sessionId).send('steer', params.text))
    .onRequest(ACP_FOLLOW_UP_METHOD, InputParams, ({ params }) => sessionOf(sessions, params.sessionId).send('follow-up', params.text));
  const connection = app.connect(acp.ndJsonStream(Writable.toWeb(output) as WritableStream<Uint8Array>, Readable.toWeb(input) as ReadableStream<Uint8Array>));
  const closed = connection.closed.then(
    () => undefined,
    () => undefined,
  );
  return {
    closed: closed.then(() => {
      // The editor is gone: every session's stop sequence runs (unsubscribing starts it).
      for (const session of sessions.values()) session.stop();
      sessions.clear();
    }),
    close: () => {
      connection.close();
    },
  };
}

function sessionOf(sessions: ReadonlyMap<string, BridgedSession>, sessionId: string): BridgedSession {
  const session = sessions.get(sessionId);
  if (session === undefined) throw acp.RequestError.sessionNotFound(sessionId);
  return session;
}

interface PendingPrompt {
  resolve(response: acp.PromptResponse): void;
  reject(error: unknown): void;
}

/** One ACP session: an agent-rx session, its prompts waiting for their turns, and its updates in order. */
class BridgedSession {
  readonly started: Promise<string>;
  readonly ended: Promise<void>;
  readonly #commands = new Subject<SessionCommand>();
  readonly #subscription: Subscription;
  readonly #client: acp.AgentContext;
  /** Prompts waiting for their turn's end, by command id. */
  readonly #prompts = new Map<string, PendingPrompt>();
  /** The command whose turn runs. */
  #running: string | undefined;
  /** Notifications are sent one after the other, and a prompt is answered after its turn's. */
  #sends: Promise<void> = Promise.resolve();
  #sessionId: string | undefined;
  #nextId = 0;
  /** Answers to `send`, by command id, while the command is being handled. */
  readonly #answers = new Map<string, unknown>();
  /** The permission requests asked of the editor and not settled, by request id: aborting one withdraws it. */
  readonly #permissions = new Map<string, AbortController>();
  /** The session's subscription's scope: the editor's trace context for the agent process, and each turn's. */
  readonly #scope: RunScope;
  /** The editor's trace context of each prompt that carried one, by command id, until its turn starts. */
  readonly #traces = new Map<string, TraceContext>();
  #resolveStarted!: (sessionId: string) => void;
  #rejectStarted!: (error: unknown) => void;
  #resolveEnded!: () => void;

  constructor(session: OperatorFunction<SessionCommand, SessionMessage>, client: acp.AgentContext, trace: TraceContext | undefined) {
    this.#client = client;
    this.#scope = new RunScope(currentRunScope(), traceEnv(trace));
    this.started = new Promise((resolve, reject) => {
      this.#resolveStarted = resolve;
      this.#rejectStarted = reject;
    });
    this.ended = new Promise((resolve) => {
      this.#resolveEnded = resolve;
    });
    this.#subscription = this.#scope.run(() =>
      this.#commands.pipe(session).subscribe({
        next: (message) => {
          this.#onMessage(message);
        },
        error: (error: unknown) => {
          this.#end(error);
        },
        complete: () => {
          this.#end(new acp.RequestError(-32603, 'the session ended'));
        },
      }),
    );
  }

  prompt(blocks: readonly acp.ContentBlock[], signal: AbortSignal, trace: TraceContext | undefined): Promise<acp.PromptResponse> {
    const fields = acpPromptFields(blocks);
    const id = this.#id();
    if (trace !== undefined) this.#traces.set(id, trace);
    const answer = new Promise<acp.PromptResponse>((resolve, reject) => {
      this.#prompts.set(id, { resolve, reject });
    });
    signal.addEventListener('abort', () => {
      if (this.#running === id) this.abort();
    });
    this.#commands.next({ type: 'prompt', ...fields, id });
    return answer;
  }

  abort(): void {
    this.#commands.next({ type: 'abort' });
  }

  /** A steer or a follow-up: what agent-rx did with it (`accepted` with `as` and `turn`, or `dropped` and why). */
  send(kind: 'steer' | 'follow-up', text: string): unknown {
    const id = this.#id();
    this.#answers.set(id, undefined);
    this.#commands.next({ type: kind, text, id });
    const answer = this.#answers.get(id);
    this.#answers.delete(id);
    return answer ?? { dropped: { reason: 'session-ended', message: 'the session has ended' } };
  }

  stop(): void {
    this.#subscription.unsubscribe();
    this.#end(new acp.RequestError(-32603, 'the connection closed'));
  }

  /**
   * Asks the editor, once every update before the request is out (the tool call first); its choice
   * becomes the session's `permission` command, unless the session settled the request meanwhile.
   * The command carries no id: a late one the session drops (`no-request`) answers nothing here.
   */
  #askEditor(request: PermissionRequested): void {
    const sessionId = this.#sessionId;
    const controller = new AbortController();
    this.#permissions.set(request.requestId, controller);
    const decide = (decision: PermissionDecision): void => {
      if (this.#permissions.get(request.requestId) !== controller) return;
      this.#permissions.delete(request.requestId);
      this.#commands.next({ type: 'permission', requestId: request.requestId, decision });
    };
    if (sessionId === undefined) {
      // Not in the middle of the session's own message: the command goes in after it.
      void Promise.resolve().then(() => {
        decide('deny');
      });
      return;
    }
    this.#sends = this.#sends.then(() => {
      if (controller.signal.aborted) return;
      void this.#client
        .request(acp.methods.client.session.requestPermission, acpPermissionRequest(sessionId, request), { cancellationSignal: controller.signal, stopWaitingOnCancel: true })
        .then(
          (response) => {
            decide(permissionDecision(request, response));
          },
          () => {
            decide('deny');
          },
        );
    });
  }

  /** The session settled a request (its deadline, an abort, the turn's end, the editor's answer): the editor's question is withdrawn. */
  #settled(requestId: string): void {
    const controller = this.#permissions.get(requestId);
    if (controller === undefined) return;
    this.#permissions.delete(requestId);
    controller.abort();
  }

  #id(): string {
    this.#nextId += 1;
    return `acp-${String(this.#nextId)}`;
  }

  #onMessage(message: SessionMessage): void {
    switch (message.type) {
      case 'session.started':
      case 'session.resumed':
        this.#sessionId = message.sessionId;
        this.#resolveStarted(message.sessionId);
        return;
      case 'input.accepted':
        if (message.commandId !== undefined && this.#answers.has(message.commandId)) this.#answers.set(message.commandId, { accepted: { as: message.as, turn: message.turn } });
        return;
      case 'input.dropped': {
        const id = message.commandId;
        if (id === undefined) return;
        this.#traces.delete(id);
        if (this.#answers.has(id)) this.#answers.set(id, { dropped: { reason: message.reason, message: message.message } });
        // A queued prompt that will not run answers as cancelled (after an abort) or as an error.
        if (message.reason === 'aborted') this.#answer(id, { stopReason: 'cancelled' });
        else this.#fail(id, new acp.RequestError(-32603, message.message, { reason: message.reason }));
        return;
      }
      case 'turn.started': {
        this.#running = message.commandId;
        // Seen before the prompt goes to the agent: the turn runs in the editor's trace of that prompt.
        const trace = message.commandId === undefined ? undefined : this.#traces.get(message.commandId);
        if (message.commandId !== undefined) this.#traces.delete(message.commandId);
        this.#scope.setTurnEnv(trace === undefined ? undefined : traceEnv(trace));
        return;
      }
      case 'permission.requested':
        this.#askEditor(message);
        return;
      case 'permission.resolved':
        this.#settled(message.requestId);
        return;
      case 'turn.completed': {
        const id = this.#running;
        this.#running = undefined;
        this.#scope.setTurnEnv(undefined);
        if (id !== undefined) this.#answer(id, { stopReason: acpStopReason(message.stopReason), ...usageMeta(message.usage) });
        return;
      }
      case 'turn.failed': {
        const id = this.#running;
        this.#running = undefined;
        this.#scope.setTurnEnv(undefined);
        if (id === undefined) return;
        if (message.reason === 'aborted') this.#answer(id, { stopReason: 'cancelled' });
        else this.#fail(id, turnError(message));
        return;
      }
      case 'terminal.completed':
      case 'terminal.failed':
        if (this.#sessionId === undefined) {
          this.#rejectStarted(new acp.RequestError(-32603, message.type === 'terminal.failed' ? message.message : 'the agent ended before its session began'));
        }
        return;
      default: {
        const update = sessionUpdate(message);
        if (update !== null) this.#notify(update);
      }
    }
  }

  /** A warning for the editor (a `notice` update). */
  notice(title: string, description: string): void {
    this.#notify({ sessionUpdate: 'notice', severity: 'warning', title, description });
  }

  #notify(update: acp.SessionUpdate): void {
    const sessionId = this.#sessionId;
    if (sessionId === undefined) return;
    this.#sends = this.#sends.then(() => this.#client.notify(acp.methods.client.session.update, { sessionId, update })).catch(() => undefined);
  }

  /** Answers a prompt once every update sent before its end is out. */
  #answer(id: string, response: acp.PromptResponse): void {
    const pending = this.#prompts.get(id);
    if (pending === undefined) return;
    this.#prompts.delete(id);
    void this.#sends.then(() => {
      pending.resolve(response);
    });
  }

  #fail(id: string, error: unknown): void {
    const pending = this.#prompts.get(id);
    if (pending === undefined) return;
    this.#prompts.delete(id);
    void this.#sends.then(() => {
      pending.reject(error);
    });
  }

  #end(error: unknown): void {
    this.#traces.clear();
    for (const id of [...this.#permissions.keys()]) this.#settled(id);
    this.#rejectStarted(error);
    for (const id of [...this.#prompts.keys()]) this.#fail(id, error);
    this.#resolveEnded();
  }
}

/** The ACP option kind of each decision, the option's id (the decision) and its name for people. */
const PERMISSION_OPTIONS: Readonly<Record<PermissionDecision, { readonly kind: acp.PermissionOptionKind; readonly name: string }>> = {
  allow: { kind: 'allow_once', name: 'Allow' },
  'allow-always': { kind: 'allow_always', name: 'Always allow' },
  deny: { kind: 'reject_once', name: 'Deny' },
  'deny-always': { kind: 'reject_always', name: 'Always deny' },
};

/**
 * A session's permission request as ACP's `session/request_permission`: the tool call (the call's
 * id, or the request's where the agent names no call; its title as in its `tool_call`, its kind and
 * input) and one option per decision the agent accepts, whose id is the decision.
 */
export function acpPermissionRequest(sessionId: string, request: PermissionRequested): acp.RequestPermissionRequest {
  return {
    sessionId,
    toolCall: {
      toolCallId: request.toolCallId ?? request.requestId,
      title: toolTitle(request.tool, request.title === request.tool ? undefined : request.title),
      kind: request.kind,
      rawInput: request.input,
    },
    options: request.options.map((decision) => ({ optionId: decision, name: PERMISSION_OPTIONS[decision].name, kind: PERMISSION_OPTIONS[decision].kind })),
  };
}

/** The decision of the editor's answer: the option it selected (one of the request's), a deny otherwise (`cancelled`, an unknown option). */
export function permissionDecision(request: Pick<PermissionRequested, 'options'>, response: acp.RequestPermissionResponse): PermissionDecision {
  const { outcome } = response;
  if (outcome.outcome !== 'selected') return 'deny';
  return request.options.find((decision) => decision === outcome.optionId) ?? 'deny';
}

/**
 * An editor's `session/prompt` blocks as a prompt command's `text` and `parts`, in order:
 * - `text`: text (consecutive blocks joined by a blank line; blank ones left out);
 * - `image` (`data`, `mimeType`): an image part with that base64 data (PNG, JPEG, GIF or WebP);
 * - `resource` holding `text` (an editor's embedded file): a text part with a `<file path="…">`
 *   block of it (the path from a `file://` URI, else the URI); holding a `blob` of an image type:
 *   an image part;
 * - `resource_link` to a `file://` URI: a file part with its path (an image part where the link's
 *   type or the file's extension says image), read by the session when the command is.
 * The command's `text` is the first text (a text block, or an embedded file); whatever came before
 * it follows it. A block of another kind (`audio`, a link that is not a file, a blob that is not an
 * image) refuses the prompt with an `invalid params` error naming the block; so does a prompt
 * without text. Whether the agent takes an image is the session's to say (`input.dropped`
 * `unsupported`, the prompt's error).
 */
export function acpPromptFields(blocks: readonly acp.ContentBlock[]): Pick<PromptFields, 'text' | 'parts'> {
  const parts: PromptPart[] = [];
  /** The last part is a text block's (the next text block joins it). */
  let joinable = false;
  blocks.forEach((block, index) => {
    const part = promptPart(block, `prompt[${String(index)}]`);
    if (part === null) return;
    const last = parts.at(-1);
    if (joinable && block.type === 'text' && part.type === 'text' && last?.type === 'text') parts[parts.length - 1] = { type: 'text', text: `${last.text}\n\n${part.text}` };
    else parts.push(part);
    joinable = block.type === 'text';
  });
  const first = parts.findIndex((part) => part.type === 'text');
  const head = parts[first];
  if (head?.type !== 'text') throw acp.RequestError.invalidParams(undefined, 'the prompt has no text');
  const rest = [...parts.slice(0, first), ...parts.slice(first + 1)];
  return rest.length === 0 ? { text: head.text } : { text: head.text, parts: rest };
}

/** One block as a prompt part (`null` for blank text), or the error that refuses the prompt. */
function promptPart(block: acp.ContentBlock, where: string): PromptPart | null {
  switch (block.type) {
    case 'text':
      return block.text.trim() === '' ? null : { type: 'text', text: block.text };
    case 'image':
      return { type: 'image', data: block.data, mimeType: imageType(block.mimeType, where) };
    case 'resource': {
      const { resource } = block;
      if ('text' in resource) return { type: 'text', text: fileBlock(fileUriPath(resource.uri) ?? resource.uri, resource.text) };
      if (isImageType(resource.mimeType)) return { type: 'image', data: resource.blob, mimeType: resource.mimeType };
      throw refused(where, `a resource of binary data${resource.mimeType == null ? '' : ` (${resource.mimeType})`} that is not an image (${resource.uri})`);
    }
    case 'resource_link': {
      const path = fileUriPath(block.uri);
      if (path === undefined) throw refused(where, `a resource_link that is not a file:// URI (${block.uri})`);
      return isImageType(block.mimeType) || IMAGE_EXTENSION.test(path) ? { type: 'image', path } : { type: 'file', path };
    }
    default:
      throw refused(where, `an ${block.type} block`);
  }
}

const IMAGE_EXTENSION = /\.(png|jpe?g|gif|webp)$/i;

function refused(where: string, what: string): acp.RequestError {
  return acp.RequestError.invalidParams({ block: where }, `${where} is ${what}: agent-rx gives agents text, images (${IMAGE_MIME_TYPES.join(', ')}), embedded resources and file:// links`);
}

function isImageType(mimeType: string | null | undefined): mimeType is ImageMimeType {
  return (IMAGE_MIME_TYPES as readonly unknown[]).includes(mimeType);
}

function imageType(mimeType: string, where: string): ImageMimeType {
  if (isImageType(mimeType)) return mimeType;
  throw refused(where, `an image of type ${mimeType}`);
}

/** The path of a `file://` URI, or `undefined` for another URI. */
function fileUriPath(uri: string): string | undefined {
  if (!uri.startsWith('file:')) return undefined;
  try {
    return fileURLToPath(uri);
  } catch {
    return undefined;
  }
}

function acpStopReason(stopReason: StopReason): acp.StopReason {
  switch (stopReason) {
    case 'max_tokens':
      return 'max_tokens';
    case 'refusal':
      return 'refusal';
    case 'aborted':
      return 'cancelled';
    default:
      return 'end_turn';
  }
}

function usageMeta(usage: Usage | undefined): { _meta?: Record<string, unknown> } {
  return usage === undefined ? {} : { _meta: { 'agent-rx': { usage } } };
}

function turnError(turn: TurnFailed): acp.RequestError {
  return new acp.RequestError(-32603, turn.message, {
    reason: turn.reason,
    ...(turn.agentError === undefined ? {} : { agentError: turn.agentError }),
    ...(turn.httpStatus === undefined ? {} : { httpStatus: turn.httpStatus }),
  });
}

const text = (value: string): acp.ContentBlock => ({ type: 'text', text: value });

/** A content message of the session as an ACP update, or null for what ACP has no place for. */
function sessionUpdate(message: SessionMessage): acp.SessionUpdate | null {
  switch (message.type) {
    case 'assistant':
      return { sessionUpdate: 'agent_message_chunk', content: text(message.text) };
    case 'assistant.thought':
      return { sessionUpdate: 'agent_thought_chunk', content: text(message.text) };
    case 'assistant.withdrawn':
      // ACP cannot take text back: the client is told what was withdrawn.
      return { sessionUpdate: 'notice', severity: 'warning', title: 'The agent revised its answer', description: `withdrawn: ${message.text}` };
    case 'tool.call':
      return { sessionUpdate: 'tool_call', toolCallId: message.toolCallId, title: toolTitle(message.name, message.summary), kind: message.kind ?? 'other', status: 'in_progress', rawInput: message.input };
    case 'tool.update':
      return { sessionUpdate: 'tool_call_update', toolCallId: message.toolCallId, content: [{ type: 'content', content: text(message.output) }] };
    case 'tool.completed':
    case 'tool.failed':
      return {
        sessionUpdate: 'tool_call_update',
        toolCallId: message.toolCallId,
        status: message.type === 'tool.completed' ? 'completed' : 'failed',
        content: [{ type: 'content', content: text(message.output) }],
        rawOutput: message.output,
      };
    case 'agent.warning':
      return { sessionUpdate: 'notice', severity: 'warning', title: message.message };
    case 'agent.retry':
      return { sessionUpdate: 'notice', severity: 'info', title: `The agent is retrying: ${message.reason}` };
    default:
      return null;
  }
}

/** A tool's title: its name, with what the call does (the command, the path) when the agent's vocabulary says. */
function toolTitle(name: string, summary: string | undefined): string {
  if (summary === undefined || summary === '') return name;
  return `${name}: ${summary.length > 120 ? `${summary.slice(0, 119)}…` : summary}`;
}
