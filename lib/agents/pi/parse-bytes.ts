import { ByteLine } from '../shared/byte-line.js';
import type { PiEventOf } from './events.js';

const HEAD = Buffer.from('{"type":"message_update","assistantMessageEvent":{');
const TAIL = Buffer.from('},"message":');
const PARTIAL = Buffer.from('"partial"');
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
/** How many members at the end of the message are looked at for its `timestamp`. */
const TAIL_MEMBERS = 16;

/**
 * pi's byte-level line parser, for `parseJsonLine`'s `parseBytes` (lines that `processLines` emits
 * undecoded, with `lineEncoding: 'buffer'`). A `message_update` line repeats the whole message so
 * far twice: `{"type":"message_update","assistantMessageEvent":{…,"partial":M},"message":M}`, so
 * pi's output grows with the square of the answer. For that exact shape this reads the line in
 * place, without decoding or parsing M, and returns the event as the pi dialect reads it:
 * `assistantMessageEvent` without `partial` (parsed by `JSON.parse`, so the delta is exact), and
 * `message` holding only the `timestamp` that names the message. The deltas and `message_end`
 * (parsed whole) carry everything the messages need.
 *
 * What it checks before taking that path: the members before `partial` parse as JSON; the two
 * copies of M are byte-identical and each is one object (its brackets match, strings skipped); the
 * line ends right after the second; M's last members are plain values and one is a numeric `timestamp` (the last one wins,
 * as in `JSON.parse`); and a `text_delta` or `thinking_delta` event has a string `delta` (pi
 * versions that send snapshots only are read from M). The inside of M's strings is not read: a line
 * whose two copies of M are equal and well bracketed but not valid JSON (a raw control character
 * or a bad escape inside a string) still yields its delta, where `JSON.parse` would have rejected
 * the line. Any other line gives `undefined`, and `parseJsonLine` decodes and parses
 * it whole.
 *
 * @example
 * processLines('pi', args, { lineEncoding: 'buffer' })
 *   .pipe(parseJsonLine({ schemas: piEventSchemas, parse: parsePiLine, parseBytes: parsePiBytes }));
 */
export function parsePiBytes(chunks: readonly Buffer[]): PiEventOf<'message_update'> | undefined {
  const line = new ByteLine(chunks);
  if (!line.startsWith(HEAD, 0)) return undefined;
  // The members of assistantMessageEvent before "partial" (type, contentIndex, delta, toolCall...).
  let at = HEAD.length;
  for (;;) {
    if (line.at(at) !== QUOTE) return undefined;
    const keyEnd = skipString(line, at);
    if (keyEnd === -1 || line.at(keyEnd) !== COLON) return undefined;
    if (keyEnd - at === PARTIAL.length && line.startsWith(PARTIAL, at)) break;
    const valueEnd = skipValue(line, keyEnd + 1);
    if (valueEnd === -1 || line.at(valueEnd) !== COMMA) return undefined;
    at = valueEnd + 1;
  }
  // The rest is  M + '},"message":' + M + '}'  with the same M twice.
  const snapshotAt = at + PARTIAL.length + 1;
  const rest = line.length - snapshotAt - TAIL.length - 1;
  if (rest <= 0 || rest % 2 !== 0) return undefined;
  const size = rest / 2;
  const messageAt = snapshotAt + size + TAIL.length;
  if (line.at(line.length - 1) !== CLOSE_BRACE || !line.startsWith(TAIL, snapshotAt + size)) return undefined;
  if (line.at(snapshotAt) !== OPEN_BRACE || !line.equal(snapshotAt, messageAt, size)) return undefined;
  // M is one object: its brackets matched, strings skipped natively (a quote to the next), so the
  // text inside it costs no decoding and almost no looking. Without this a line with members after
  // "partial" could pass for the shape.
  if (skipValue(line, snapshotAt) !== snapshotAt + size) return undefined;
  const timestamp = lastNumberMember(line, messageAt, messageAt + size, 'timestamp');
  if (timestamp === undefined) return undefined;
  // The envelope without "partial": the members before it, closed, parsed by JSON.parse.
  const membersEnd = at === HEAD.length ? at : at - 1;
  let envelope: { type?: unknown; assistantMessageEvent?: { type?: unknown; delta?: unknown }; message?: unknown };
  try {
    envelope = JSON.parse(`${line.text(0, membersEnd)}}}`) as typeof envelope;
  } catch {
    return undefined;
  }
  const event = envelope.assistantMessageEvent;
  if (event === undefined || ((event.type === 'text_delta' || event.type === 'thinking_delta') && typeof event.delta !== 'string')) {
    return undefined;
  }
  envelope.message = { timestamp };
  return envelope as PiEventOf<'message_update'>;
}

/** The index just after the JSON string that starts at `at` (a quote), or -1. */
function skipString(line: ByteLine, at: number): number {
  let quote = line.indexOf(QUOTE, at + 1);
  while (quote !== -1) {
    if (backslashesBefore(line, quote) % 2 === 0) return quote + 1;
    quote = line.indexOf(QUOTE, quote + 1);
  }
  return -1;
}

/**
 * The index just after the JSON value that starts at `at`, or -1. Exact for valid JSON; whether
 * it is valid is then decided by `JSON.parse` of the members.
 */
function skipValue(line: ByteLine, at: number): number {
  const first = line.at(at);
  if (first === QUOTE) return skipString(line, at);
  if (first === OPEN_BRACE || first === OPEN_BRACKET) {
    let depth = 0;
    for (let i = at; i < line.length; i += 1) {
      const code = line.at(i);
      if (code === QUOTE) {
        const end = skipString(line, i);
        if (end === -1) return -1;
        i = end - 1;
      } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
        depth += 1;
      } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
        depth -= 1;
        if (depth === 0) return i + 1;
      }
    }
    return -1;
  }
  let i = at;
  while (isScalar(line.at(i))) i += 1;
  return i === at ? -1 : i;
}

/**
 * The value of member `key` of the object at [start, end), found by walking its members backward
 * from the end over plain values (strings, numbers, true, false, null); `undefined` when a nested
 * value comes first, the key is absent, or its value is not a number. The last member with that
 * key is the one `JSON.parse` keeps.
 */
function lastNumberMember(line: ByteLine, start: number, end: number, key: string): number | undefined {
  // `next` is the index of the delimiter after the member's value: the closing brace, then commas.
  let next = end - 1;
  for (let member = 0; member < TAIL_MEMBERS; member += 1) {
    const last = line.at(next - 1);
    let valueAt: number;
    if (last === QUOTE) {
      valueAt = openingQuote(line, next - 1, start);
    } else if (isScalar(last)) {
      valueAt = next - 1;
      while (valueAt > start && isScalar(line.at(valueAt - 1))) valueAt -= 1;
    } else {
      return undefined;
    }
    if (valueAt <= start || line.at(valueAt - 1) !== COLON || line.at(valueAt - 2) !== QUOTE) return undefined;
    const keyAt = openingQuote(line, valueAt - 2, start);
    if (keyAt <= start) return undefined;
    const name = parsed(line.text(keyAt, valueAt - 1));
    if (name === key) {
      const value = last === QUOTE ? undefined : parsed(line.text(valueAt, next));
      return typeof value === 'number' ? value : undefined;
    }
    if (line.at(keyAt - 1) !== COMMA) return undefined;
    next = keyAt - 1;
  }
  return undefined;
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The index of the quote that opens the string closed at `close`, not before `min`; -1 if none. */
function openingQuote(line: ByteLine, close: number, min: number): number {
  // Inside a JSON string every quote is escaped (an odd run of backslashes before it).
  let quote = line.lastIndexOf(QUOTE, close - 1);
  while (quote >= min) {
    if (backslashesBefore(line, quote) % 2 === 0) return quote;
    quote = line.lastIndexOf(QUOTE, quote - 1);
  }
  return -1;
}

function backslashesBefore(line: ByteLine, at: number): number {
  let count = 0;
  while (line.at(at - 1 - count) === BACKSLASH) count += 1;
  return count;
}

/** A byte of a number, true, false or null. */
function isScalar(code: number): boolean {
  return (code >= 0x30 && code <= 0x39) || (code >= 0x61 && code <= 0x7a) || (code >= 0x41 && code <= 0x5a) || code === 0x2e || code === 0x2b || code === 0x2d;
}
