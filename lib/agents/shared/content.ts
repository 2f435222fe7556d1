import { field, stringOf } from './events.js';

/**
 * The text of a message's or a tool result's content: a string as it is, or the `text` of its
 * blocks of `blockType` (default `text`) concatenated in order; anything else gives `''`.
 * `blockType: 'thinking'` reads the `thinking` field of thinking blocks.
 */
export function contentText(content: unknown, blockType: 'text' | 'thinking' = 'text'): string {
  if (typeof content === 'string') return blockType === 'text' ? content : '';
  if (!Array.isArray(content)) return '';
  let text = '';
  for (const block of content) {
    if (field(block, 'type') !== blockType) continue;
    text += stringOf(field(block, blockType)) ?? '';
  }
  return text;
}
