import type { CliMessage, ToolContent } from '../../messages.js';
import { sniffImageType } from '../../operators/prompt-parts.js';
import { field, stringOf } from '../shared/events.js';

/**
 * What Codex's tool items give back besides their text, as far as the items hold it:
 * - an MCP tool's result: its `image` blocks (`{ type: 'image', data, mimeType }`, base64);
 * - a file change of `codex app-server`: each new file (`kind.type: 'add'`, whose `diff` is the
 *   file's whole text) as a `diff` with no old text. An update carries only a unified diff, a
 *   delete only the old text: neither gives the text before and after, so neither is content.
 *   `codex exec`'s file changes carry no text at all;
 * - a generated image (`imageGeneration`), when its `result` holds the image inline (base64, or a
 *   `data:` URL); a URL to fetch is not content. An `imageView` item names only the path it read.
 */

/** The images of an MCP tool result's `content` blocks. */
export function mcpImages(content: unknown): ToolContent[] {
  if (!Array.isArray(content)) return [];
  return content.flatMap((block): ToolContent[] => {
    const data = stringOf(field(block, 'data'));
    const mimeType = stringOf(field(block, 'mimeType'));
    return field(block, 'type') === 'image' && data !== undefined && data !== '' && mimeType !== undefined ? [{ type: 'image', data, mimeType }] : [];
  });
}

/** The new files of an app-server file change's `changes`: path and whole text. */
export function addedFiles(changes: readonly unknown[]): ToolContent[] {
  return changes.flatMap((change): ToolContent[] => {
    const path = stringOf(field(change, 'path'));
    const text = stringOf(field(change, 'diff'));
    return field(field(change, 'kind'), 'type') === 'add' && path !== undefined && text !== undefined ? [{ type: 'diff', path, oldText: null, newText: text }] : [];
  });
}

/** A generated image's `result` as content: inline base64 (its type read from its first bytes) or a `data:image/…;base64,` URL. */
export function inlineImage(result: unknown): ToolContent | undefined {
  const text = stringOf(result)?.trim();
  if (text === undefined || text === '') return undefined;
  const url = /^data:(image\/[A-Za-z0-9.+-]+);base64,([A-Za-z0-9+/=\s]+)$/.exec(text);
  if (url !== null) return { type: 'image', mimeType: url[1] ?? '', data: (url[2] ?? '').replace(/\s+/g, '') };
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text) || text.length % 4 !== 0) return undefined;
  const mimeType = sniffImageType(headBytes(text));
  return mimeType === undefined ? undefined : { type: 'image', data: text, mimeType };
}

/** The first bytes of base64 text (enough to tell an image's type). */
function headBytes(base64: string): Uint8Array {
  const binary = atob(base64.slice(0, 24));
  return Uint8Array.from(binary, (char) => char.charCodeAt(0));
}

/** The messages of a tool's result with `content` on its `tool.completed` (none when there is no content). */
export function withContent(messages: readonly CliMessage[], content: readonly ToolContent[]): CliMessage[] {
  if (content.length === 0) return [...messages];
  return messages.map((message) => (message.type === 'tool.completed' ? { ...message, content: [...content] } : message));
}
