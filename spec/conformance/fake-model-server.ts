/**
 * A fake LLM server for running the real pi CLI offline, on 127.0.0.1 with a port chosen at run time.
 *
 * - `POST /v1/chat/completions`: OpenAI chat-completions SSE (pi api `openai-completions`,
 *   provider baseUrl `http://127.0.0.1:PORT/v1`).
 * - `POST /v1/messages`: Anthropic messages SSE (pi api `anthropic-messages`,
 *   provider baseUrl `http://127.0.0.1:PORT`, because pi appends `/v1/messages` itself; Claude Code
 *   with `ANTHROPIC_BASE_URL=http://127.0.0.1:PORT` POSTs to `/v1/messages?beta=true`).
 * - `HEAD <any path>`: 200 with no body (Claude Code 2.1.197 sends `HEAD /` as a preconnect).
 *
 * The request's `model` field picks the scenario (see scenarios.ts); the tools a request offers
 * tell pi (`bash`) from Claude Code (`Bash`), see `toolDialectOf`. Every request is logged in
 * `requests` (HEAD requests too); `close()` destroys every socket, including the ones a `hang`
 * reply keeps open.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { errorBody, FAKE_INPUT_TOKENS, parseModel, planReply, THINKING_SIGNATURE, toolCallId } from './scenarios.js';
import type { ConversationView, PlannedBlock, ReplyPlan, WireApi } from './scenarios.js';

export * from './scenarios.js';

export interface RequestLogEntry {
  /** 1-based arrival order on this server. */
  readonly seq: number;
  /** Date.now() when the request body had been read. */
  readonly at: number;
  readonly method: string;
  readonly url: string;
  /** Which wire format the URL selects, or null for an unknown URL. */
  readonly api: WireApi | null;
  readonly model: string | null;
  /** The scenario the model id maps to, or null for an unknown model id. */
  readonly scenario: string | null;
  readonly stream: boolean;
  /** OpenAI `stream_options.include_usage`. */
  readonly includeUsage: boolean;
  /** Messages in the request (OpenAI: including the system message; Anthropic: `system` is separate). */
  readonly messageCount: number;
  /** Any tool result anywhere in the conversation. */
  readonly hasToolResult: boolean;
  readonly lastIsToolResult: boolean;
  readonly lastToolResultText: string | null;
  readonly lastUserText: string | null;
  readonly hasSystemPrompt: boolean;
  /** Names of the tools offered to the model. */
  readonly toolNames: readonly string[];
  /** Bearer token (OpenAI) or x-api-key (Anthropic) the client sent. */
  readonly apiKey: string | null;
  /** The HTTP status answered. */
  readonly status: number;
  /** The parsed request body, for debugging. */
  readonly body: unknown;
  /** Set when the response was ended normally. */
  finished: boolean;
  /** Set when the client closed the connection before the response ended (e.g. pi was cancelled). */
  clientClosed: boolean;
  /** Time the response ended or the connection closed, Date.now(). */
  endedAt: number | null;
}

export interface FakeModelServer {
  readonly port: number;
  /** `http://127.0.0.1:PORT` (no `/v1`). */
  readonly baseUrl: string;
  /** Base URL for an `openai-completions` provider: `http://127.0.0.1:PORT/v1`. */
  readonly openaiBaseUrl: string;
  /** Base URL for an `anthropic-messages` provider: `http://127.0.0.1:PORT`. */
  readonly anthropicBaseUrl: string;
  /** Every request so far, in arrival order. Entries are updated in place when their response ends. */
  readonly requests: RequestLogEntry[];
  /** Requests for one model id. */
  requestsFor(model: string): RequestLogEntry[];
  /** Clears the log and the per-model counters (`flaky500` fails again). */
  reset(): void;
  /** Stops listening and destroys every open socket, hanging streams included. */
  close(): Promise<void>;
}

export interface FakeModelServerOptions {
  /** Overrides every scenario's pause between SSE events (ms). */
  readonly chunkDelayMs?: number;
}

const ROUTES: Readonly<Record<string, WireApi>> = {
  '/v1/chat/completions': 'openai-completions',
  '/v1/messages': 'anthropic-messages',
};

export async function startFakeModelServer(options: FakeModelServerOptions = {}): Promise<FakeModelServer> {
  const requests: RequestLogEntry[] = [];
  const perModel = new Map<string, number>();
  const sockets = new Set<Socket>();
  /** Settles when the response's 'close' event has run (its log entry is final then). */
  const responsesClosed = new Set<Promise<void>>();
  let seq = 0;
  let closing = false;

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      // Only reached for bugs in this file: answer 500 if still possible, never crash the test process.
      if (!res.headersSent) sendJson(res, 500, { error: { message: `fake server bug: ${String(error)}` } });
      else res.destroy();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const url = (req.url ?? '').split('?')[0] ?? '';
    const api = ROUTES[url] ?? null;
    let body: unknown = null;
    try {
      body = raw.length > 0 ? JSON.parse(raw) : null;
    } catch {
      // left null; answered 400 below
    }
    const request = asRecord(body);
    const model = typeof request?.['model'] === 'string' ? request['model'] : null;
    const parsed = model === null ? null : parseModel(model);
    const previous = model === null ? 0 : (perModel.get(model) ?? 0);
    if (model !== null) perModel.set(model, previous + 1);
    const conversation = api === null || request === null ? emptyConversation() : readConversation(api, request);
    const offeredTools = toolNames(request);
    const view: ConversationView = { ...conversation, previousRequestsForModel: previous, toolNames: offeredTools };

    let plan: ReplyPlan | null = null;
    let status: number;
    let errorMessage = '';
    if (req.method === 'HEAD') status = 200;
    else if (req.method !== 'POST') [status, errorMessage] = [405, `fake server: method ${req.method ?? '?'} not allowed`];
    else if (api === null) [status, errorMessage] = [404, `fake server: no route ${url}`];
    else if (request === null) [status, errorMessage] = [400, 'fake server: body is not a JSON object'];
    else if (model === null || parsed === null) [status, errorMessage] = [404, `fake server: unknown model ${String(model)}`];
    else {
      plan = planReply(model, view);
      status = plan.kind === 'error' ? plan.status : 200;
    }

    const entry: RequestLogEntry = {
      seq: ++seq,
      at: Date.now(),
      method: req.method ?? '',
      url,
      api,
      model,
      scenario: parsed?.scenario ?? null,
      stream: request?.['stream'] === true,
      includeUsage: asRecord(request?.['stream_options'])?.['include_usage'] === true,
      ...conversation,
      toolNames: offeredTools,
      apiKey: apiKeyOf(req),
      status,
      body,
      finished: false,
      clientClosed: false,
      endedAt: null,
    };
    requests.push(entry);
    const responseClosed = new Promise<void>((resolve) => {
      res.on('close', () => {
        entry.endedAt = Date.now();
        if (res.writableFinished) entry.finished = true;
        else if (!closing) entry.clientClosed = true;
        responsesClosed.delete(responseClosed);
        resolve();
      });
    });
    responsesClosed.add(responseClosed);

    if (req.method === 'HEAD') {
      res.writeHead(200);
      res.end();
      return;
    }
    if (plan === null || api === null) {
      sendJson(res, status, errorBody(api ?? 'openai-completions', status, errorMessage));
      return;
    }
    if (plan.kind === 'error') {
      sendJson(res, plan.status, errorBody(api, plan.status, plan.message), plan.headers);
      return;
    }
    const delay = options.chunkDelayMs ?? plan.chunkDelayMs;
    const events =
      api === 'openai-completions'
        ? openAiEvents(plan, model ?? '', entry.seq, entry.includeUsage)
        : anthropicEvents(plan, model ?? '', entry.seq);
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    // Headers go out now: the SDK call only resolves once they arrive, which a `hang` reply relies on.
    res.flushHeaders();
    for (const event of events) {
      if (!(await write(res, event))) return; // client went away
      if (delay > 0) await sleep(delay);
    }
    if (!plan.hang) res.end();
    // A hanging reply just stays open; close() (or the client) destroys the socket.
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;

  return {
    port,
    baseUrl,
    openaiBaseUrl: `${baseUrl}/v1`,
    anthropicBaseUrl: baseUrl,
    requests,
    requestsFor: (model) => requests.filter((r) => r.model === model),
    reset: () => {
      requests.length = 0;
      perModel.clear();
    },
    close: async () => {
      closing = true;
      const closed = new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
      });
      // server.close() alone waits for keep-alive and hanging connections; end them.
      for (const socket of sockets) socket.destroy();
      await closed;
      // The responses' 'close' events can come after the server's; wait so the log is final.
      await Promise.all(responsesClosed);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Reading requests

/** The conversation facts logged per request; planReply sees them as a ConversationView. */
interface ConversationSummary extends Omit<ConversationView, 'previousRequestsForModel' | 'toolNames'> {
  readonly messageCount: number;
  readonly hasToolResult: boolean;
  readonly hasSystemPrompt: boolean;
}

function emptyConversation(): ConversationSummary {
  return {
    messageCount: 0,
    hasToolResult: false,
    lastIsToolResult: false,
    lastToolResultText: null,
    lastUserText: null,
    hasSystemPrompt: false,
  };
}

/**
 * Normalises the conversation. pi sends user content as an array of text parts (OpenAI) or
 * blocks (Anthropic), tool results as role "tool" messages (OpenAI) or as a *user* message
 * made of tool_result blocks (Anthropic), whose content is a string or an array of blocks.
 * Claude Code adds a role "system" message after the first user message and puts
 * `<system-reminder>` text blocks before the prompt: "last" skips the former, the user text the latter.
 */
function readConversation(api: WireApi, request: Record<string, unknown>): ConversationSummary {
  const messages = Array.isArray(request['messages']) ? request['messages'].map(asRecord) : [];
  const isToolResult = (m: Record<string, unknown> | null): boolean =>
    api === 'openai-completions'
      ? m?.['role'] === 'tool'
      : m?.['role'] === 'user' && Array.isArray(m['content']) && m['content'].some((b) => asRecord(b)?.['type'] === 'tool_result');
  const toolResultText = (m: Record<string, unknown> | null): string | null => {
    if (m === null) return null;
    if (api === 'openai-completions') return textOf(m['content']);
    const blocks = (m['content'] as unknown[]).map(asRecord).filter((b) => b?.['type'] === 'tool_result');
    return textOf(blocks.at(-1)?.['content']);
  };
  const conversation = messages.filter((m) => m?.['role'] !== 'system');
  const last = conversation.at(-1) ?? null;
  const lastUser = [...conversation].reverse().find((m) => m?.['role'] === 'user' && !isToolResult(m)) ?? null;
  const lastIsToolResult = isToolResult(last);
  return {
    messageCount: messages.length,
    hasToolResult: messages.some(isToolResult),
    lastIsToolResult,
    lastToolResultText: lastIsToolResult ? toolResultText(last) : null,
    lastUserText: lastUser === null ? null : textOf(lastUser['content']),
    hasSystemPrompt:
      api === 'openai-completions' ? messages.some((m) => m?.['role'] === 'system' || m?.['role'] === 'developer') : request['system'] !== undefined,
  };
}

/** A string, or the text parts of a content array joined with "" (Claude Code's system reminders left out). */
function textOf(content: unknown): string | null {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return null;
  return content
    .map(asRecord)
    .map((part) => (part?.['type'] === 'text' && typeof part['text'] === 'string' ? part['text'] : null))
    .filter((text): text is string => text !== null && !text.startsWith('<system-reminder>'))
    .join('');
}

function toolNames(request: Record<string, unknown> | null): string[] {
  const tools = Array.isArray(request?.['tools']) ? (request['tools'] as unknown[]) : [];
  return tools.map((tool) => {
    const t = asRecord(tool);
    const name = asRecord(t?.['function'])?.['name'] ?? t?.['name']; // OpenAI nests it in `function`
    return typeof name === 'string' ? name : '?';
  });
}

function apiKeyOf(req: IncomingMessage): string | null {
  const auth = req.headers.authorization;
  if (auth?.startsWith('Bearer ')) return auth.slice('Bearer '.length);
  const key = req.headers['x-api-key'];
  return typeof key === 'string' ? key : null;
}

function asRecord(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => {
      parts.push(part);
    });
    req.on('end', () => {
      resolve(Buffer.concat(parts).toString('utf8'));
    });
    req.on('error', reject);
  });
}

// ---------------------------------------------------------------------------------------------
// Writing responses

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Readonly<Record<string, string>> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** Writes with back-pressure. False when the connection is gone (no point going on). */
function write(res: ServerResponse, text: string): Promise<boolean> {
  if (res.destroyed || res.writableEnded) return Promise.resolve(false);
  if (res.write(text)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve(!res.destroyed);
    };
    res.on('drain', done);
    res.on('close', done); // 'drain' never comes once the client is gone
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function countPieces(plan: Extract<ReplyPlan, { kind: 'stream' }>): number {
  return plan.blocks.reduce((sum, b) => sum + (b.type === 'toolCall' ? b.argChunks.length : b.chunks.length), 0);
}

/** OpenAI chat-completions chunks: `data: <json>\n\n` each, then `data: [DONE]`. */
function* openAiEvents(plan: Extract<ReplyPlan, { kind: 'stream' }>, model: string, seq: number, includeUsage: boolean): Generator<string> {
  const id = `chatcmpl-fake-${seq}`;
  const created = Math.floor(Date.now() / 1000);
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null, extra: Record<string, unknown> = {}): string =>
    `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: finishReason }], ...extra })}\n\n`;

  yield chunk({ role: 'assistant', content: '' });
  let toolIndex = 0;
  for (const block of plan.blocks) yield* openAiBlock(block);
  if (plan.hang) return;
  yield chunk({}, plan.stopReason === 'toolUse' ? 'tool_calls' : 'stop');
  if (includeUsage) {
    const output = countPieces(plan);
    // The usage chunk has an empty `choices` array, as OpenAI sends it.
    yield `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [], usage: { prompt_tokens: FAKE_INPUT_TOKENS, completion_tokens: output, total_tokens: FAKE_INPUT_TOKENS + output } })}\n\n`;
  }
  yield 'data: [DONE]\n\n';

  function* openAiBlock(block: PlannedBlock): Generator<string> {
    switch (block.type) {
      case 'text':
        for (const piece of block.chunks) yield chunk({ content: piece });
        return;
      case 'thinking':
        // pi reads `reasoning_content` (llama.cpp style); `reasoning` and `reasoning_text` also work.
        for (const piece of block.chunks) yield chunk({ reasoning_content: piece });
        return;
      case 'toolCall': {
        // The first piece carries id, type and name with empty arguments; later ones only `index` and argument text.
        const index = toolIndex++;
        yield chunk({ tool_calls: [{ index, id: toolCallId(scenarioOf(model), 'openai-completions'), type: 'function', function: { name: block.name, arguments: '' } }] });
        for (const piece of block.argChunks) yield chunk({ tool_calls: [{ index, function: { arguments: piece } }] });
        return;
      }
    }
  }
}

/**
 * Anthropic messages SSE: `event: <type>\ndata: <json>\n\n`. pi parses this stream itself and
 * drops events whose `event:` line is missing, so the event line is required. It also reads
 * `message.usage` of message_start and `usage` of message_delta without a guard: both must exist.
 * A stream that ends without message_stop becomes the error "Anthropic stream ended before message_stop".
 */
function* anthropicEvents(plan: Extract<ReplyPlan, { kind: 'stream' }>, model: string, seq: number): Generator<string> {
  const event = (type: string, data: Record<string, unknown>): string => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

  yield event('message_start', {
    message: {
      id: `msg_fake_${seq}`,
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: FAKE_INPUT_TOKENS, output_tokens: 1 },
    },
  });
  yield event('ping', {}); // real servers send it; pi must skip it
  for (const [index, block] of plan.blocks.entries()) {
    const last = index === plan.blocks.length - 1;
    switch (block.type) {
      case 'text':
        yield event('content_block_start', { index, content_block: { type: 'text', text: '' } });
        for (const piece of block.chunks) yield event('content_block_delta', { index, delta: { type: 'text_delta', text: piece } });
        break;
      case 'thinking': {
        yield event('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } });
        for (const piece of block.chunks) yield event('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: piece } });
        const half = Math.ceil(THINKING_SIGNATURE.length / 2);
        for (const sig of [THINKING_SIGNATURE.slice(0, half), THINKING_SIGNATURE.slice(half)]) {
          yield event('content_block_delta', { index, delta: { type: 'signature_delta', signature: sig } });
        }
        break;
      }
      case 'toolCall':
        yield event('content_block_start', {
          index,
          content_block: { type: 'tool_use', id: toolCallId(scenarioOf(model), 'anthropic-messages'), name: block.name, input: {} },
        });
        for (const piece of block.argChunks) yield event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: piece } });
        break;
    }
    if (plan.hang && last) return; // keep the last block open, no message_stop
    yield event('content_block_stop', { index });
  }
  yield event('message_delta', {
    delta: { stop_reason: plan.stopReason === 'toolUse' ? 'tool_use' : 'end_turn', stop_sequence: null },
    usage: { output_tokens: countPieces(plan) },
  });
  yield event('message_stop', {});
}

function scenarioOf(model: string): string {
  return parseModel(model)?.scenario ?? model;
}
