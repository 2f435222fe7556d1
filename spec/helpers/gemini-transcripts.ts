import { readFileSync } from 'node:fs';
import { lastValueFrom, toArray } from 'rxjs';
import { runGemini, type CliMessage, type RunGeminiOptions } from '../../lib/index.js';
import { fixture } from './processes.js';

interface Line {
  type: string;
  session_id?: string;
  model?: string;
  role?: string;
  content?: string;
  tool_name?: string;
  tool_id?: string;
  status?: string;
  severity?: string;
  message?: string;
  error?: { type?: string; message?: string };
  stats?: Record<string, unknown>;
}

export interface GeminiToolFact {
  readonly id: string;
  readonly name: string;
  /** How its `tool_result` ended (`success` is completed, anything else failed), or null when it has none. */
  readonly outcome: 'completed' | 'failed' | null;
}

export interface GeminiFacts {
  /** The assistant `message` deltas, concatenated in order. */
  readonly answer: string;
  /** The assistant text of each stretch between tool calls, in order (empty stretches left out). */
  readonly stretches: readonly string[];
  /** The `content` of the user `message` line. */
  readonly prompt: string | undefined;
  /** Every tool call, in order of its `tool_use` line. */
  readonly tools: readonly GeminiToolFact[];
  /** The messages of `error` lines of severity warning. */
  readonly warnings: readonly string[];
  /** The messages of `error` lines of another severity. */
  readonly errors: readonly string[];
  readonly sessionId: string | undefined;
  /** The model its `init` line names. */
  readonly model: string | undefined;
  /** The `result` line's status, or null when the run printed none. */
  readonly result: 'success' | 'error' | null;
  /** The `error` of an error `result`. */
  readonly resultError: { readonly type?: string; readonly message?: string } | undefined;
  /** The `stats` of the `result`, as printed. */
  readonly stats: Readonly<Record<string, unknown>> | undefined;
  /** The retry notices on stderr (`Attempt <n> failed… Retrying with backoff...`): their attempt numbers. */
  readonly retryAttempts: readonly number[];
  /** How the recorded process ended: an exit code, or a signal name. */
  readonly ending: string;
  /** What the recorded process wrote to stderr. */
  readonly stderr: string;
  /** A hand-written transcript, not a recorded run. */
  readonly synthetic: boolean;
}

/** What a recorded (or hand-written) Gemini CLI run says, read straight from its lines and meta file. */
export function geminiFacts(name: string): GeminiFacts {
  const stretches: string[] = [''];
  const tools = new Map<string, { id: string; name: string; outcome: GeminiToolFact['outcome'] }>();
  const warnings: string[] = [];
  const errors: string[] = [];
  let prompt: string | undefined;
  let sessionId: string | undefined;
  let model: string | undefined;
  let result: GeminiFacts['result'] = null;
  let resultError: GeminiFacts['resultError'];
  let stats: GeminiFacts['stats'];
  for (const raw of readFileSync(fixture(`gemini/${name}.jsonl`), 'utf8').split('\n')) {
    if (raw === '') continue;
    const line = JSON.parse(raw) as Line;
    switch (line.type) {
      case 'init':
        sessionId ??= line.session_id;
        model ??= line.model;
        break;
      case 'message':
        if (line.role === 'user') prompt ??= line.content;
        if (line.role === 'assistant') stretches.push(`${stretches.pop() ?? ''}${line.content ?? ''}`);
        break;
      case 'tool_use':
        tools.set(line.tool_id ?? '', { id: line.tool_id ?? '', name: line.tool_name ?? '', outcome: null });
        stretches.push('');
        break;
      case 'tool_result': {
        const tool = tools.get(line.tool_id ?? '');
        if (tool !== undefined) tool.outcome = line.status === 'success' ? 'completed' : 'failed';
        stretches.push('');
        break;
      }
      case 'error':
        (line.severity === 'warning' ? warnings : errors).push(line.message ?? '');
        break;
      case 'result':
        result = line.status === 'success' ? 'success' : 'error';
        resultError = line.error;
        stats = line.stats;
        break;
    }
  }
  const meta = JSON.parse(readFileSync(fixture(`gemini/${name}.meta.json`), 'utf8')) as {
    exit_code?: number | null;
    exit_signal?: string | null;
    stderr?: string;
    synthetic?: boolean;
  };
  const stderr = meta.stderr ?? '';
  const retryAttempts = [...stderr.matchAll(/^Attempt (\d+) failed(?: with status \d+)?\. Retrying with backoff\.\.\./gm)].map((match) => Number(match[1]));
  return {
    answer: stretches.join(''),
    stretches: stretches.filter((stretch) => stretch !== ''),
    prompt,
    tools: [...tools.values()],
    warnings,
    errors,
    sessionId,
    model,
    result,
    resultError,
    stats,
    retryAttempts,
    ending: meta.exit_signal ?? String(meta.exit_code ?? 0),
    stderr,
    synthetic: meta.synthetic === true,
  };
}

/**
 * Runs a recorded Gemini CLI transcript through runGemini, with a stand-in that reads the prompt
 * from stdin, writes the recorded stderr (so that its retry notices reach the dialect as stderr
 * lines), prints the recorded stdout byte for byte and ends as the recorded process did (exit code
 * or signal). `env` is merged over those settings.
 */
export function replayGemini(name: string, options: Partial<RunGeminiOptions> = {}): Promise<CliMessage[]> {
  const { env, ...rest } = options;
  const facts = geminiFacts(name);
  return lastValueFrom(
    runGemini({
      prompt: facts.prompt ?? 'replayed',
      executable: process.execPath,
      executableArgs: [fixture('fake-pi.mjs'), fixture(`gemini/${name}.jsonl`)],
      env: { FAKE_PI_EXIT: facts.ending, FAKE_PI_STDERR: facts.stderr, ...env },
      ...rest,
    }).pipe(toArray()),
  );
}
