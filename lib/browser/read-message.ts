import type * as z from 'zod';
import type { InvalidOutputLine, SessionMessage } from '../messages.js';

/** The data of one server-sent event, read as a message or kept as an invalid one. */
export type ReadMessage<T extends SessionMessage> = { readonly kind: 'message'; readonly message: T } | { readonly kind: 'invalid'; readonly line: InvalidOutputLine };

// The same bounds as `collectInvalidLines` keeps for a run's stdout.
export const MAX_INVALID_MESSAGES = 50;
export const MAX_INVALID_MESSAGE_BYTES = 2048;

// Parses one event's data and validates it with `schema` (whose messages are `noun`s); never
// throws. `position` is the event's 1-based number.
export function readMessage<T extends SessionMessage>(data: unknown, position: number, schema: z.ZodType<T>, noun: string): ReadMessage<T> {
  const text = typeof data === 'string' ? data : String(data);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return invalid(position, 'not-json', error instanceof Error ? error.message : String(error), text);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return invalid(position, 'not-object', 'not a JSON object', text);
  const type: unknown = (value as { type?: unknown }).type;
  if (typeof type !== 'string') return invalid(position, 'no-type', 'no string "type" field', text);
  const parsed = schema.safeParse(value);
  if (parsed.success) return { kind: 'message', message: parsed.data };
  const issue = parsed.error.issues[0];
  const detail =
    issue === undefined
      ? `not a ${noun}`
      : issue.code === 'invalid_union' && issue.path.join('.') === 'type'
        ? `unknown message type '${type}'`
        : `${issue.path.length === 0 ? '(message)' : issue.path.join('.')}: ${issue.message}`;
  return invalid(position, 'invalid-event', detail, text);
}

function invalid(lineNumber: number, reason: InvalidOutputLine['reason'], detail: string, text: string): ReadMessage<never> {
  const bytes = utf8Length(text);
  const kept = bytes <= MAX_INVALID_MESSAGE_BYTES ? text : utf8Head(text, MAX_INVALID_MESSAGE_BYTES);
  return { kind: 'invalid', line: { lineNumber, reason, detail, text: kept, bytes, truncated: kept !== text } };
}

// UTF-8 sizes without TextEncoder or Buffer, so this runs anywhere (a lone surrogate counts as U+FFFD).
function utf8Length(text: string): number {
  let bytes = 0;
  for (const char of text) bytes += charBytes(char);
  return bytes;
}

// The longest prefix of whole characters that fits in `maxBytes`.
function utf8Head(text: string, maxBytes: number): string {
  let bytes = 0;
  let end = 0;
  for (const char of text) {
    bytes += charBytes(char);
    if (bytes > maxBytes) break;
    end += char.length;
  }
  return text.slice(0, end);
}

function charBytes(char: string): number {
  const code = char.codePointAt(0) ?? 0;
  return code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
}
