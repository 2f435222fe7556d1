import type { Usage } from '../index.js';

// Cuts text to `max` characters, marking the cut with an ellipsis.
export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`;
}

// One terminal line: runs of whitespace with a line break become a visible ⏎.
export function oneLine(text: string): string {
  return text.trim().replace(/\s*\r?\n\s*/g, ' ⏎ ');
}

// A tool input on one line: a lone string argument as itself (`echo hello`), anything else as JSON.
export function compactInput(input: unknown, max = 100): string {
  if (typeof input === 'object' && input !== null && !Array.isArray(input)) {
    const values = Object.values(input);
    if (values.length === 1 && typeof values[0] === 'string') return truncate(oneLine(values[0]), max);
  }
  // Inputs come from JSON, so only `undefined` has no JSON text.
  return truncate(oneLine(input === undefined ? '' : JSON.stringify(input)), max);
}

// The fields of well-known tools' inputs that say what a call does, by tool name (Claude Code's,
// pi's, Codex's and Gemini CLI's); the first field present with text in it is the summary.
const COMMAND = ['command', 'cmd'];
const PATH = ['file_path', 'path', 'absolute_path', 'notebook_path', 'dir_path'];
const PATTERN = ['pattern', 'query'];
const SUMMARY_FIELDS: Readonly<Record<string, readonly string[]>> = {
  Bash: COMMAND,
  bash: COMMAND,
  run_shell_command: COMMAND,
  shell: COMMAND,
  command_execution: COMMAND,
  Read: PATH,
  Write: PATH,
  Edit: PATH,
  MultiEdit: PATH,
  NotebookEdit: PATH,
  LS: PATH,
  read: PATH,
  write: PATH,
  edit: PATH,
  ls: PATH,
  read_file: PATH,
  write_file: PATH,
  replace: PATH,
  list_directory: PATH,
  Grep: PATTERN,
  Glob: PATTERN,
  grep: PATTERN,
  find: PATTERN,
  glob: PATTERN,
  search_file_content: PATTERN,
  grep_search: PATTERN,
  WebFetch: ['url'],
  web_fetch: ['prompt', 'url'],
  WebSearch: ['query'],
  web_search: ['query'],
  google_web_search: ['query'],
  Task: ['description', 'prompt'],
};

/**
 * A tool call's input on one line: for a well-known tool what the call does (Bash: the command;
 * Read, Write, Edit: the path; Grep, Glob: the pattern, and where), else `compactInput`.
 */
export function summarizeToolInput(name: string, input: unknown, max = 100): string {
  const fields = SUMMARY_FIELDS[name];
  if (fields === undefined || typeof input !== 'object' || input === null || Array.isArray(input)) return compactInput(input, max);
  const record = input as Record<string, unknown>;
  const field = fields.find((key) => textOf(record[key]) !== '');
  if (field === undefined) return compactInput(input, max);
  let summary = textOf(record[field]);
  if (fields === COMMAND) summary = unwrapShell(summary);
  // Where a search looks, when it says.
  const where = fields === PATTERN ? textOf(record['path'] ?? record['dir_path']) : '';
  return truncate(oneLine(where === '' ? summary : `${summary}  in ${where}`), max);
}

// A string, or an argv array joined with spaces (Codex gives commands as either).
function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && value.every((part) => typeof part === 'string')) return value.join(' ');
  return '';
}

// Codex runs each command as `/bin/bash -lc '<command>'`: show the command.
function unwrapShell(command: string): string {
  const match = /^(?:\/\S*\/)?(?:ba|z)?sh -l?c '((?:[^']|'\\'')*)'$/.exec(command);
  return match?.[1] === undefined ? command : match[1].replaceAll("'\\''", "'");
}

/** The head of a tool's output: at most `maxLines` lines of at most `width` characters. */
export interface OutputHead {
  readonly lines: readonly string[];
  /** Lines left out after the head. */
  readonly omitted: number;
}

// Drops trailing blank lines first, so `"hello\n"` is one line, not two.
export function outputHead(output: string, maxLines = 4, width = 120): OutputHead {
  const trimmed = output.replace(/\s+$/, '');
  const all = trimmed === '' ? [] : trimmed.split(/\r?\n/);
  return { lines: all.slice(0, maxLines).map((line) => truncate(line, width)), omitted: Math.max(0, all.length - maxLines) };
}

// The last line that has something on it, e.g. for a progress hint.
export function lastLine(text: string): string {
  return (
    text
      .split(/\r?\n/)
      .map((line) => line.trim())
      .findLast((line) => line !== '') ?? ''
  );
}

// `850ms`, `3.1s`, `2m 05s`.
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const seconds = Math.round(ms / 1000);
  return `${Math.floor(seconds / 60)}m ${String(seconds % 60).padStart(2, '0')}s`;
}

// `267 tokens (246 in, 21 out)`, plus cache and cost when there are any.
export function formatUsage(usage: Usage): string {
  const parts = [`${usage.inputTokens} in`, `${usage.outputTokens} out`];
  if (usage.cacheReadTokens > 0) parts.push(`${usage.cacheReadTokens} cache read`);
  if (usage.cacheWriteTokens > 0) parts.push(`${usage.cacheWriteTokens} cache write`);
  const cost = usage.cost !== undefined && usage.cost > 0 ? `, $${usage.cost.toFixed(4)}` : '';
  return `${usage.totalTokens} tokens (${parts.join(', ')}${cost})`;
}

// `1 line`, `6 lines`, `2 processes`.
export function plural(count: number, word: string, many = `${word}s`): string {
  return `${count} ${count === 1 ? word : many}`;
}
