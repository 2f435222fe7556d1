import { defer, map, filter, type OperatorFunction } from 'rxjs';
import type { ProcessItem } from '../process/items.js';
import type { AgentEvent, EventItem, InvalidLineItem, RunExit, StderrLineItem } from './items.js';
import { checkFunction, isObject, property, shown } from './validate.js';

/** Something with zod's `safeParse` (a zod schema). */
export interface EventValidator {
  safeParse(value: unknown): { success: true } | { success: false; error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] } };
}

export interface ParseJsonLineOptions {
  /**
   * Validators for known event types. An event whose `type` is listed must pass its validator or
   * becomes an invalid item; other types pass through untouched.
   */
  readonly schemas?: Readonly<Record<string, EventValidator>>;
  /**
   * Parses one line. Default `JSON.parse`. A replacement must return what `JSON.parse` would
   * (deep-equal) and throw where it throws; a dialect uses it for a fast path on a line shape it
   * knows (pi: `parsePiLine`, which parses a message repeated twice in a line only once).
   */
  readonly parse?: (text: string) => unknown;
}

export type ParsedItem = EventItem | InvalidLineItem | StderrLineItem | RunExit;

/**
 * Turns stdout lines into parsed events, or invalid items that say why (`not-json`,
 * `not-object`, `no-type`, `too-long`, `invalid-event`). Blank lines are skipped, the exit item
 * passes through, and bad output never errors the stream. What `parse` throws is taken as
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
  if (!isObject(schemas)) throw new TypeError(`agent-rx: schemas must be an object of validators by event type; got ${shown(schemas)}`);
  for (const [type, schema] of Object.entries(schemas)) {
    if (!isObject(schema) || typeof property(schema, 'safeParse') !== 'function') {
      throw new TypeError(`agent-rx: schemas[${JSON.stringify(type)}] must have a safeParse function (a zod schema); got ${shown(schema)}`);
    }
  }
  checkFunction(parse, 'parse');
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
          return parseLine(item.text, lineNumber, schemas, parse);
        }),
        filter((item): item is ParsedItem => item !== null),
      );
    });
}

function parseLine(
  text: string,
  lineNumber: number,
  schemas: Readonly<Record<string, EventValidator>>,
  parse: (text: string) => unknown,
): ParsedItem | null {
  if (text.trim() === '') return null;
  let value: unknown;
  try {
    value = parse(text);
  } catch (error) {
    return invalid(lineNumber, 'not-json', error instanceof Error ? error.message : String(error), text);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return invalid(lineNumber, 'not-object', `a JSON ${value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value}, not an object`, text);
  }
  const type = (value as { type?: unknown }).type;
  if (typeof type !== 'string') return invalid(lineNumber, 'no-type', 'the object has no string "type"', text);
  const schema = Object.hasOwn(schemas, type) ? schemas[type] : undefined;
  if (schema !== undefined) {
    const result = schema.safeParse(value);
    if (!result.success) {
      const issue = result.error.issues[0];
      const where = issue === undefined || issue.path.length === 0 ? '' : `${issue.path.map(String).join('.')}: `;
      return invalid(lineNumber, 'invalid-event', `"${type}" event: ${where}${issue?.message ?? 'invalid'}`, text);
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
