import { deflateSync } from 'node:zlib';

/**
 * Scenarios of the fake model server, independent of the wire format.
 *
 * One model id = one scenario. The server asks `planReply()` what to send for a request and
 * then renders that plan as OpenAI chat-completions SSE, Anthropic messages SSE, OpenAI
 * Responses API SSE or Gemini API SSE. Tests use the `expected*` helpers below to assert exact output, so every
 * text here is deterministic.
 */

/**
 * The wire formats the server speaks: pi's two `api` names, the OpenAI Responses API (the
 * only one Codex speaks, its `wire_api = "responses"`) and the Gemini API's `generateContent`
 * family (`streamGenerateContent?alt=sse`, what the Gemini CLI speaks with an API key).
 */
export type WireApi = 'openai-completions' | 'anthropic-messages' | 'openai-responses' | 'gemini';

/** Scenario model ids with a fixed name. `long_text_<N>` and `flaky500_<N>` are parameterised. */
export const SCENARIO_IDS = [
  'text',
  'thinking_text',
  'bash_tool',
  'read_tool',
  'sleep_tool',
  'nap_tool',
  'touch_tool',
  'fail_tool',
  'echo',
  'recall',
  'slow_text',
  'http500',
  'http429',
  'http401',
  'flaky500',
  'long_text',
  'hang',
  'json_ok',
  'json_prose',
  'json_bad',
  'call_tool',
  'endless_text',
  'tool_loop',
] as const;
export type ScenarioId = (typeof SCENARIO_IDS)[number];

/** Model ids written into pi's models.json by default (parameterised ones get a default N). */
export const DEFAULT_MODEL_IDS: readonly string[] = [
  ...SCENARIO_IDS.filter((id) => id !== 'long_text'),
  'long_text_2000',
  'flaky500_3',
];

/** Models that get `reasoning: true` in models.json. */
export const REASONING_MODEL_IDS: ReadonlySet<string> = new Set(['thinking_text']);

/** Content of `notes.txt`, the file the `read_tool` scenario reads (pi-env writes it into the cwd). */
export const NOTES_FILE = 'notes.txt';
export const NOTES_TXT = 'agent-rx notes: the magic number is 4217.\nSecond line ✓\n';

/**
 * The typed-answer scenarios: `json_ok` answers {@link JSON_OK_VALUE}, `json_bad` a value that fails
 * {@link JSON_TEST_SCHEMA} ({@link JSON_BAD_VALUE}), `json_prose` prose ({@link JSON_PROSE}). When
 * the request offers a structured-output tool (Claude Code's `StructuredOutput` with
 * `--json-schema`, Qwen Code's `structured_output`), the value goes as that tool's input (prose
 * stays prose; once Qwen Code's tool refused `json_bad`'s value, the value as text); otherwise as
 * the answer's text.
 */
export const JSON_OK_VALUE = { answer: 'forty-two', n: 42 } as const;
export const JSON_BAD_VALUE = { answer: 42 } as const;
export const JSON_PROSE = 'The answer is forty-two, as everyone knows.';
/** The JSON Schema {@link JSON_OK_VALUE} satisfies and {@link JSON_BAD_VALUE} does not. */
export const JSON_TEST_SCHEMA = {
  type: 'object',
  properties: { answer: { type: 'string' }, n: { type: 'number' } },
  required: ['answer', 'n'],
  additionalProperties: false,
} as const;
/** Tools through which a CLI takes a structured answer. */
export const STRUCTURED_OUTPUT_TOOLS: readonly string[] = ['StructuredOutput', 'structured_output'];

/** What the bash tool is expected to print for the `bash_tool` scenario. */
export const BASH_TOOL_COMMAND = 'echo hello';
export const BASH_TOOL_OUTPUT = 'hello\n';
export const SLEEP_TOOL_COMMAND = 'sleep 30';
/** A tool that runs for a second: time to steer while it runs. */
export const NAP_TOOL_COMMAND = 'sleep 1';
/** A command that changes files: Claude Code asks for permission (denied in `-p` mode without `--allowedTools`). */
export const TOUCH_TOOL_COMMAND = 'touch touched-by-agent.txt';
/** A command that fails: GNU `ls` prints "cannot access" to stderr and exits 2. */
export const FAIL_TOOL_COMMAND = 'ls /nonexistent-dir';
export const FAIL_TOOL_EXIT_CODE = 2;

/**
 * How the client names its tools, told apart by the tools a request offers: pi offers `bash`,
 * `read`, ... (lower case); Claude Code offers `Bash`, `Read`, ... and its Bash tool takes
 * `{ command, description }`; Codex offers `exec_command`, which takes `{ cmd }` (its other
 * arguments, e.g. `yield_time_ms`, have defaults); the Gemini CLI offers `run_shell_command`,
 * which takes `{ command, description }`. In headless mode the Gemini CLI offers that tool only
 * with `--yolo` (or `--approval-mode yolo`); without it, its request is told apart by
 * `google_web_search`, and the model still calls `run_shell_command`, which the CLI then
 * answers with a "not found" tool error, as it would for a real model.
 * Qwen Code offers `update_goal` in every request, and `run_shell_command` (`{ command,
 * description }`) only with `--approval-mode yolo` in a headless run; without it the model still
 * calls `run_shell_command`, which the CLI declines. It refuses a standalone `sleep N` unless the
 * command says why in a trailing `# intentional-sleep: …` comment, so its long commands carry one;
 * Claude Code 2.1.332 refuses one too, so its sleeps follow an `echo`.
 * Tool scenarios call the tool the way the client expects.
 */
export type ToolDialect = 'pi' | 'claude' | 'codex' | 'gemini' | 'qwen';

export function toolDialectOf(toolNames: readonly string[]): ToolDialect {
  if (toolNames.includes('exec_command')) return 'codex';
  if (toolNames.includes('update_goal')) return 'qwen';
  if (toolNames.includes('run_shell_command') || toolNames.includes('google_web_search')) return 'gemini';
  return toolNames.includes('Bash') ? 'claude' : 'pi';
}

/** The bash tool's name and input for a command, in a client's dialect. */
export function bashCall(command: string, dialect: ToolDialect): { readonly name: string; readonly input: Record<string, unknown> } {
  switch (dialect) {
    case 'claude': {
      const said = command.startsWith('sleep ') ? `${CLAUDE_SLEEP_PREFIX}${command}` : command;
      return { name: 'Bash', input: { command: said, description: `Run ${command}` } };
    }
    case 'codex':
      return { name: 'exec_command', input: { cmd: command } };
    case 'gemini':
      return { name: 'run_shell_command', input: { command, description: `Run ${command}` } };
    case 'qwen': {
      const said = command.startsWith('sleep ') ? `${command} ${QWEN_SLEEP_REASON}` : command;
      return { name: 'run_shell_command', input: { command: said, description: `Run ${command}` } };
    }
    case 'pi':
      return { name: 'bash', input: { command } };
  }
}

/**
 * What makes Claude Code run a `sleep`: the Bash tool of 2.1.332 (and of 2.1.328) refuses a
 * standalone `sleep N` (a tool error that points the model to its Monitor tool or
 * `run_in_background`), and runs one that follows another command. 2.1.197 runs either.
 */
export const CLAUDE_SLEEP_PREFIX = 'echo waiting; ';

/** What makes Qwen Code run a standalone `sleep` (it refuses one that does not say why). */
export const QWEN_SLEEP_REASON = '# intentional-sleep: agent-rx measures cancellation during a long tool';

/**
 * What Codex's `exec_command` printed, without the header Codex wraps it in for the model:
 * `Chunk ID: <random>\nWall time: <seconds>\nProcess exited with code N\nOriginal token count: N\nOutput:\n<output>`.
 * The chunk id and wall time differ per run, so the tool scenarios answer with the part after
 * `Output:\n` only (a text without that line is returned as is). The answers therefore match
 * `expectedText()` for Codex too: `bash_tool` gives `The command printed "hello". Done.`.
 */
export function codexCommandOutput(toolResultText: string): string {
  const match = /^Output:\n/m.exec(toolResultText);
  return match === null ? toolResultText : toolResultText.slice(match.index + match[0].length);
}

/**
 * What the Gemini CLI's `run_shell_command` printed, out of the text it gives the model (the
 * function response's `response.output`):
 * `<untrusted_context>\nOutput: <output or "(empty)">\n[Error: …\n][Exit Code: N\n][Signal: …\n][Background PIDs: …\n]Process Group PGID: <pid>\n</untrusted_context>`.
 * The PGID differs per run, so the tool scenarios answer with the part after `Output: ` only, up
 * to the first of those other sections (a text without `Output: ` is returned as is). The answers
 * therefore match `expectedText()` for the Gemini CLI too.
 */
export function geminiCommandOutput(toolResultText: string): string {
  const body = /^<untrusted_context>\n([\s\S]*)\n<\/untrusted_context>$/.exec(toolResultText)?.[1] ?? toolResultText;
  const output = /^Output: ([\s\S]*?)(?:\n(?:Error|Exit Code|Signal|Background PIDs|Process Group PGID): [\s\S]*)?$/.exec(body);
  return output?.[1] ?? toolResultText;
}

/**
 * What Qwen Code's `run_shell_command` printed, out of the text it gives the model:
 * `Command: …\nDirectory: …\nOutput: <output>\nError: …\nExit Code: N\nSignal: …\nProcess Group PGID: <pid>`.
 * The PGID differs per run, so the tool scenarios answer with the part after `Output: ` only (a
 * text without it is returned as is). The answers therefore match `expectedText()` for Qwen Code too.
 */
export function qwenCommandOutput(toolResultText: string): string {
  const output = /(?:^|\n)Output: ([\s\S]*?)\n(?:Error|Exit Code|Signal|Background PIDs|Process Group PGID): /.exec(toolResultText);
  return output?.[1] ?? toolResultText;
}

/** A tool result's text as the command printed it, without the wrapping a client adds for the model. */
function commandOutput(toolResultText: string, dialect: ToolDialect): string {
  switch (dialect) {
    case 'codex':
      return codexCommandOutput(toolResultText);
    case 'gemini':
      return geminiCommandOutput(toolResultText);
    case 'qwen':
      return qwenCommandOutput(toolResultText);
    case 'pi':
    case 'claude':
      return toolResultText;
  }
}

/** Fake token counts: input is fixed, output = number of streamed content pieces. */
export const FAKE_INPUT_TOKENS = 100;

// ---------------------------------------------------------------------------------------------
// Texts

const TEXT_CHUNKS = ['Hello ', 'from the ', 'fake model', '. Line one.\n', 'Line two: ', 'café ✓', ' done.'];
const THINKING_CHUNKS = ['The user ', 'wants a ', 'short answer', '. I will ', 'think briefly.'];
const THINKING_TEXT_CHUNKS = ['Here is ', 'the answer', ' after thinking.'];
const HANG_CHUNKS = ['This ', 'stream ', 'never ', 'ends', '...'];
const BASH_PRE_TEXT_CHUNKS = ['Let me run ', 'a command.'];
const READ_PRE_TEXT_CHUNKS = ['Reading ', 'the notes.'];
const SLEEP_PRE_TEXT_CHUNKS = ['Sleeping ', 'for a while.'];
const NAP_PRE_TEXT_CHUNKS = ['Napping ', 'for a second.'];
const TOUCH_PRE_TEXT_CHUNKS = ['Creating ', 'a file.'];
const FAIL_PRE_TEXT_CHUNKS = ['Listing ', 'a missing directory.'];
const FLAKY_TEXT_CHUNKS = ['Recovered ', 'after a ', 'server error.'];
/** `slow_text`: 40 pieces, 25 ms apart (about a second of streaming: time to steer or abort mid-stream). */
const SLOW_TEXT_CHUNKS = Array.from({ length: 40 }, (_, i) => `slow${String(i).padStart(2, '0')} `);
const SLOW_TEXT_DELAY_MS = 25;

/** `endless_text`: the `long_text` pieces, 10 ms apart, for a minute: an answer that is stopped before it ends. */
export const ENDLESS_TEXT_PIECES = 6000;
const ENDLESS_TEXT_DELAY_MS = 10;
/** `tool_loop`: a model that calls the bash tool with this command again after every result, and never answers. */
export const LOOP_TOOL_COMMAND = 'echo again';

/**
 * Fake Anthropic thinking signature (sent as two signature_delta pieces); also the Responses API
 * reasoning item's `encrypted_content`, the same kind of opaque token.
 */
export const THINKING_SIGNATURE = 'ZmFrZS1zaWduYXR1cmU=';

/** The `long_text_<N>` text: N pieces of 5 characters each (wider once i reaches 10,000). */
export function longTextChunks(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `${String(i).padStart(4, '0')} `);
}
export function longText(n: number): string {
  return longTextChunks(n).join('');
}

/** The `echo` scenario answers with the last user message text, quoted with JSON.stringify. */
export function echoText(userText: string): string {
  return `You said: ${JSON.stringify(userText)}`;
}

/**
 * The `recall` scenario answers with how many user texts the conversation holds and each of them
 * (scenario markers removed), quoted: what a session's turn sees of the turns before it.
 */
export function recallText(userTexts: readonly string[]): string {
  return `User texts in context: ${userTexts.length} (${userTexts.map((text) => JSON.stringify(withoutScenarioMarker(text))).join(' | ')}).`;
}

/**
 * A scenario marker in a user text: `[scn:<model id>]` picks that scenario for the request whose
 * last user text holds it, whatever the model is. A session changes scenario between turns (and
 * in a steer) this way, without a model switch: Codex and the Gemini CLI keep one model slug.
 */
export function scenarioMarker(model: string): string {
  return `[scn:${model}]`;
}

const SCENARIO_MARKER = /\[scn:([A-Za-z0-9_]+)\]\s*/;

/** The model id that a user text's scenario marker names, or null. */
export function markedScenario(userText: string | null): string | null {
  return userText === null ? null : (SCENARIO_MARKER.exec(userText)?.[1] ?? null);
}

/** A user text without its scenario marker. */
export function withoutScenarioMarker(userText: string): string {
  return userText.replace(SCENARIO_MARKER, '').trim();
}

// Trimmed: pi passes `hello\n` on, Claude Code `hello`.
const bashAnswer = (toolOutput: string): string => `The command printed ${JSON.stringify(toolOutput.trim())}. Done.`;
const readAnswer = (fileText: string): string => `The file says ${JSON.stringify(fileText)}. Done.`;
const SLEEP_ANSWER = 'The sleep finished.';
const NAP_ANSWER = 'The nap is over.';
const TOUCH_ANSWER = 'That was the touch command.';
// Fixed: each client words a failed command differently (pi appends "Command exited with code 2",
// Claude Code starts with "Exit code 2", Codex wraps it, see codexCommandOutput).
const FAIL_ANSWER = 'The command failed, as expected.';

// ---------------------------------------------------------------------------------------------
// Model id parsing

export interface ParsedModel {
  readonly scenario: ScenarioId;
  /** The `<N>` of `long_text_<N>` (chunks) or `flaky500_<N>` (failing requests). */
  readonly n: number;
}

/** Parses a model id; null for an unknown one (the server answers 404 to those). */
export function parseModel(model: string): ParsedModel | null {
  const long = /^long_text_(\d+)$/.exec(model);
  if (long) return { scenario: 'long_text', n: Number(long[1]) };
  const flaky = /^flaky500(?:_(\d+))?$/.exec(model);
  if (flaky) return { scenario: 'flaky500', n: flaky[1] === undefined ? 1 : Number(flaky[1]) };
  if (model === 'long_text') return null;
  return (SCENARIO_IDS as readonly string[]).includes(model) ? { scenario: model as ScenarioId, n: 0 } : null;
}

function parseOrThrow(model: string): ParsedModel {
  const parsed = parseModel(model);
  if (!parsed) throw new Error(`unknown fake model id: ${model}`);
  return parsed;
}

// ---------------------------------------------------------------------------------------------
// Reply plans

export type PlannedBlock =
  | { readonly type: 'thinking'; readonly chunks: readonly string[] }
  | { readonly type: 'text'; readonly chunks: readonly string[] }
  | { readonly type: 'toolCall'; readonly name: string; readonly argChunks: readonly string[]; readonly seq?: number };

export type ReplyPlan =
  | {
      readonly kind: 'stream';
      readonly blocks: readonly PlannedBlock[];
      readonly stopReason: 'stop' | 'toolUse';
      /** Stop after the blocks' content without finishing the response; the socket stays open. */
      readonly hang: boolean;
      /** Pause between SSE events, so the client sees several reads. */
      readonly chunkDelayMs: number;
    }
  | {
      readonly kind: 'error';
      readonly status: number;
      readonly message: string;
      readonly headers: Readonly<Record<string, string>>;
    };

/** What the server knows about the conversation, normalised from either wire format. */
export interface ConversationView {
  /**
   * The last message is a tool result (OpenAI role "tool", Anthropic user message of tool_result
   * blocks, Responses API `function_call_output` item).
   */
  readonly lastIsToolResult: boolean;
  /** Text of the last tool result, or null. */
  readonly lastToolResultText: string | null;
  /** Text of the last user message that is not a tool result, or null. */
  readonly lastUserText: string | null;
  /**
   * The texts of every user message that is not a tool result, in order (a client's own blocks,
   * such as Claude Code's system reminders, left out): what a session's later turns see in context.
   */
  readonly userTexts: readonly string[];
  /** How many requests this server has already seen for this model id (0 for the first). */
  readonly previousRequestsForModel: number;
  /** Names of the tools the request offers (they tell pi, Claude Code and Codex apart). */
  readonly toolNames: readonly string[];
  /** Names of tools the request lists as deferred, to be loaded by a search first (Claude Code's, loaded by `ToolSearch`). */
  readonly deferredToolNames: readonly string[];
}

const stream = (blocks: PlannedBlock[], stopReason: 'stop' | 'toolUse', chunkDelayMs = 5): ReplyPlan => ({
  kind: 'stream',
  blocks,
  stopReason,
  hang: false,
  chunkDelayMs,
});

/** Splits a JSON argument string into a few pieces, as real providers stream them. */
function argPieces(args: Record<string, unknown>): string[] {
  const json = JSON.stringify(args);
  const pieces: string[] = [];
  for (let i = 0; i < json.length; i += 7) pieces.push(json.slice(i, i + 7));
  return pieces;
}

function toolThenText(
  view: ConversationView,
  preText: readonly string[],
  call: { readonly name: string; readonly input: Record<string, unknown> },
  answer: (toolText: string) => string,
): ReplyPlan {
  if (view.lastIsToolResult) {
    const output = commandOutput(view.lastToolResultText ?? '', toolDialectOf(view.toolNames));
    return stream([{ type: 'text', chunks: splitWords(answer(output)) }], 'stop');
  }
  return stream(
    [
      { type: 'text', chunks: preText },
      { type: 'toolCall', name: call.name, argChunks: argPieces(call.input) },
    ],
    'toolUse',
  );
}

/** Splits a text into word-sized pieces (whitespace stays attached to the word before it). */
function splitWords(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [];
}

/**
 * `openai` is the Responses API's `error.type` and `error.code`, as OpenAI sends them for these
 * statuses; `gemini` the Gemini API's `error.status` (a google.rpc code name).
 */
const ERRORS = {
  http500: { status: 500, message: 'fake internal server error', anthropicType: 'api_error', openai: { type: 'server_error', code: null }, gemini: 'INTERNAL' },
  http429: { status: 429, message: 'fake rate limit exceeded', anthropicType: 'rate_limit_error', openai: { type: 'requests', code: 'rate_limit_exceeded' }, gemini: 'RESOURCE_EXHAUSTED' },
  http401: { status: 401, message: 'fake invalid api key', anthropicType: 'authentication_error', openai: { type: 'invalid_request_error', code: 'invalid_api_key' }, gemini: 'UNAUTHENTICATED' },
} as const;

/** google.rpc code names for the statuses the server answers besides ERRORS (bad route, body or model). */
const GEMINI_STATUS_NAMES: Readonly<Record<number, string>> = {
  400: 'INVALID_ARGUMENT',
  404: 'NOT_FOUND',
  405: 'INVALID_ARGUMENT',
  500: 'INTERNAL',
};

/** Decides the reply for one request. */
export function planReply(model: string, view: ConversationView): ReplyPlan {
  const { scenario, n } = parseOrThrow(model);
  const dialect = toolDialectOf(view.toolNames);
  switch (scenario) {
    case 'text':
      return stream([{ type: 'text', chunks: TEXT_CHUNKS }], 'stop');
    case 'thinking_text':
      return stream(
        [
          { type: 'thinking', chunks: THINKING_CHUNKS },
          { type: 'text', chunks: THINKING_TEXT_CHUNKS },
        ],
        'stop',
      );
    case 'echo':
      return stream([{ type: 'text', chunks: splitWords(echoText(view.lastUserText ?? '')) }], 'stop');
    case 'recall':
      return stream([{ type: 'text', chunks: splitWords(recallText(view.userTexts)) }], 'stop');
    case 'slow_text':
      return stream([{ type: 'text', chunks: SLOW_TEXT_CHUNKS }], 'stop', SLOW_TEXT_DELAY_MS);
    case 'bash_tool':
      return toolThenText(view, BASH_PRE_TEXT_CHUNKS, bashCall(BASH_TOOL_COMMAND, dialect), bashAnswer);
    case 'read_tool':
      return toolThenText(view, READ_PRE_TEXT_CHUNKS, { name: 'read', input: { path: NOTES_FILE } }, readAnswer);
    case 'sleep_tool':
      return toolThenText(view, SLEEP_PRE_TEXT_CHUNKS, bashCall(SLEEP_TOOL_COMMAND, dialect), () => SLEEP_ANSWER);
    case 'nap_tool':
      return toolThenText(view, NAP_PRE_TEXT_CHUNKS, bashCall(NAP_TOOL_COMMAND, dialect), () => NAP_ANSWER);
    case 'touch_tool':
      return toolThenText(view, TOUCH_PRE_TEXT_CHUNKS, bashCall(TOUCH_TOOL_COMMAND, dialect), () => TOUCH_ANSWER);
    case 'fail_tool':
      return toolThenText(view, FAIL_PRE_TEXT_CHUNKS, bashCall(FAIL_TOOL_COMMAND, dialect), () => FAIL_ANSWER);
    case 'long_text':
      return stream([{ type: 'text', chunks: longTextChunks(n) }], 'stop', 0);
    case 'hang':
      return { kind: 'stream', blocks: [{ type: 'text', chunks: HANG_CHUNKS }], stopReason: 'stop', hang: true, chunkDelayMs: 20 };
    case 'flaky500':
      if (view.previousRequestsForModel < n) return errorPlan('http500');
      return stream([{ type: 'text', chunks: FLAKY_TEXT_CHUNKS }], 'stop');
    case 'http500':
    case 'http429':
    case 'http401':
      return errorPlan(scenario);
    case 'json_ok':
    case 'json_bad':
    case 'json_prose':
      return jsonPlan(scenario, view);
    case 'call_tool':
      return callToolPlan(view);
    case 'endless_text':
      return stream([{ type: 'text', chunks: longTextChunks(ENDLESS_TEXT_PIECES) }], 'stop', ENDLESS_TEXT_DELAY_MS);
    case 'tool_loop': {
      const call = bashCall(LOOP_TOOL_COMMAND, dialect);
      // A new id for every call: the request's number.
      return stream(
        [
          { type: 'text', chunks: ['Once ', 'more.'] },
          { type: 'toolCall', name: call.name, argChunks: argPieces(call.input), seq: view.previousRequestsForModel + 1 },
        ],
        'toolUse',
      );
    }
  }
}

/**
 * `call_tool`: the model calls the tool the user's text names, with the input it gives
 * ({@link callToolText}), then says what the tool answered ({@link calledToolAnswer}). The tool is
 * the offered one of that name, or whose name ends with `__<name>` or `_<name>` (an MCP tool, as
 * each agent names them); with none offered, the model says so and which tools it was offered.
 * When the request offers `tool_search` (Codex, which defers MCP tools behind it), the model
 * first searches for a tool not offered, with the name as the query; when it lists the tool as
 * deferred and offers `ToolSearch` (Claude Code 2.1.332), the model first loads it by its full name.
 */
function callToolPlan(view: ConversationView): ReplyPlan {
  const asked = CALL_TOOL.exec(view.lastUserText ?? '');
  if (asked === null) return stream([{ type: 'text', chunks: ['No', ' CALL', ' in', ' the', ' prompt.'] }], 'stop');
  const [, name = '', input = '{}'] = asked;
  if (view.lastIsToolResult) return stream([{ type: 'text', chunks: splitWords(calledToolAnswer(view.lastToolResultText ?? '')) }], 'stop');
  const named = (tool: string): boolean => tool === name || tool.endsWith(`__${name}`) || tool.endsWith(`_${name}`);
  const offered = view.toolNames.find(named);
  // Claude Code (2.1.332) defers MCP tools: it lists their names and offers `ToolSearch`, which
  // loads the ones a query selects; the model loads the tool first.
  const deferred = view.deferredToolNames.find(named);
  if (offered === undefined && deferred !== undefined && view.toolNames.includes('ToolSearch')) {
    return stream([{ type: 'toolCall', name: 'ToolSearch', argChunks: argPieces({ query: `select:${deferred}` }), seq: view.previousRequestsForModel + 1 }], 'toolUse');
  }
  // Codex defers MCP tools behind its `tool_search`: the model searches for the tool first.
  if (offered === undefined && view.toolNames.includes('tool_search')) return stream([{ type: 'toolCall', name: 'tool_search', argChunks: argPieces({ query: name, limit: 8 }), seq: view.previousRequestsForModel + 1 }], 'toolUse');
  if (offered === undefined) return stream([{ type: 'text', chunks: splitWords(`No tool ${name} was offered; offered: ${view.toolNames.join(', ')}.`) }], 'stop');
  // Each call its own id: a session's turns call again, and a client takes a repeated id as the same call.
  return stream([{ type: 'toolCall', name: offered, argChunks: argPieces(JSON.parse(input) as Record<string, unknown>), seq: view.previousRequestsForModel + 1 }], 'toolUse');
}

const CALL_TOOL = /CALL ([A-Za-z0-9_-]+) (\{.*\})/s;

/** The prompt that makes the `call_tool` scenario call `name` with `input`. */
export function callToolText(name: string, input: Record<string, unknown>): string {
  return `CALL ${name} ${JSON.stringify(input)}`;
}

/** What the `call_tool` scenario says once the tool answered `toolText`. */
export function calledToolAnswer(toolText: string): string {
  return `The tool answered: ${JSON.stringify(toolText)}. Done.`;
}

function jsonPlan(scenario: 'json_ok' | 'json_bad' | 'json_prose', view: ConversationView): ReplyPlan {
  if (scenario === 'json_prose') return stream([{ type: 'text', chunks: splitWords(JSON_PROSE) }], 'stop');
  const value = scenario === 'json_ok' ? JSON_OK_VALUE : JSON_BAD_VALUE;
  const tool = view.toolNames.find((name) => STRUCTURED_OUTPUT_TOOLS.includes(name));
  // After a structured answer was taken, the turn is over: a short closing text.
  if (tool !== undefined && view.lastIsToolResult && scenario === 'json_ok') return stream([{ type: 'text', chunks: ['Done.'] }], 'stop');
  // Qwen Code's tool refused the value (it checks the schema) and asks again, without bound: the
  // model gives up on the tool and says the value as text.
  if (tool === 'structured_output' && view.lastIsToolResult) return stream([{ type: 'text', chunks: argPieces(value) }], 'stop');
  if (tool !== undefined) return stream([{ type: 'toolCall', name: tool, argChunks: argPieces(value) }], 'toolUse');
  return stream([{ type: 'text', chunks: argPieces(value) }], 'stop');
}

function errorPlan(kind: keyof typeof ERRORS): ReplyPlan {
  const { status, message } = ERRORS[kind];
  // retry-after: 0 makes the SDK fall back to its own short backoff (about 0.5-1 s) instead of
  // waiting; Codex retries at once.
  return { kind: 'error', status, message, headers: kind === 'http429' ? { 'retry-after': '0' } : {} };
}

/** The JSON error body each wire format uses (the SDKs turn it into pi's `errorMessage`). */
export function errorBody(api: WireApi, status: number, message: string): unknown {
  const known = Object.values(ERRORS).find((e) => e.status === status);
  switch (api) {
    case 'openai-completions':
      return { error: { message, type: status === 429 ? 'rate_limit_error' : 'server_error', code: null } };
    case 'openai-responses':
      return { error: { message, type: known?.openai.type ?? 'invalid_request_error', param: null, code: known?.openai.code ?? null } };
    case 'anthropic-messages':
      return { type: 'error', error: { type: known?.anthropicType ?? 'api_error', message } };
    case 'gemini':
      return { error: { code: status, message, status: known?.gemini ?? GEMINI_STATUS_NAMES[status] ?? 'UNKNOWN' } };
  }
}

// ---------------------------------------------------------------------------------------------
// Expectations for tests

/**
 * The text of the final assistant message of a successful run.
 * Tool scenarios: the answer after the tool result (computed from the expected tool output).
 * `hang`: the text streamed before the stream stalls. `echo`: use `echoText(prompt)`.
 */
export function expectedText(model: string): string {
  const { scenario, n } = parseOrThrow(model);
  switch (scenario) {
    case 'text':
      return TEXT_CHUNKS.join('');
    case 'thinking_text':
      return THINKING_TEXT_CHUNKS.join('');
    case 'bash_tool':
      return bashAnswer(BASH_TOOL_OUTPUT);
    case 'read_tool':
      return readAnswer(NOTES_TXT);
    case 'sleep_tool':
      return SLEEP_ANSWER;
    case 'nap_tool':
      return NAP_ANSWER;
    case 'touch_tool':
      return TOUCH_ANSWER;
    case 'fail_tool':
      return FAIL_ANSWER;
    case 'long_text':
      return longText(n);
    case 'hang':
      return HANG_CHUNKS.join('');
    case 'flaky500':
      return FLAKY_TEXT_CHUNKS.join('');
    case 'slow_text':
      return SLOW_TEXT_CHUNKS.join('');
    case 'json_ok':
      return JSON.stringify(JSON_OK_VALUE);
    case 'json_bad':
      return JSON.stringify(JSON_BAD_VALUE);
    case 'json_prose':
      return JSON_PROSE;
    case 'echo':
    case 'recall':
    case 'call_tool':
    case 'endless_text':
    case 'tool_loop':
    case 'http500':
    case 'http429':
    case 'http401':
      throw new Error(`scenario ${scenario} has no fixed text`);
  }
}

/** The thinking text of the scenario, or undefined when it does not think. */
export function expectedThinking(model: string): string | undefined {
  return parseOrThrow(model).scenario === 'thinking_text' ? THINKING_CHUNKS.join('') : undefined;
}

export interface ExpectedToolCall {
  /**
   * Tool-call id as the server sends it (`call_…` on both OpenAI APIs, `toolu_…` on Anthropic;
   * none on the Gemini API, see `toolCallId`).
   */
  readonly id: string;
  readonly name: string;
  readonly arguments: Record<string, unknown>;
  /** Text of the first assistant message, before the tool call. */
  readonly textBefore: string;
}

/** The tool call of the first assistant message, or undefined for scenarios without one. */
export function expectedToolCall(model: string, api: WireApi, dialect: ToolDialect = 'pi'): ExpectedToolCall | undefined {
  const { scenario } = parseOrThrow(model);
  const id = toolCallId(scenario, api);
  const bash = (command: string, textBefore: readonly string[]): ExpectedToolCall => {
    const { name, input } = bashCall(command, dialect);
    return { id, name, arguments: input, textBefore: textBefore.join('') };
  };
  switch (scenario) {
    case 'bash_tool':
      return bash(BASH_TOOL_COMMAND, BASH_PRE_TEXT_CHUNKS);
    case 'read_tool':
      return { id, name: 'read', arguments: { path: NOTES_FILE }, textBefore: READ_PRE_TEXT_CHUNKS.join('') };
    case 'sleep_tool':
      return bash(SLEEP_TOOL_COMMAND, SLEEP_PRE_TEXT_CHUNKS);
    case 'nap_tool':
      return bash(NAP_TOOL_COMMAND, NAP_PRE_TEXT_CHUNKS);
    case 'touch_tool':
      return bash(TOUCH_TOOL_COMMAND, TOUCH_PRE_TEXT_CHUNKS);
    case 'fail_tool':
      return bash(FAIL_TOOL_COMMAND, FAIL_PRE_TEXT_CHUNKS);
    default:
      return undefined;
  }
}

/**
 * Deterministic tool-call id (the Responses API's `call_id`): one tool call per scenario. The
 * Gemini API sends no id with a function call (the Gemini CLI makes its own tool ids), so for
 * `gemini` this is only a name for the call.
 */
export function toolCallId(scenario: string, api: WireApi, seq = 1): string {
  return api === 'anthropic-messages' ? `toolu_${scenario}_${seq}` : `call_${scenario}_${seq}`;
}

/**
 * The error message of an error scenario once the client gives up.
 *
 * - `openai-completions`, `anthropic-messages`: pi's `errorMessage`. The OpenAI SDK uses
 *   `<status> <error.message>`, the Anthropic SDK `<status> <JSON of the whole body>`.
 * - `openai-responses`: Codex 0.171.0's `turn.failed` message. It replaces a 500's text with its
 *   own, names only the status of a 429, and quotes a 401's `error.message` with the URL it
 *   POSTed to, `<responsesBaseUrl>/responses` (so `responsesBaseUrl`, the provider base URL the
 *   run used, is needed for `http401`).
 */
export function expectedErrorMessage(model: string, api: WireApi, responsesBaseUrl?: string): string {
  const { scenario } = parseOrThrow(model);
  const kind = scenario === 'flaky500' ? 'http500' : scenario;
  if (kind !== 'http500' && kind !== 'http429' && kind !== 'http401') {
    throw new Error(`scenario ${scenario} does not fail`);
  }
  const { status, message } = ERRORS[kind];
  switch (api) {
    case 'openai-completions':
      return `${status} ${message}`;
    case 'anthropic-messages':
      return `${status} ${JSON.stringify(errorBody(api, status, message))}`;
    case 'openai-responses':
      return codexErrorMessage(kind, responsesBaseUrl);
    case 'gemini':
      return geminiErrorMessage(kind);
  }
}

/**
 * The Gemini CLI 0.61.0's `result.error.message` (stream-json) once it gives up: the error body as
 * JSON in `[API Error: …]`, except for a 429, of which it quotes `error.message` and adds advice.
 */
function geminiErrorMessage(kind: keyof typeof ERRORS): string {
  const { status, message } = ERRORS[kind];
  if (kind === 'http429') {
    return `[API Error: ${message}]\nPlease wait and try again later. To increase your limits, request a quota increase through AI Studio, or switch to another /auth method`;
  }
  return `[API Error: ${JSON.stringify(errorBody('gemini', status, message))}]`;
}

function codexErrorMessage(kind: keyof typeof ERRORS, responsesBaseUrl: string | undefined): string {
  switch (kind) {
    case 'http500':
      return 'We’re currently experiencing high demand, which may cause temporary errors.';
    case 'http429':
      return 'exceeded retry limit, last status: 429 Too Many Requests';
    case 'http401':
      if (responsesBaseUrl === undefined) throw new Error('the http401 message names the URL: pass responsesBaseUrl');
      return `unexpected status 401 Unauthorized: ${ERRORS.http401.message}, url: ${responsesBaseUrl}/responses`;
  }
}

/** An image found in a model request: its type and its bytes in base64. */
export interface RequestImage {
  readonly mimeType: string;
  readonly data: string;
}

/**
 * Every image a request body carries, in order, whatever the wire: OpenAI chat `image_url` and
 * Responses `input_image` data URLs, Anthropic `image` blocks with a base64 source, Gemini
 * `inlineData`.
 */
export function imagesInRequest(body: unknown): RequestImage[] {
  const found: RequestImage[] = [];
  const dataUrl = (url: unknown): void => {
    if (typeof url !== 'string') return;
    const match = /^data:([^;,]+);base64,(.*)$/s.exec(url);
    if (match !== null) found.push({ mimeType: match[1] ?? '', data: match[2] ?? '' });
  };
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (const item of value) walk(item);
      return;
    }
    if (typeof value !== 'object' || value === null) return;
    const record = value as Record<string, unknown>;
    if (record['type'] === 'image_url') {
      const inner = record['image_url'];
      dataUrl(typeof inner === 'object' && inner !== null ? (inner as Record<string, unknown>)['url'] : inner);
      return;
    }
    if (record['type'] === 'input_image') {
      dataUrl(record['image_url']);
      return;
    }
    const source = record['source'];
    if (record['type'] === 'image' && typeof source === 'object' && source !== null) {
      const { media_type: mediaType, data } = source as Record<string, unknown>;
      if (typeof mediaType === 'string' && typeof data === 'string') found.push({ mimeType: mediaType, data });
      return;
    }
    const inline = record['inlineData'];
    if (typeof inline === 'object' && inline !== null) {
      const { mimeType, data } = inline as Record<string, unknown>;
      if (typeof mimeType === 'string' && typeof data === 'string') found.push({ mimeType, data });
      return;
    }
    for (const item of Object.values(record)) walk(item);
  };
  walk(body);
  return found;
}

/** A small PNG made here: a 2x2 image of four colours, encoded with zlib, and its bytes in base64. */
export function testPng(): { readonly bytes: Uint8Array; readonly base64: string } {
  const chunk = (type: string, data: Buffer): Buffer => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(2, 0); // width
  header.writeUInt32BE(2, 4); // height
  header.set([8, 2, 0, 0, 0], 8); // 8 bits, RGB, deflate, no filter method, no interlace
  // Each row: filter byte 0, then RGB pixels.
  const rows = Buffer.from([0, 255, 0, 0, 0, 255, 0, 0, 0, 0, 255, 255, 255, 255]);
  const png = Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(rows)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
  return { bytes: Uint8Array.from(png), base64: png.toString('base64') };
}

function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let bit = 0; bit < 8; bit += 1) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}
