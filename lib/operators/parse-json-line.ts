import { defer, map, filter, type OperatorFunction } from 'rxjs';
import type { ProcessItem } from '../process/items.js';
import type { AgentEvent, EventItem, InvalidLineItem, RunExit, StderrLineItem } from './items.js';
import { checkFunction, isObject, property, shown } from './validate.js';

/** Something with zod's `safeParse` (a zod schema). */
export interface EventValidator {
  /** Validates an event: success, or the issues found (the first goes into the invalid item's `detail`). */
  safeParse(value: unknown): { success: true } | { success: false; error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] } };
}

/** Options of {@link parseJsonLine}. */
export interface ParseJsonLineOptions {
  /**
   * Validators for known event types. An event whose `type` is listed must pass its validator or
   * becomes an invalid item; other types pass through untouched.
   */
  readonly schemas?: Readonly<Record<string, EventValidator>>;
  /**
   * Parses one line. Default `JSON.parse`. A replacement must throw where `JSON.parse` throws and
   * return what it would (deep-equal): a dialect uses it for a fast path on a line shape it knows
   * (pi: `parsePiLine`, which parses a message repeated twice in a line only once). A protocol
   * whose messages carry no `type` (JSON-RPC) may add one to the object, naming its kind
   * (`parseJsonRpcLine`).
   */
  readonly parse?: (text: string) => unknown;
  /**
   * Parses one line given as bytes (`line-bytes` items, which `processLines` emits with
   * `lineEncoding: 'buffer'`), in the pieces the pipe delivered it. It returns the event, or
   * `undefined` when it leaves the line to the default: decode it as UTF-8 and `parse` it. Unlike
   * `parse`, it may return the event as the dialect reads it rather than whole (pi: `parsePiBytes`
   * leaves out the two copies of the message snapshot that every `message_update` line repeats).
   * What it throws is taken as a parse error of the line (a `not-json` item).
   */
  readonly parseBytes?: (chunks: readonly Buffer[]) => unknown;
}

/** What {@link parseJsonLine} emits: events, invalid lines, and what passes through (stderr lines, the exit). */
export type ParsedItem = EventItem | InvalidLineItem | StderrLineItem | RunExit;

/**
 * Turns stdout lines (as text, or as bytes) into parsed events, or invalid items that say why
 * (`not-json`, `not-object`, `no-type`, `too-long`, `invalid-event`). Blank lines are skipped, the
 * exit item passes through, and bad output never errors the stream. What `parse` throws is taken as
 * `JSON.parse` throwing (a `not-json` item); a validator that throws errors the stream with that
 * error (a bug, not bad output).
 *
 * ```
 * source:  -l1--l2--l3--x|      l1 = '{"type":"a"}', l2 = 'oops', l3 = '', x = exit
 * result:  -e1--i2------x|      e1 = { kind: 'event' }, i2 = { kind: 'invalid', reason: 'not-json' }
 * ```
 *
 * @example
 * processLines('pi', ['--mode', 'json']).pipe(parseJsonLine()).subscribe((item) => {
 *   if (item.kind === 'event') console.log(item.event.type);
 * });
 */
export function parseJsonLine(options: ParseJsonLineOptions = {}): OperatorFunction<ProcessItem, ParsedItem> {
  if (!isObject(options)) throw new TypeError(`agent-rx: parseJsonLine takes an options object; got ${shown(options)}`);
  const schemas = options.schemas ?? {};
  const parse = options.parse ?? parseJson;
  const parseBytes = options.parseBytes;
  if (!isObject(schemas)) throw new TypeError(`agent-rx: schemas must be an object of validators by event type; got ${shown(schemas)}`);
  for (const [type, schema] of Object.entries(schemas)) {
    if (!isObject(schema) || typeof property(schema, 'safeParse') !== 'function') {
      throw new TypeError(`agent-rx: schemas[${JSON.stringify(type)}] must have a safeParse function (a zod schema); got ${shown(schema)}`);
    }
  }
  checkFunction(parse, 'parse');
  if (parseBytes !== undefined) checkFunction(parseBytes, 'parseBytes');
  return (source) =>
    defer(() => {
      let lineNumber = 0;
      return source.pipe(
        map((item): ParsedItem | null => {
          // Stderr lines are not stdout lines: passed on as they are, not counted.
          if (item.kind === 'exit' || item.kind === 'stderr-line') return item;
          lineNumber += 1;
          if (item.kind === 'line-too-long') {
            return invalid(lineNumber, 'too-long', `line of ${item.bytes} bytes is over the limit`, item.head, item.bytes);
          }
          if (item.kind === 'line-bytes') return parseBytesLine(item.chunks, lineNumber, schemas, parse, parseBytes);
          return parseLine(item.text, lineNumber, schemas, parse);
        }),
        filter((item): item is ParsedItem => item !== null),
      );
    });
}

type Schemas = Readonly<Record<string, EventValidator>>;

function parseLine(text: string, lineNumber: number, schemas: Schemas, parse: (text: string) => unknown): ParsedItem | null {
  if (text.trim() === '') return null;
  let value: unknown;
  try {
    value = parse(text);
  } catch (error) {
    return invalid(lineNumber, 'not-json', errorText(error), text);
  }
  return checkValue(value, text, lineNumber, schemas);
}

function parseBytesLine(
  chunks: readonly Buffer[],
  lineNumber: number,
  schemas: Schemas,
  parse: (text: string) => unknown,
  parseBytes: ((chunks: readonly Buffer[]) => unknown) | undefined,
): ParsedItem | null {
  // A line that starts with a character other than white space is not blank: no need to decode it.
  const first = chunks.find((chunk) => chunk.length > 0)?.[0];
  if (first === undefined || first <= 0x20 || first >= 0x80) {
    if (decode(chunks).trim() === '') return null;
  }
  if (parseBytes !== undefined) {
    let value: unknown;
    try {
      value = parseBytes(chunks);
    } catch (error) {
      return invalid(lineNumber, 'not-json', errorText(error), decode(chunks));
    }
    if (value !== undefined) return checkValue(value, () => decode(chunks), lineNumber, schemas);
  }
  return parseLine(decode(chunks), lineNumber, schemas, parse);
}

function checkValue(value: unknown, line: string | (() => string), lineNumber: number, schemas: Schemas): ParsedItem {
  const text = (): string => (typeof line === 'string' ? line : line());
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return invalid(lineNumber, 'not-object', `a JSON ${value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value}, not an object`, text());
  }
  const type = (value as { type?: unknown }).type;
  if (typeof type !== 'string') return invalid(lineNumber, 'no-type', 'the object has no string "type"', text());
  const schema = Object.hasOwn(schemas, type) ? schemas[type] : undefined;
  if (schema !== undefined) {
    const result = schema.safeParse(value);
    if (!result.success) {
      const issue = result.error.issues[0];
      const where = issue === undefined || issue.path.length === 0 ? '' : `${issue.path.map(String).join('.')}: `;
      return invalid(lineNumber, 'invalid-event', `"${type}" event: ${where}${issue?.message ?? 'invalid'}`, text());
    }
  }
  return { kind: 'event', event: value as AgentEvent, lineNumber };
}

function invalid(lineNumber: number, reason: InvalidLineItem['reason'], detail: string, text: string, bytes?: number): InvalidLineItem {
  return { kind: 'invalid', lineNumber, reason, detail, text, bytes: bytes ?? Buffer.byteLength(text) };
}

function parseJson(text: string): unknown {
  return JSON.parse(text);
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A line's bytes decoded as UTF-8 (a multi-byte character split between two pieces stays whole). */
function decode(chunks: readonly Buffer[]): string {
  return chunks.length === 1 ? (chunks[0] as Buffer).toString('utf8') : Buffer.concat(chunks).toString('utf8');
}
