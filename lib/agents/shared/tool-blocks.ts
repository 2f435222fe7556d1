import type { CliMessage } from '../../messages.js';
import { contentText } from './content.js';
import { field, stringOf } from './events.js';
import type { ToolCalls } from './tool-calls.js';

// The tool blocks of Anthropic-shaped messages, as Claude Code and Qwen Code print them.

/** The calls among an assistant message's content blocks (`tool_use { id, name, input }`), each announced once. */
export function toolUseMessages(tools: ToolCalls, content: readonly unknown[]): CliMessage[] {
  const messages: CliMessage[] = [];
  for (const block of content) {
    const id = stringOf(field(block, 'id'));
    const name = stringOf(field(block, 'name'));
    if (field(block, 'type') === 'tool_use' && id !== undefined && name !== undefined) messages.push(...tools.call(id, name, field(block, 'input')));
  }
  return messages;
}

/** The results among a user message's content blocks (`tool_result { tool_use_id, is_error, content }`), each once. */
export function toolResultMessages(tools: ToolCalls, content: string | readonly unknown[] | undefined): CliMessage[] {
  if (content === undefined || typeof content === 'string') return [];
  const messages: CliMessage[] = [];
  for (const block of content) {
    const id = stringOf(field(block, 'tool_use_id'));
    if (field(block, 'type') !== 'tool_result' || id === undefined) continue;
    messages.push(...tools.result(id, undefined, contentText(field(block, 'content')), field(block, 'is_error') === true));
  }
  return messages;
}
