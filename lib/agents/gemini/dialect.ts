import type { OperatorFunction } from 'rxjs';
import type { CliMessage } from '../../messages.js';
import { agentOutputToMessages } from '../../operators/agent-output-to-messages.js';
import type { TurnEnd } from '../../operators/buffer-thinking-until-turn-end.js';
import type { Conclusion, Dialect, FailureDetails } from '../../operators/dialect.js';
import type { AgentEvent, RunExit } from '../../operators/items.js';
import type { TextReader, TextReading } from '../../operators/snapshot-to-delta.js';
import { meaningfulLines, quoted } from '../../operators/stderr-lines.js';
import type { ProcessItem } from '../../process/items.js';
import { field, narrowEvents, numberOf, stringOf } from '../shared/events.js';
import { installHint } from '../shared/options.js';
import { SessionHeader } from '../shared/session.js';
import { ToolCalls } from '../shared/tool-calls.js';
import { usageOf } from '../shared/usage.js';
import { knownTypes } from '../../operators/unknown-types.js';
import { GEMINI_LINE_TYPES, geminiEventSchemas, type GeminiEvent, type GeminiEventOf, type GeminiStats } from './events.js';
import { geminiToolName, geminiTools } from './tools.js';

const known = narrowEvents<GeminiEvent>();

/**
 * Reads Gemini CLI's text, one reader per run. Its assistant `message` lines are true deltas
 * (`delta: true`), with no message id and no message end: a text runs until the next tool call or
 * the end of the run, so each stretch between tool calls is a key of its own. Thinking is never
 * printed (only its token count reaches `stats`).
 *
 * @example
 * lines.pipe(parseJsonLine({ schemas: geminiEventSchemas }), snapshotToDelta({ createReader: createGeminiTextReader }));
 */
export function createGeminiTextReader(): TextReader {
  let stretch = 0;
  return (event): TextReading | null => {
    if (event.type === 'tool_use' || event.type === 'tool_result') {
      stretch += 1;
      return null;
    }
    const line = known(event, 'message');
    if (line === null || line.role !== 'assistant') return null;
    return { channel: 'assistant', key: String(stretch), delta: line.content };
  };
}

/**
 * A Gemini CLI run ends its turn at `result`.
 *
 * @example
 * items.pipe(bufferThinkingUntilTurnEnd({ turnEnd: geminiTurnEnd }));
 */
export function geminiTurnEnd(event: AgentEvent): TurnEnd {
  return event.type === 'result' ? 'final' : null;
}

/** The Gemini CLI dialect's state for one run (created by `createState`). */
export interface GeminiState {
  readonly session: SessionHeader;
  readonly tools: ToolCalls;
  result: GeminiEventOf<'result'> | undefined;
  /** The last `error` line of severity `error`. */
  lastError: string | undefined;
}

/** Options of {@link geminiDialect}. */
export interface GeminiDialectOptions {
  /** The run continues a session: `init` becomes `session.resumed`. */
  readonly resuming?: boolean;
}

const GEMINI_INSTALL_HINT = installHint('Gemini CLI', '@google/gemini-cli');

/**
 * The Gemini CLI dialect (`gemini -p … --output-format stream-json`), for `agentOutputToMessages`.
 *
 * @example
 * // What runGemini does, by hand: Gemini CLI's stream-json output read as messages (the prompt on
 * // stdin; its retries are reported on stderr, read line by line).
 * processLines('gemini', ['--output-format', 'stream-json'], { stdin: prompt, stderrLines: true })
 *   .pipe(agentOutputToMessages(geminiDialect()))
 *   .subscribe(render);
 */
export function geminiDialect(options: GeminiDialectOptions = {}): Dialect<GeminiState> {
  const resuming = options.resuming === true;
  return {
    name: 'Gemini CLI',
    installHint: GEMINI_INSTALL_HINT,
    tools: geminiTools,
    schemas: geminiEventSchemas,
    createTextReader: createGeminiTextReader,
    turnEnd: geminiTurnEnd,
    createState: () => ({ session: new SessionHeader(resuming), tools: new ToolCalls(), result: undefined, lastError: undefined }),
    map: mapGeminiEvent,
    mapStderrLine: mapGeminiStderrLine,
    conclude: concludeGemini,
    lastError: (state) => (state.result?.status === 'error' ? state.result.error?.message : undefined) ?? state.lastError,
    failureDetails: geminiFailureDetails,
    stderrLine: geminiStderrLine,
    sessionId: (state) => state.session.sessionId,
    unknownType: knownTypes(GEMINI_LINE_TYPES),
  };
}

/**
 * Gemini CLI's whole pipeline: `agentOutputToMessages(geminiDialect(options))`. On its own it
 * replays recorded output (its retries, which only stderr shows, need the stderr lines too).
 *
 * @example
 * from(recordedItems).pipe(geminiOutputToMessages()).subscribe(console.log);
 */
export function geminiOutputToMessages(options: GeminiDialectOptions = {}): OperatorFunction<ProcessItem, CliMessage> {
  return agentOutputToMessages(geminiDialect(options));
}

function mapGeminiEvent(state: GeminiState, event: AgentEvent): readonly CliMessage[] {
  switch (event.type) {
    case 'init': {
      const init = known(event, 'init');
      return init === null ? [] : state.session.announce(init.session_id, { model: init.model });
    }
    case 'tool_use': {
      const call = known(event, 'tool_use');
      return call === null ? [] : state.tools.call(call.tool_id, geminiToolName(call.tool_name), call.parameters);
    }
    case 'tool_result': {
      const result = known(event, 'tool_result');
      if (result === null) return [];
      // A shell command that exits non-zero is still `success`: the exit code reaches only the model.
      const failed = result.status !== 'success';
      return state.tools.result(result.tool_id, undefined, result.output ?? result.error?.message ?? '', failed);
    }
    case 'error': {
      const error = known(event, 'error');
      if (error === null) return [];
      if (error.severity === 'warning') return [{ type: 'agent.warning', message: error.message }];
      state.lastError = error.message;
      return [];
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

/**
 * Gemini CLI retries failed model requests silently, saying so only on stderr (each notice followed
 * by a stack trace): `Attempt 1 failed with status 500. Retrying with backoff... _ApiError: {…}`,
 * `Attempt 1 failed. Retrying with backoff... Error: exception TypeError: fetch failed sending
 * request`, `Attempt 1 failed with 5xx error. Retrying with backoff...`, or, when the API said how
 * long to wait, `Attempt 1 failed: <message>. Retrying after 5000ms...`. Its last attempt says
 * `Attempt 2 failed: …. Max attempts reached`: that is no retry.
 *
 * @example
 * mapGeminiStderrLine(geminiDialect().createState(), 'Attempt 1 failed: Quota exceeded. Retrying after 5000ms...');
 * // [{ type: 'agent.retry', attempt: 1, delayMs: 5000, reason: 'Quota exceeded' }]
 */
export function mapGeminiStderrLine(_state: GeminiState, line: string): readonly CliMessage[] {
  const notice = /^Attempt (\d+) failed(?: with status (\d{3})| with ([^.]+?))?(?::\s*(.*?))?\. Retrying (?:with backoff|after (\d+)\s*ms)\.\.\.\s*(.*)$/.exec(line.trim());
  if (notice === null) return [];
  const [, attempt = '', status, kind, message, delay, error = ''] = notice;
  return [
    {
      type: 'agent.retry',
      attempt: Number(attempt),
      ...(delay === undefined ? {} : { delayMs: Number(delay) }),
      reason: message ?? (kind === undefined ? retryReason(status, error) : kind),
    },
  ];
}

/** `500 fake internal server error` from the API error's JSON, else the error's own text. */
function retryReason(status: string | undefined, error: string): string {
  const text = error.replace(/^_?[A-Za-z]*Error:\s*/, '');
  let message: string | undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    message = stringOf(field(field(parsed, 'error'), 'message'));
  } catch {
    // not the API's JSON: the text as it is
  }
  const detail = message ?? text;
  if (status === undefined) return detail === '' ? 'failed' : detail;
  return detail === '' ? `status ${status}` : `${status} ${detail}`;
}

/**
 * The model API's HTTP status: the `code` of the API error Gemini CLI quotes
 * (`[API Error: {"error":{"code":500,…}}]`), else, for an API error whose text has none (a 429
 * quotes only the API's message), the exit code, which is the status modulo 256.
 */
function geminiFailureDetails(state: GeminiState, exit: RunExit | null): FailureDetails {
  const message = state.result?.status === 'error' ? state.result.error?.message : undefined;
  if (message === undefined || !message.startsWith('[API Error')) return {};
  const quoted = /"code"\s*:\s*(\d{3})\b/.exec(message)?.[1];
  if (quoted !== undefined) return { httpStatus: Number(quoted) };
  const code = exit?.exitCode;
  // 400-511 leave 144-255; smaller codes are Gemini CLI's own (41 auth, 55 untrusted, …).
  return code !== null && code !== undefined && code >= 144 && code <= 255 ? { httpStatus: code + 256 } : {};
}

// Lines Gemini CLI prints in runs that go well, and the rest of stack traces: they explain nothing.
const STDERR_NOISE = [
  /^Warning: 256-color support not detected/,
  /^Ripgrep is not available/,
  /^YOLO mode is enabled/,
  /^Loaded cached credentials/,
  /^\[STARTUP\]/,
  /^at /,
  /^[{}]$/,
  /^status: \d+$/,
];

// eslint-disable-next-line no-control-regex -- terminal colour sequences are what is matched
const ANSI_SEQUENCE = /\u001b\[[0-9;]*[A-Za-z]/g;

/**
 * The stderr text that explains an exit without a `result`: the last two lines that are not
 * routine (Gemini CLI says what is wrong, then what to do: "…you must specify the GEMINI_API_KEY
 * environment variable." "Update your environment and try again…").
 *
 * @example
 * geminiStderrLine(
 *   'Loaded cached credentials.\n' +
 *     'When using Gemini API, you must specify the GEMINI_API_KEY environment variable.\n' +
 *     'Update your environment and try again (no reload needed if using .env)!\n',
 * );
 * // 'When using Gemini API, you must specify the GEMINI_API_KEY environment variable. Update your environment and try again (no reload needed if using .env)!'
 */
export function geminiStderrLine(stderr: string): string | undefined {
  // Some of its messages are coloured, even on a pipe.
  const lines = meaningfulLines(stderr.replace(ANSI_SEQUENCE, ''), STDERR_NOISE);
  return quoted(lines.length === 0 ? undefined : lines.slice(-2).join(' '));
}

function concludeGemini(state: GeminiState): Conclusion {
  const result = state.result;
  if (result === undefined) {
    // A signal makes Gemini CLI exit 0 without a result: that is never a completion.
    return { kind: 'inconclusive', message: 'Gemini CLI exited without a result line (stopped by a signal, or it could not start)' };
  }
  if (result.status === 'success') {
    return { kind: 'completed', stopReason: 'end_turn', ...(result.stats === undefined ? {} : { usage: geminiUsage(result.stats) }) };
  }
  const error = result.error;
  if (error?.type === 'FatalCancellationError') return { kind: 'failed', reason: 'aborted', message: `Gemini CLI cancelled the run: ${error.message}`, ended: true };
  // An empty or blocked model response ends with a result that names no error, after an `error` line.
  return { kind: 'failed', reason: 'agent-error', message: `Gemini CLI reported an error: ${error?.message ?? state.lastError ?? result.status}`, ended: true };
}

/**
 * The contract's usage from a `result`'s stats: `input` is the input that was not cached, `cached`
 * the rest; `total_tokens` also counts thinking, which Gemini CLI does not print.
 */
function geminiUsage(stats: GeminiStats): ReturnType<typeof usageOf> {
  const cached = stats.cached ?? 0;
  const input = stats.input ?? Math.max(0, (stats.input_tokens ?? 0) - cached);
  return usageOf({ input, output: stats.output_tokens ?? 0, cacheRead: cached, total: numberOf(field(stats, 'total_tokens')) });
}
