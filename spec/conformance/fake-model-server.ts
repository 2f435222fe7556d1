/**
 * A fake LLM server for running the real pi, Claude Code, Codex and Gemini CLIs offline, on
 * 127.0.0.1 with a port chosen at run time.
 *
 * - `POST /v1/chat/completions`: OpenAI chat-completions SSE (pi api `openai-completions`,
 *   provider baseUrl `http://127.0.0.1:PORT/v1`).
 * - `POST /v1/messages`: Anthropic messages SSE (pi api `anthropic-messages`,
 *   provider baseUrl `http://127.0.0.1:PORT`, because pi appends `/v1/messages` itself; Claude Code
 *   with `ANTHROPIC_BASE_URL=http://127.0.0.1:PORT` POSTs to `/v1/messages?beta=true`).
 * - `POST /v1/responses`: OpenAI Responses API SSE (Codex with a `wire_api = "responses"` provider
 *   whose base_url is `http://127.0.0.1:PORT/s/<scenario>/v1`, see below).
 * - `POST /v1beta/models/<model>:streamGenerateContent?alt=sse`: Gemini API SSE (the Gemini CLI
 *   with `GEMINI_API_KEY` and `GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:PORT/s/<scenario>`, see
 *   `geminiBaseUrl`; the model is in the URL, the body has none), and the non-streaming
 *   `:generateContent`, one JSON answer (the CLI uses it for side jobs, e.g. `--list-sessions`
 *   asks `gemini-3.5-flash-lite` for session summaries).
 * - `HEAD <any path>`: 200 with no body (Claude Code 2.1.197 sends `HEAD /` as a preconnect; 2.1.332 does not).
 *
 * The request's model (the body's `model` field, or the Gemini URL's) picks the scenario (see
 * scenarios.ts), unless the path starts with `/s/<model id>/`: then that id does, and the rest of
 * the path is routed as above. Codex and the Gemini CLI need this: each sends the model it is
 * configured with, and keeps a real one (Codex adds a warning item to every run for a slug it does
 * not know), so the scenario goes into the base URL, whose path both keep.
 * The tools a request offers tell pi (`bash`), Claude Code (`Bash`), Codex (`exec_command`) and
 * the Gemini CLI (`run_shell_command`, or `google_web_search` without `--yolo`) apart, see
 * `toolDialectOf`. Every request is logged in `requests` (HEAD requests too); `close()` destroys
 * every socket, including the ones a `hang` reply keeps open.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { errorBody, FAKE_INPUT_TOKENS, markedScenario, parseModel, planReply, THINKING_SIGNATURE, toolCallId } from './scenarios.js';
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
  /**
   * The model id that picks the scenario: the one a scenario marker in the last user text names
   * (`scenarioMarker`), else the one in a `/s/<model id>/` path, else `requestModel`.
   */
  readonly model: string | null;
  /** The request body's `model` field; for the Gemini API the model named in the URL. */
  readonly requestModel: string | null;
  /** The scenario the model id maps to, or null for an unknown model id. */
  readonly scenario: string | null;
  /** The body's `stream: true`; for the Gemini API, `:streamGenerateContent` (vs `:generateContent`). */
  readonly stream: boolean;
  /** OpenAI `stream_options.include_usage`. */
  readonly includeUsage: boolean;
  /**
   * Messages in the request (OpenAI: including the system message; Anthropic: `system` is separate;
   * Responses API: every `input` item, function calls and their outputs included; Gemini: the
   * `contents`, `systemInstruction` being separate).
   */
  readonly messageCount: number;
  /** Any tool result anywhere in the conversation. */
  readonly hasToolResult: boolean;
  readonly lastIsToolResult: boolean;
  readonly lastToolResultText: string | null;
  readonly lastUserText: string | null;
  readonly hasSystemPrompt: boolean;
  /** Names of the tools offered to the model. */
  readonly toolNames: readonly string[];
  /** Bearer token (OpenAI), x-api-key (Anthropic) or x-goog-api-key / `?key=` (Gemini) the client sent. */
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
  /** Base URL for a Responses API client that always gets `model`'s scenario: `http://127.0.0.1:PORT/s/<model>/v1` (see `scenarioBaseUrl`). */
  responsesBaseUrl(model: string): string;
  /** `GOOGLE_GEMINI_BASE_URL` for a Gemini CLI that always gets `model`'s scenario: `http://127.0.0.1:PORT/s/<model>` (see `geminiBaseUrl`). */
  geminiBaseUrl(model: string): string;
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
  '/v1/responses': 'openai-responses',
};

/** `/s/<model id>/<route>`: the model id and the route. */
const SCENARIO_PATH = /^\/s\/([^/]+)(\/.*)$/;

/** The Gemini API: `/v1beta/models/<model>:<method>` (the SDK's default version; `v1` and `v1alpha` too). */
const GEMINI_ROUTE = /^\/v1(?:beta|alpha)?\/models\/([^/:]+):(streamGenerateContent|generateContent)$/;

interface Route {
  readonly api: WireApi;
  /** The model named in the URL (Gemini API), else null. */
  readonly urlModel: string | null;
  /** Whether the URL asks for a stream (Gemini API), else null: the body says. */
  readonly stream: boolean | null;
}

function routeOf(path: string): Route | null {
  const api = ROUTES[path];
  if (api !== undefined) return { api, urlModel: null, stream: null };
  const gemini = GEMINI_ROUTE.exec(path);
  if (gemini?.[1] === undefined) return null;
  return { api: 'gemini', urlModel: decodeURIComponent(gemini[1]), stream: gemini[2] === 'streamGenerateContent' };
}

/**
 * `<baseUrl>/s/<model>/v1`: a base URL under which every request gets `model`'s scenario,
 * whatever model the body names (a Responses API client POSTs to `<it>/responses`).
 */
export function scenarioBaseUrl(baseUrl: string, model: string): string {
  return `${geminiBaseUrl(baseUrl, model)}/v1`;
}

/**
 * `<baseUrl>/s/<model>`: the Gemini CLI's `GOOGLE_GEMINI_BASE_URL` for `model`'s scenario. The
 * CLI's SDK keeps the path and appends `/v1beta/models/<its model>:streamGenerateContent?alt=sse`.
 */
export function geminiBaseUrl(baseUrl: string, model: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/s/${encodeURIComponent(model)}`;
}

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
    const scenarioPath = SCENARIO_PATH.exec(url);
    const route = routeOf(scenarioPath?.[2] ?? url);
    const api = route?.api ?? null;
    let body: unknown = null;
    try {
      body = raw.length > 0 ? JSON.parse(raw) : null;
    } catch {
      // left null; answered 400 below
    }
    const request = asRecord(body);
    const requestModel = route?.urlModel ?? (typeof request?.['model'] === 'string' ? request['model'] : null);
    const conversation = api === null || request === null ? emptyConversation() : readConversation(api, request);
    // A scenario marker in the last user text wins, then the scenario path, then the body's model.
    const model = markedScenario(conversation.lastUserText) ?? (scenarioPath?.[1] === undefined ? requestModel : decodeURIComponent(scenarioPath[1]));
    const parsed = model === null ? null : parseModel(model);
    const previous = model === null ? 0 : (perModel.get(model) ?? 0);
    if (model !== null) perModel.set(model, previous + 1);
    const offeredTools = toolNames(request);
    const view: ConversationView = { ...conversation, previousRequestsForModel: previous, toolNames: offeredTools, deferredToolNames: deferredToolNames(request) };

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
      requestModel,
      scenario: parsed?.scenario ?? null,
      stream: route?.stream ?? request?.['stream'] === true,
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
    if (api === 'gemini' && !entry.stream) {
      // `:generateContent` answers one JSON object; a hanging reply never answers.
      if (!plan.hang) sendJson(res, 200, geminiResponse(plan, geminiParts(plan), true, requestModel ?? '', entry.seq));
      return;
    }
    const delay = options.chunkDelayMs ?? plan.chunkDelayMs;
    const events =
      api === 'openai-completions'
        ? openAiEvents(plan, model ?? '', entry.seq, entry.includeUsage)
        : api === 'openai-responses'
          ? responsesEvents(plan, model ?? '', requestModel ?? '', entry.seq, responsesNamespaced(request))
          : api === 'gemini'
            ? geminiEvents(plan, requestModel ?? '', entry.seq)
            : anthropicEvents(plan, model ?? '', entry.seq);
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    // Headers go out now: the SDK call only resolves once they arrive, which a `hang` reply relies on.
    res.flushHeaders();
    // The pause comes between events, not after the last: Codex drops the connection as soon as
    // it has read `response.completed`, and would otherwise beat `res.end()` (logged as clientClosed).
    let first = true;
    for (const event of events) {
      if (!first && delay > 0) await sleep(delay);
      first = false;
      if (!(await write(res, event))) return; // client went away
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
    responsesBaseUrl: (model) => scenarioBaseUrl(baseUrl, model),
    geminiBaseUrl: (model) => geminiBaseUrl(baseUrl, model),
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
interface ConversationSummary extends Omit<ConversationView, 'previousRequestsForModel' | 'toolNames' | 'deferredToolNames'> {
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
    userTexts: [],
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
  if (api === 'openai-responses') return readResponsesInput(request);
  if (api === 'gemini') return readGeminiContents(request);
  const messages = Array.isArray(request['messages']) ? request['messages'].map(asRecord) : [];
  // An Anthropic user message holds tool results, and may hold the user's text too (Claude Code
  // puts a message sent during a tool, or after an interrupted one, beside the results): it counts
  // as a tool result only without text of the user's.
  const hasToolResults = (m: Record<string, unknown> | null): boolean =>
    api === 'openai-completions'
      ? m?.['role'] === 'tool'
      : m?.['role'] === 'user' && Array.isArray(m['content']) && m['content'].some((b) => asRecord(b)?.['type'] === 'tool_result');
  const userText = (m: Record<string, unknown> | null): string => (m?.['role'] === 'user' ? (textOf(m['content']) ?? '') : '');
  // The results of a tool search (Claude Code's `ToolSearch`, which loads deferred tools, followed
  // by its own text "Tool loaded." for some models) are no tool results of the scenario's, nor the
  // user's text: the model goes on to call what it found.
  const searchCalls = api === 'anthropic-messages' ? toolUseIdsOf(messages, ANTHROPIC_TOOL_SEARCH) : new Set<string>();
  const isSearchResult = (m: Record<string, unknown> | null): boolean => {
    const content = m?.['content'];
    if (searchCalls.size === 0 || !hasToolResults(m) || !Array.isArray(content) || !SEARCH_RESULT_TEXTS.has(userText(m))) return false;
    return content.map(asRecord).every((b) => b?.['type'] !== 'tool_result' || searchCalls.has(String(b['tool_use_id'])));
  };
  const isToolResult = (m: Record<string, unknown> | null): boolean => hasToolResults(m) && userText(m) === '' && !isSearchResult(m);
  const toolResultText = (m: Record<string, unknown> | null): string | null => {
    if (m === null) return null;
    if (api === 'openai-completions') return textOf(m['content']);
    const blocks = (m['content'] as unknown[]).map(asRecord).filter((b) => b?.['type'] === 'tool_result');
    return textOf(blocks.at(-1)?.['content']);
  };
  // Claude Code passes a message sent while a tool ran as a system message after the tool's result:
  // the model reads it as the user's, and so does this server.
  const conversation = messages.flatMap((m) => {
    if (m?.['role'] !== 'system') return [m];
    const steer = steeredText(m['content']);
    return steer === null ? [] : [{ role: 'user', content: steer }];
  });
  const last = conversation.at(-1) ?? null;
  const userTexts = conversation.filter((m) => m?.['role'] === 'user' && !isToolResult(m) && !isSearchResult(m)).map(userText);
  const lastIsToolResult = isToolResult(last);
  return {
    messageCount: messages.length,
    hasToolResult: messages.some(hasToolResults),
    lastIsToolResult,
    lastToolResultText: lastIsToolResult ? toolResultText(last) : null,
    lastUserText: userTexts.at(-1) ?? null,
    userTexts,
    hasSystemPrompt:
      api === 'openai-completions' ? messages.some((m) => m?.['role'] === 'system' || m?.['role'] === 'developer') : request['system'] !== undefined,
  };
}

/** Claude Code's tool that loads the tools it defers (2.1.332: MCP tools and some of its own). */
const ANTHROPIC_TOOL_SEARCH = 'ToolSearch';
/** What Claude Code puts beside a `ToolSearch` result in its user message: nothing, or this note. */
const SEARCH_RESULT_TEXTS: ReadonlySet<string> = new Set(['', 'Tool loaded.']);

/** The ids of the `tool_use` blocks of the assistant messages that call `name`. */
function toolUseIdsOf(messages: readonly (Record<string, unknown> | null)[], name: string): Set<string> {
  const ids = new Set<string>();
  for (const message of messages) {
    if (message?.['role'] !== 'assistant' || !Array.isArray(message['content'])) continue;
    for (const block of message['content'].map(asRecord)) {
      if (block?.['type'] === 'tool_use' && block['name'] === name && typeof block['id'] === 'string') ids.add(block['id']);
    }
  }
  return ids;
}

const DEFERRED_TOOLS_NOTE = 'The following deferred tools are now available via ToolSearch.';

/**
 * The tools a request names without offering them, to be loaded by a search first: Claude Code
 * (2.1.332) lists its deferred tools, one name a line after a note, in a system text of the
 * conversation (MCP tools among them: `mcp__host__lookup`), and offers `ToolSearch` to load them.
 * A `ToolSearch` result is a `tool_reference` block; the next request offers the tool (with
 * `defer_loading: true`).
 */
function deferredToolNames(request: Record<string, unknown> | null): string[] {
  const names: string[] = [];
  const texts = JSON.stringify([request?.['system'] ?? null, request?.['messages'] ?? null]);
  // The texts are read inside the JSON: a line break is the two characters `\n` there.
  for (let at = texts.indexOf(DEFERRED_TOOLS_NOTE); at !== -1; at = texts.indexOf(DEFERRED_TOOLS_NOTE, at + 1)) {
    const [, list = ''] = /^[^]*?:((?:\\n[A-Za-z0-9_-]+)+)/.exec(texts.slice(at + DEFERRED_TOOLS_NOTE.length)) ?? [];
    for (const name of list.split('\\n')) if (name !== '' && !names.includes(name)) names.push(name);
  }
  return names;
}

const STEER_NOTE = 'The user sent a new message while you were working:\n';

/** The user's text in Claude Code's note of a message sent during a tool, or null for another system message. */
function steeredText(content: unknown): string | null {
  if (typeof content !== 'string' || !content.startsWith(STEER_NOTE)) return null;
  const text = content.slice(STEER_NOTE.length);
  const end = text.indexOf('\n\nIMPORTANT:');
  return end === -1 ? text : text.slice(0, end);
}

/**
 * The Responses API `input`: a list of items. Codex sends two `developer` messages, then a `user`
 * message holding an `<environment_context>` block (cwd, shell, date), then the prompt as a
 * second `user` message; a resumed thread repeats the history and adds the new prompt as the
 * last `user` message. A tool round trip appends `function_call` and `function_call_output`
 * items (`output` is a string, or content parts), not messages.
 */
function readResponsesInput(request: Record<string, unknown>): ConversationSummary {
  const items = Array.isArray(request['input']) ? request['input'].map(asRecord) : [];
  const isToolResult = (item: Record<string, unknown> | null): boolean => item?.['type'] === 'function_call_output';
  // `type` may be left out of a message item (the API's "easy input message").
  const role = (item: Record<string, unknown> | null): unknown => (item?.['type'] ?? 'message') === 'message' ? item?.['role'] : undefined;
  const last = items.at(-1) ?? null;
  // Codex's `<environment_context>` message is its own, not the user's.
  const userTexts = items
    .filter((item) => role(item) === 'user')
    .map((item) => textOf(item?.['content']) ?? '')
    .filter((text) => !text.startsWith('<environment_context>'));
  const lastIsToolResult = isToolResult(last);
  const instructions = request['instructions'];
  return {
    messageCount: items.length,
    hasToolResult: items.some(isToolResult),
    lastIsToolResult,
    lastToolResultText: lastIsToolResult ? textOf(last?.['output']) : null,
    lastUserText: userTexts.at(-1) ?? null,
    userTexts,
    hasSystemPrompt:
      (typeof instructions === 'string' && instructions.length > 0) || items.some((item) => role(item) === 'developer' || role(item) === 'system'),
  };
}

/**
 * The Gemini API `contents`: `{ role: 'user' | 'model', parts }` turns, the system prompt being
 * `systemInstruction`. Parts are `{ text }` (`thought: true` for thinking), `{ functionCall }` or
 * `{ functionResponse: { name, response } }`; a tool round trip is a `model` turn with the call
 * and a `user` turn of function responses.
 */
function readGeminiContents(request: Record<string, unknown>): ConversationSummary {
  const contents = Array.isArray(request['contents']) ? request['contents'].map(asRecord) : [];
  const partsOf = (content: Record<string, unknown> | null): (Record<string, unknown> | null)[] =>
    Array.isArray(content?.['parts']) ? content['parts'].map(asRecord) : [];
  const isToolResult = (content: Record<string, unknown> | null): boolean => partsOf(content).some((part) => asRecord(part?.['functionResponse']) !== null);
  // `role` may be left out of a turn; the API takes it as `user`.
  const isUser = (content: Record<string, unknown> | null): boolean => (content?.['role'] ?? 'user') === 'user';
  const last = contents.at(-1) ?? null;
  const userTexts = contents.filter((content) => isUser(content) && !isToolResult(content)).map((content) => geminiUserText(partsOf(content)));
  const lastIsToolResult = isUser(last) && isToolResult(last);
  return {
    messageCount: contents.length,
    hasToolResult: contents.some(isToolResult),
    lastIsToolResult,
    lastToolResultText: lastIsToolResult ? geminiFunctionResponseText(partsOf(last)) : null,
    lastUserText: userTexts.at(-1) ?? null,
    userTexts,
    hasSystemPrompt: geminiHasText(request['systemInstruction']),
  };
}

/** The last function response's text: its `response.output` (or `.error`), else the response as JSON. */
function geminiFunctionResponseText(parts: readonly (Record<string, unknown> | null)[]): string {
  const responses = parts.map((part) => asRecord(part?.['functionResponse'])).filter((r) => r !== null);
  const response = responses.at(-1)?.['response'];
  const fields = asRecord(response);
  for (const field of ['output', 'error']) {
    if (typeof fields?.[field] === 'string') return fields[field];
  }
  return JSON.stringify(response ?? null);
}

/**
 * A user turn's text parts joined with "". The Gemini CLI's first turn is two text parts: a
 * `<session_context>` block (date, OS, workspace folders and their listing), then the prompt;
 * the block is left out. Later prompts of a resumed session are a turn of their own.
 */
function geminiUserText(parts: readonly (Record<string, unknown> | null)[]): string {
  return parts
    .map((part) => (part?.['thought'] !== true && typeof part?.['text'] === 'string' ? part['text'] : null))
    .filter((text): text is string => text !== null && !text.startsWith('<session_context>'))
    .join('');
}

/** A `systemInstruction`: a string, a part, or a content with text parts. */
function geminiHasText(instruction: unknown): boolean {
  if (typeof instruction === 'string') return instruction.length > 0;
  const record = asRecord(instruction);
  if (record === null) return false;
  if (typeof record['text'] === 'string') return record['text'].length > 0;
  const parts = Array.isArray(record['parts']) ? record['parts'].map(asRecord) : [];
  return parts.some((part) => typeof part?.['text'] === 'string' && part['text'].length > 0);
}

/**
 * A string, or the text parts of a content array joined with "" (Claude Code's system reminders
 * left out). Text parts are `text` (chat completions, Anthropic) or `input_text` / `output_text`
 * (Responses API).
 */
function textOf(content: unknown): string | null {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return null;
  return content
    .map(asRecord)
    .map((part) => (TEXT_PART_TYPES.has(part?.['type']) && typeof part?.['text'] === 'string' ? part['text'] : null))
    .filter((text): text is string => text !== null && !text.startsWith('<system-reminder>'))
    .join('');
}

const TEXT_PART_TYPES: ReadonlySet<unknown> = new Set(['text', 'input_text', 'output_text']);

/**
 * Chat completions nests the name in `function`; Anthropic and the Responses API have `name`.
 * Responses API tools the provider runs itself have a `type` and no name (Codex offers
 * `{ type: 'web_search' }` and `{ type: 'tool_search' }`): the type stands in for the name.
 * A Gemini API tool is a group: `{ functionDeclarations: [{ name, ... }, ...] }`.
 *
 * A Responses API `namespace` tool (how Codex offers an MCP server's tools: `mcp__<server>` holding
 * `<tool>`) gives its tools as `<namespace>__<tool>`. Tools a `tool_search` found (the tools of a
 * `tool_search_output` item in `input`: Codex defers MCP tools behind its search tool) count as
 * offered; `tool_search` itself is left out right after a search, so the model searches once.
 */
function toolNames(request: Record<string, unknown> | null): string[] {
  const tools = Array.isArray(request?.['tools']) ? (request['tools'] as unknown[]) : [];
  const offered = tools.flatMap((tool) => {
    const t = asRecord(tool);
    const declarations = t?.['functionDeclarations'];
    if (Array.isArray(declarations)) return declarations.map((d) => asRecord(d)?.['name']).map((name) => (typeof name === 'string' ? name : '?'));
    const name = asRecord(t?.['function'])?.['name'] ?? t?.['name'] ?? t?.['type'];
    if (t?.['type'] === 'namespace' && Array.isArray(t['tools'])) return [...namespacedTools(t).keys()];
    return [typeof name === 'string' ? name : '?'];
  });
  const input = Array.isArray(request?.['input']) ? request['input'].map(asRecord) : [];
  const searched = input.filter((item) => item?.['type'] === 'tool_search_output').flatMap((item) => [...searchOutputTools(item).keys()]);
  const justSearched = input.at(-1)?.['type'] === 'tool_search_output';
  return [...offered.filter((name) => !(justSearched && name === 'tool_search')), ...searched.filter((name) => !offered.includes(name))];
}

/** A namespace tool's tools by their full name (`<namespace>__<tool>`). */
function namespacedTools(namespace: Record<string, unknown>): Map<string, { readonly namespace: string; readonly name: string }> {
  const names = new Map<string, { readonly namespace: string; readonly name: string }>();
  const ns = namespace['name'];
  if (typeof ns !== 'string' || !Array.isArray(namespace['tools'])) return names;
  for (const tool of namespace['tools']) {
    const name = asRecord(tool)?.['name'];
    if (typeof name === 'string') names.set(`${ns}__${name}`, { namespace: ns, name });
  }
  return names;
}

/** The tools a `tool_search_output` item holds (plain functions, or namespaces of them), by full name. */
function searchOutputTools(item: Record<string, unknown> | null): Map<string, { readonly namespace: string | null; readonly name: string }> {
  const names = new Map<string, { readonly namespace: string | null; readonly name: string }>();
  for (const tool of Array.isArray(item?.['tools']) ? (item['tools'] as unknown[]) : []) {
    const t = asRecord(tool);
    if (t?.['type'] === 'namespace') for (const [full, entry] of namespacedTools(t)) names.set(full, entry);
    else if (typeof t?.['name'] === 'string') names.set(t['name'], { namespace: null, name: t['name'] });
  }
  return names;
}

/** The Responses API tools that are called by a name in a namespace (offered, or found by a search), by full name. */
function responsesNamespaced(request: Record<string, unknown> | null): ReadonlyMap<string, { readonly namespace: string | null; readonly name: string }> {
  const names = new Map<string, { readonly namespace: string | null; readonly name: string }>();
  for (const tool of Array.isArray(request?.['tools']) ? (request['tools'] as unknown[]) : []) {
    const t = asRecord(tool);
    if (t?.['type'] === 'namespace') for (const [full, entry] of namespacedTools(t)) names.set(full, entry);
  }
  for (const item of Array.isArray(request?.['input']) ? request['input'].map(asRecord) : []) {
    if (item?.['type'] === 'tool_search_output') for (const [full, entry] of searchOutputTools(item)) names.set(full, entry);
  }
  return names;
}

function apiKeyOf(req: IncomingMessage): string | null {
  const auth = req.headers.authorization;
  if (auth?.startsWith('Bearer ')) return auth.slice('Bearer '.length);
  for (const header of ['x-api-key', 'x-goog-api-key']) {
    const key = req.headers[header];
    if (typeof key === 'string') return key;
  }
  return new URL(req.url ?? '/', 'http://fake').searchParams.get('key');
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
        yield chunk({ tool_calls: [{ index, id: toolCallId(scenarioOf(model), 'openai-completions', block.seq), type: 'function', function: { name: block.name, arguments: '' } }] });
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
          content_block: { type: 'tool_use', id: toolCallId(scenarioOf(model), 'anthropic-messages', block.seq), name: block.name, input: {} },
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

/**
 * OpenAI Responses API SSE: `event: <type>\ndata: <json>\n\n`, the data repeating `type`, with a
 * `sequence_number`. Each block becomes one output item: `output_item.added`, its deltas, the
 * `.done` events, then `output_item.done` with the whole item. Codex 0.171.0 builds its items
 * from `output_item.done` alone (deltas without it print nothing) and fails the attempt ("stream
 * closed before response.completed") without `response.completed`, whose `response.usage` is its
 * token count; it reads the type from the data, not the event line. The rest is sent because
 * the real API sends it.
 */
function* responsesEvents(
  plan: Extract<ReplyPlan, { kind: 'stream' }>,
  model: string,
  requestModel: string,
  seq: number,
  namespaced: ReadonlyMap<string, { readonly namespace: string | null; readonly name: string }> = new Map(),
): Generator<string> {
  let sequenceNumber = 0;
  const event = (type: string, data: Record<string, unknown>): string =>
    `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequenceNumber++, ...data })}\n\n`;
  const createdAt = Math.floor(Date.now() / 1000);
  const response = (status: string, output: readonly unknown[], extra: Record<string, unknown> = {}): Record<string, unknown> => ({
    id: `resp_fake_${seq}`,
    object: 'response',
    created_at: createdAt,
    status,
    model: requestModel,
    output,
    ...extra,
  });

  yield event('response.created', { response: response('in_progress', []) });
  yield event('response.in_progress', { response: response('in_progress', []) });
  const output: Record<string, unknown>[] = [];
  for (const [index, block] of plan.blocks.entries()) {
    const keepOpen = plan.hang && index === plan.blocks.length - 1; // no .done events, no response.completed
    const at = { output_index: index };
    let item: Record<string, unknown>;
    switch (block.type) {
      case 'text': {
        const id = `msg_fake_${seq}_${index}`;
        const part = { item_id: id, ...at, content_index: 0 };
        yield event('response.output_item.added', { ...at, item: { id, type: 'message', status: 'in_progress', role: 'assistant', content: [] } });
        yield event('response.content_part.added', { ...part, part: { type: 'output_text', text: '', annotations: [] } });
        for (const piece of block.chunks) yield event('response.output_text.delta', { ...part, delta: piece });
        if (keepOpen) return;
        const text = block.chunks.join('');
        const content = { type: 'output_text', text, annotations: [] };
        yield event('response.output_text.done', { ...part, text });
        yield event('response.content_part.done', { ...part, part: content });
        item = { id, type: 'message', status: 'completed', role: 'assistant', content: [content] };
        break;
      }
      case 'thinking': {
        // The thinking is the reasoning summary (Codex prints it as its reasoning item's text).
        // Codex asks for encrypted_content with `include` and sends the item back in later requests.
        const id = `rs_fake_${seq}_${index}`;
        const part = { item_id: id, ...at, summary_index: 0 };
        yield event('response.output_item.added', { ...at, item: { id, type: 'reasoning', summary: [] } });
        yield event('response.reasoning_summary_part.added', { ...part, part: { type: 'summary_text', text: '' } });
        for (const piece of block.chunks) yield event('response.reasoning_summary_text.delta', { ...part, delta: piece });
        if (keepOpen) return;
        const text = block.chunks.join('');
        yield event('response.reasoning_summary_text.done', { ...part, text });
        yield event('response.reasoning_summary_part.done', { ...part, part: { type: 'summary_text', text } });
        item = { id, type: 'reasoning', summary: [{ type: 'summary_text', text }], encrypted_content: THINKING_SIGNATURE };
        break;
      }
      case 'toolCall': {
        if (block.name === 'tool_search') {
          // Codex's search over its deferred tools, run by the client: one whole item.
          const id = `ts_fake_${seq}_${index}`;
          item = { id, type: 'tool_search_call', call_id: toolCallId(scenarioOf(model), 'openai-responses', block.seq), execution: 'client', status: 'completed', arguments: JSON.parse(block.argChunks.join('')) as unknown };
          yield event('response.output_item.added', { ...at, item: { ...item, status: 'in_progress' } });
          break;
        }
        const id = `fc_fake_${seq}_${index}`;
        // A tool of a namespace (an MCP server's, in Codex) is called by its own name in that namespace.
        const target = namespaced.get(block.name);
        const named = target === undefined ? { name: block.name } : { name: target.name, ...(target.namespace === null ? {} : { namespace: target.namespace }) };
        const call = { id, type: 'function_call', call_id: toolCallId(scenarioOf(model), 'openai-responses', block.seq), ...named };
        yield event('response.output_item.added', { ...at, item: { ...call, status: 'in_progress', arguments: '' } });
        for (const piece of block.argChunks) yield event('response.function_call_arguments.delta', { item_id: id, ...at, delta: piece });
        if (keepOpen) return;
        const args = block.argChunks.join('');
        yield event('response.function_call_arguments.done', { item_id: id, ...at, arguments: args });
        item = { ...call, status: 'completed', arguments: args };
        break;
      }
    }
    output.push(item);
    yield event('response.output_item.done', { ...at, item });
  }
  const outputTokens = countPieces(plan);
  const reasoningTokens = plan.blocks.reduce((sum, b) => sum + (b.type === 'thinking' ? b.chunks.length : 0), 0);
  const usage = {
    input_tokens: FAKE_INPUT_TOKENS,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: outputTokens,
    output_tokens_details: { reasoning_tokens: reasoningTokens },
    total_tokens: FAKE_INPUT_TOKENS + outputTokens,
  };
  yield event('response.completed', { response: response('completed', output, { usage }) });
}

type GeminiPart = Readonly<Record<string, unknown>>;

/**
 * A plan's blocks as Gemini parts, one per streamed piece: `{ text }`, `{ text, thought: true }`,
 * and `{ functionCall: { name, args } }` (whole: the API does not stream arguments). No call `id`:
 * the Gemini API leaves it out, and the CLI makes its own (`<name>__<name>_<epoch ms>_<n>`).
 */
function geminiParts(plan: Extract<ReplyPlan, { kind: 'stream' }>): GeminiPart[] {
  return plan.blocks.flatMap((block): GeminiPart[] => {
    switch (block.type) {
      case 'text':
        return block.chunks.map((text) => ({ text }));
      case 'thinking':
        return block.chunks.map((text) => ({ text, thought: true }));
      case 'toolCall':
        return [{ functionCall: { name: block.name, args: JSON.parse(block.argChunks.join('')) as unknown } }];
    }
  });
}

/**
 * One GenerateContentResponse. The last one of a reply carries `finishReason: "STOP"` (the API
 * uses it after a function call too) and `usageMetadata`: `candidatesTokenCount` counts the
 * answer's parts, `thoughtsTokenCount` the thinking's, and the total adds the prompt's.
 */
function geminiResponse(plan: Extract<ReplyPlan, { kind: 'stream' }>, parts: readonly GeminiPart[], last: boolean, modelVersion: string, seq: number): Record<string, unknown> {
  const candidate: Record<string, unknown> = { content: { role: 'model', parts }, index: 0 };
  const response: Record<string, unknown> = { candidates: [candidate] };
  if (last) {
    const all = geminiParts(plan);
    const thoughts = all.filter((part) => part['thought'] === true).length;
    const candidates = all.length - thoughts;
    candidate['finishReason'] = 'STOP';
    response['usageMetadata'] = {
      promptTokenCount: FAKE_INPUT_TOKENS,
      candidatesTokenCount: candidates,
      totalTokenCount: FAKE_INPUT_TOKENS + candidates + thoughts,
      thoughtsTokenCount: thoughts,
    };
  }
  return { ...response, modelVersion, responseId: `fake-gemini-${seq}` };
}

/**
 * Gemini API SSE (`?alt=sse`): `data: <GenerateContentResponse JSON>\r\n\r\n` per part, as Google
 * frames it; no event names and no end marker, the stream just ends. A hanging reply sends its
 * parts without the final `finishReason` and keeps the socket open.
 */
function* geminiEvents(plan: Extract<ReplyPlan, { kind: 'stream' }>, modelVersion: string, seq: number): Generator<string> {
  const parts = geminiParts(plan);
  for (const [index, part] of parts.entries()) {
    const last = !plan.hang && index === parts.length - 1;
    yield `data: ${JSON.stringify(geminiResponse(plan, [part], last, modelVersion, seq))}\r\n\r\n`;
  }
}
