import type { ToolContent } from '../../messages.js';
import { field, numberOf, stringOf } from '../shared/events.js';

/**
 * What a Claude Code tool result carries besides its text, as `tool.completed.content`:
 * - the images it gave back: the `image` blocks of its `tool_result` (Read of an image, an MCP
 *   tool's picture), else the image of Read's own account (`tool_use_result.type: "image"`);
 * - the file a `Write` or an `Edit` changed, as a diff of whole texts, from the tool's own account
 *   of its result (`tool_use_result`): Write gives the text it wrote (`content`) and the file before
 *   (`originalFile`, `null` for a new file); Edit gives the file before and the strings it replaced,
 *   and its new text is the replacement done as Claude Code does it, kept only when the patch
 *   Claude Code reports (`structuredPatch`) turns the old text into exactly that text (it differs
 *   where Claude Code adjusted the strings, e.g. curly quotes, or rewrote the file after the edit).
 *
 * Claude Code reads files with their line endings made `\n`: the texts are as it saw them. What the
 * data does not give is left out: a Write of an existing file without its old text, a notebook
 * edit (NotebookEdit), a file changed by a shell command.
 */
export function claudeToolContent(name: string, resultContent: unknown, toolUseResult: unknown): ToolContent[] {
  const content: ToolContent[] = [...imagesOf(resultContent)];
  if (content.length === 0) {
    const image = accountImage(toolUseResult);
    if (image !== undefined) content.push(image);
  }
  const diff = name === 'Write' ? writeDiff(toolUseResult) : name === 'Edit' ? editDiff(toolUseResult) : undefined;
  if (diff !== undefined) content.push(diff);
  return content;
}

/** The base64 `image` blocks of a tool result's content. */
function imagesOf(content: unknown): ToolContent[] {
  if (!Array.isArray(content)) return [];
  const images: ToolContent[] = [];
  for (const block of content) {
    if (field(block, 'type') !== 'image') continue;
    const source = field(block, 'source');
    const data = stringOf(field(source, 'data'));
    const mimeType = stringOf(field(source, 'media_type'));
    if (field(source, 'type') === 'base64' && data !== undefined && mimeType !== undefined) images.push({ type: 'image', data, mimeType });
  }
  return images;
}

/** Read's account of an image it read: `{ type: 'image', file: { base64, type } }`. */
function accountImage(account: unknown): ToolContent | undefined {
  if (field(account, 'type') !== 'image') return undefined;
  const file = field(account, 'file');
  const data = stringOf(field(file, 'base64'));
  const mimeType = stringOf(field(file, 'type'));
  return data === undefined || mimeType === undefined ? undefined : { type: 'image', data, mimeType };
}

/** Write's account: `{ type: 'create' | 'update', filePath, content, originalFile }`. */
function writeDiff(account: unknown): ToolContent | undefined {
  const path = stringOf(field(account, 'filePath'));
  const newText = stringOf(field(account, 'content'));
  if (path === undefined || newText === undefined) return undefined;
  const kind = field(account, 'type');
  if (kind === 'create') return { type: 'diff', path, oldText: null, newText };
  const oldText = stringOf(field(account, 'originalFile'));
  // An update without the old text (as Claude Code stores it in its transcripts) is no diff.
  if (kind !== 'update' || oldText === undefined) return undefined;
  return { type: 'diff', path, oldText, newText };
}

/** Edit's account: `{ filePath, oldString, newString, replaceAll, originalFile, structuredPatch }`. */
function editDiff(account: unknown): ToolContent | undefined {
  const path = stringOf(field(account, 'filePath'));
  const oldString = stringOf(field(account, 'oldString'));
  const newString = stringOf(field(account, 'newString'));
  const original = field(account, 'originalFile');
  const patch = field(account, 'structuredPatch');
  if (path === undefined || oldString === undefined || newString === undefined || !Array.isArray(patch)) return undefined;
  if (typeof original !== 'string') {
    // No file before: an Edit with an empty old string made it.
    return original === null && oldString === '' ? { type: 'diff', path, oldText: null, newText: newString } : undefined;
  }
  const newText = claudeEdit(original, oldString, newString, field(account, 'replaceAll') === true);
  if (newText === undefined || applyPatch(shownTabs(original), patch) !== shownTabs(newText)) return undefined;
  return { type: 'diff', path, oldText: original, newText };
}

/**
 * An edit as Claude Code's Edit does it: an empty old string gives the new string; else the first
 * (or with `replaceAll` every) occurrence is replaced, and a deletion of a string that does not end
 * a line takes the line's end with it when it is followed by one. `undefined` when the old string
 * is not in the text.
 */
export function claudeEdit(text: string, oldString: string, newString: string, replaceAll: boolean): string | undefined {
  if (oldString === '') return newString;
  if (!text.includes(oldString)) return undefined;
  const replace = (from: string): string => (replaceAll ? text.replaceAll(from, () => newString) : text.replace(from, () => newString));
  if (newString === '' && !oldString.endsWith('\n') && text.includes(`${oldString}\n`)) return replace(`${oldString}\n`);
  return replace(oldString);
}

/** Leading tabs as Claude Code's patches show them: two spaces each. */
function shownTabs(text: string): string {
  return text.replace(/^\t+/gm, (tabs) => '  '.repeat(tabs.length));
}

/**
 * The text a patch (hunks of `{ oldStart, oldLines, lines }`, lines prefixed with ` `, `-`, `+` or
 * `\` for "No newline at end of file") makes of `text`, or `undefined` when it does not apply.
 */
export function applyPatch(text: string, hunks: readonly unknown[]): string | undefined {
  const finalNewline = text.endsWith('\n');
  const old = text === '' ? [] : (finalNewline ? text.slice(0, -1) : text).split('\n');
  const out: string[] = [];
  let at = 0;
  let reachedEnd = false;
  let newWithoutNewline = false;
  for (const hunk of hunks) {
    const oldStart = numberOf(field(hunk, 'oldStart'));
    const lines = field(hunk, 'lines');
    if (oldStart === undefined || !Array.isArray(lines)) return undefined;
    const start = Math.max(0, oldStart - 1);
    if (start < at || start > old.length) return undefined;
    out.push(...old.slice(at, start));
    at = start;
    let last = '';
    newWithoutNewline = false;
    for (const line of lines) {
      if (typeof line !== 'string' || line === '') return undefined;
      const op = line[0];
      const body = line.slice(1);
      if (op === ' ' || op === '-') {
        if (old[at] !== body) return undefined;
        at += 1;
        if (op === ' ') out.push(body);
      } else if (op === '+') {
        out.push(body);
      } else if (op === '\\') {
        // The line before it ends its file without a newline: the new file's, for a kept or added line.
        if (last === ' ' || last === '+') newWithoutNewline = true;
        continue;
      } else {
        return undefined;
      }
      last = op;
    }
    reachedEnd = at === old.length;
  }
  out.push(...old.slice(at));
  if (out.length === 0) return '';
  const newline = reachedEnd ? !newWithoutNewline : finalNewline;
  return `${out.join('\n')}${newline ? '\n' : ''}`;
}
