// An agent's tool vocabulary from a table of its tools: each tool's kind, and which of its input's
// fields says what a call does.
import type { ToolKind } from '../../messages.js';
import type { ToolVocabulary } from '../../operators/dialect.js';

/** Which fields of a tool's input say what a call does; the first one with text in it is the summary. */
export type ToolSays = 'command' | 'path' | 'pattern' | readonly string[];

/** One tool of an agent's vocabulary. */
export interface ToolEntry {
  readonly kind: ToolKind;
  readonly says?: ToolSays;
}

const COMMAND: readonly string[] = ['command', 'cmd'];
const PATH: readonly string[] = ['file_path', 'path', 'absolute_path', 'notebook_path', 'dir_path'];
const PATTERN: readonly string[] = ['pattern', 'query'];

/**
 * A vocabulary from `{ toolName: { kind, says } }`: a command's summary is the command (a
 * `bash -lc '…'` wrapper taken off), a path's the path, a pattern's the pattern and where it looks.
 */
export function toolVocabulary(tools: Readonly<Record<string, ToolEntry>>): ToolVocabulary {
  return {
    kind: (name) => (Object.hasOwn(tools, name) ? (tools[name]?.kind ?? 'other') : 'other'),
    summary: (name, input) => {
      const says = Object.hasOwn(tools, name) ? tools[name]?.says : undefined;
      return says === undefined ? undefined : summaryOf(says, input);
    },
  };
}

function summaryOf(says: ToolSays, input: unknown): string | undefined {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return undefined;
  const record = input as Record<string, unknown>;
  const fields = says === 'command' ? COMMAND : says === 'path' ? PATH : says === 'pattern' ? PATTERN : says;
  const field = fields.find((key) => textOf(record[key]) !== '');
  if (field === undefined) return undefined;
  const text = textOf(record[field]);
  if (says === 'command') return unwrapShell(text);
  // Where a search looks, when it says.
  const where = says === 'pattern' ? textOf(record['path'] ?? record['dir_path']) : '';
  return where === '' ? text : `${text}  in ${where}`;
}

// A string, or an argv array joined with spaces (Codex gives commands as either).
function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && value.every((part) => typeof part === 'string')) return value.join(' ');
  return '';
}

// A command run as `/bin/bash -lc '<command>'` (Codex's): the command.
function unwrapShell(command: string): string {
  const match = /^(?:\/\S*\/)?(?:ba|z)?sh -l?c '((?:[^']|'\\'')*)'$/.exec(command);
  return match?.[1] === undefined ? command : match[1].replaceAll("'\\''", "'");
}
