import { readFileSync } from 'node:fs';
import { lastValueFrom, toArray } from 'rxjs';
import { runCodex, type CliMessage, type RunCodexOptions } from '../../lib/index.js';
import { fixture } from './processes.js';

interface Line {
  type: string;
  thread_id?: string;
  message?: string;
  item?: Record<string, unknown> & { id: string; type: string };
  usage?: Record<string, number>;
}

/** The item types that stand for a tool call. */
const TOOL_ITEMS = new Set(['command_execution', 'file_change', 'mcp_tool_call', 'web_search', 'todo_list']);

export interface CodexToolFact {
  readonly id: string;
  readonly type: string;
  /** How its `item.completed` ended: failed (status `failed`, a non-zero exit code, an MCP error), completed, or null when it never completed. */
  readonly outcome: 'completed' | 'failed' | null;
}

export interface CodexFacts {
  /** The texts of the `agent_message` items, concatenated in order. */
  readonly answer: string;
  /** The texts of the `reasoning` items, in order. */
  readonly reasoning: readonly string[];
  /** The ids of the `command_execution` items, in order of their first line. */
  readonly commandIds: readonly string[];
  /** Every tool-like item, in order of its first line. */
  readonly tools: readonly CodexToolFact[];
  /** The messages of `error` items (warnings). */
  readonly warnings: readonly string[];
  /** The `message` of every `error` line, in order. */
  readonly errorLines: readonly string[];
  readonly threadId: string | undefined;
  /** `turn.completed`, `turn.failed`, or null when the run printed neither. */
  readonly turnEnd: 'turn.completed' | 'turn.failed' | null;
  /** The usage of `turn.completed`, as printed. */
  readonly usage: Readonly<Record<string, number>> | undefined;
  /** How the recorded process ended: an exit code, or a signal name. */
  readonly ending: string;
  /** What the recorded process wrote to stderr. */
  readonly stderr: string;
}

/** What a recorded (or hand-written) Codex run says, read straight from its lines and meta file. */
export function codexFacts(name: string): CodexFacts {
  let answer = '';
  const reasoning: string[] = [];
  const tools = new Map<string, { id: string; type: string; outcome: 'completed' | 'failed' | null }>();
  const warnings: string[] = [];
  const errorLines: string[] = [];
  let threadId: string | undefined;
  let turnEnd: CodexFacts['turnEnd'] = null;
  let usage: Record<string, number> | undefined;
  for (const raw of readFileSync(fixture(`codex/${name}.jsonl`), 'utf8').split('\n')) {
    if (raw === '') continue;
    const line = JSON.parse(raw) as Line;
    if (line.type === 'thread.started') threadId ??= line.thread_id;
    if (line.type === 'error') errorLines.push(line.message ?? '');
    if (line.type === 'turn.completed' || line.type === 'turn.failed') turnEnd = line.type;
    if (line.type === 'turn.completed') usage = line.usage;
    const item = line.item;
    if (item === undefined) continue;
    if (TOOL_ITEMS.has(item.type) && !tools.has(item.id)) tools.set(item.id, { id: item.id, type: item.type, outcome: null });
    if (line.type !== 'item.completed') continue;
    if (item.type === 'agent_message') answer += String(item['text']);
    if (item.type === 'reasoning') reasoning.push(String(item['text']));
    if (item.type === 'error') warnings.push(String(item['message']));
    const tool = tools.get(item.id);
    if (tool !== undefined) {
      const exitCode = item['exit_code'];
      const failed = item['status'] === 'failed' || item['error'] != null || (typeof exitCode === 'number' && exitCode !== 0);
      tool.outcome = failed ? 'failed' : 'completed';
    }
  }
  const meta = JSON.parse(readFileSync(fixture(`codex/${name}.meta.json`), 'utf8')) as { exit_code?: number | null; exit_signal?: string | null; stderr?: string };
  const all = [...tools.values()];
  return {
    answer,
    reasoning,
    commandIds: all.filter((tool) => tool.type === 'command_execution').map((tool) => tool.id),
    tools: all,
    warnings,
    errorLines,
    threadId,
    turnEnd,
    usage,
    ending: meta.exit_signal ?? String(meta.exit_code ?? 0),
    stderr: meta.stderr ?? '',
  };
}

/**
 * Runs a recorded Codex transcript through runCodex, with a stand-in that reads the prompt from
 * stdin, prints the recorded stdout byte for byte, writes the recorded stderr and ends as the
 * recorded process did (exit code or signal). `env` is merged over those settings.
 */
export function replayCodex(name: string, options: Partial<RunCodexOptions> = {}): Promise<CliMessage[]> {
  const { env, ...rest } = options;
  const facts = codexFacts(name);
  return lastValueFrom(
    runCodex({
      prompt: 'replayed',
      executable: process.execPath,
      executableArgs: [fixture('fake-pi.mjs'), fixture(`codex/${name}.jsonl`)],
      env: { FAKE_PI_EXIT: facts.ending, FAKE_PI_STDERR: facts.stderr, ...env },
      ...rest,
    }).pipe(toArray()),
  );
}
