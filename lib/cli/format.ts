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

/** A tool call on one line: what it does (its `summary`: the command, the path, the pattern), else its input. */
export function toolLine(summary: string | undefined, input: unknown, max = 100): string {
  return summary === undefined ? compactInput(input, max) : truncate(oneLine(summary), max);
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
