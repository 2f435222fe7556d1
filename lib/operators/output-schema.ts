import * as z from 'zod';
import type { JsonSchemaObject, OutputIssue } from '../messages.js';

/**
 * An `outputSchema` made ready for a run or a turn: the zod schema that validates the answer (a
 * JSON Schema object is converted), and the JSON Schema the agent is given (natively, or in its
 * prompt).
 */
export interface OutputContract {
  readonly validator: z.ZodType;
  readonly jsonSchema: JsonSchemaObject;
}

/** The output type of an {@link OutputSchema}: a zod schema's output, `unknown` for a JSON Schema object. */
export type OutputOf<S> = S extends z.ZodType<infer T> ? T : unknown;

/**
 * Makes an `outputSchema` ready; throws a `TypeError` for a value that is neither a zod schema nor a
 * JSON Schema zod can read, or a zod schema with no JSON Schema form (a transform, a function).
 */
export function outputContract(schema: unknown, what = 'outputSchema'): OutputContract {
  if (schema instanceof z.ZodType) {
    let jsonSchema: JsonSchemaObject;
    try {
      jsonSchema = z.toJSONSchema(schema, { io: 'output', unrepresentable: 'throw' });
    } catch (error) {
      throw new TypeError(`agent-rx: ${what} has no JSON Schema form: ${(error as Error).message}`, { cause: error });
    }
    return { validator: schema, jsonSchema: withoutMeta(jsonSchema) };
  }
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) throw new TypeError(`agent-rx: ${what} must be a zod schema or a JSON Schema object`);
  let validator: z.ZodType;
  try {
    validator = z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
  } catch (error) {
    throw new TypeError(`agent-rx: ${what} is not a JSON Schema zod can read: ${(error as Error).message}`, { cause: error });
  }
  return { validator, jsonSchema: withoutMeta(schema as JsonSchemaObject) };
}

function withoutMeta(schema: JsonSchemaObject): JsonSchemaObject {
  const { $schema: _dialect, ...rest } = schema;
  return rest;
}

/** The outcome of checking an answer: the parsed, validated value, or the issues. */
export type OutputCheck = { readonly ok: true; readonly output: unknown } | { readonly ok: false; readonly issues: readonly OutputIssue[] };

/**
 * Checks an answer against the contract. `structured` is a value the agent gave as structured
 * output (Claude Code's `structured_output`); otherwise the JSON is found in `text`: the whole text,
 * else the last fenced code block, else the last `{…}` or `[…]` span that parses.
 */
export function checkOutput(contract: OutputContract, text: string, structured?: { readonly value: unknown }): OutputCheck {
  let candidate: unknown;
  if (structured !== undefined) {
    candidate = structured.value;
  } else {
    const found = jsonAnswer(text);
    if (found === undefined) {
      return { ok: false, issues: [{ path: '', message: text.trim() === '' ? 'the answer is empty: no JSON value' : 'the answer holds no JSON value' }] };
    }
    candidate = found.value;
  }
  const parsed = contract.validator.safeParse(candidate);
  if (parsed.success) return { ok: true, output: parsed.data };
  return { ok: false, issues: parsed.error.issues.map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message })) };
}

/** The JSON value an answer holds, if any (see {@link checkOutput}). */
export function jsonAnswer(text: string): { readonly value: unknown } | undefined {
  const whole = parse(text.trim());
  if (whole !== undefined) return whole;
  const fences = [...text.matchAll(/```[a-zA-Z0-9_-]*[ \t]*\n([\s\S]*?)```/g)];
  for (const fence of fences.reverse()) {
    const value = parse((fence[1] ?? '').trim());
    if (value !== undefined) return value;
  }
  // The last balanced object or array that parses.
  for (let end = text.length - 1; end >= 0; end -= 1) {
    const close = text[end];
    if (close !== '}' && close !== ']') continue;
    const open = close === '}' ? '{' : '[';
    for (let start = text.lastIndexOf(open, end); start >= 0; start = start === 0 ? -1 : text.lastIndexOf(open, start - 1)) {
      const value = parse(text.slice(start, end + 1));
      if (value !== undefined) return value;
    }
  }
  return undefined;
}

function parse(text: string): { readonly value: unknown } | undefined {
  if (text === '' || !/^[[{"\-0-9tfn]/.test(text)) return undefined;
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return undefined;
  }
}

/**
 * What an agent without native structured output is told after its prompt: answer with one JSON
 * value that satisfies the schema, and nothing else.
 */
export function outputInstruction(contract: OutputContract): string {
  return [
    'Answer with a single JSON value that satisfies the JSON Schema below, and nothing else: no prose before or after it, no code fence.',
    JSON.stringify(contract.jsonSchema),
  ].join('\n');
}

/** The longest answer a failure keeps (`answer`), in characters. */
export const MAX_FAILED_ANSWER_CHARS = 16_384;

/** An answer cut to {@link MAX_FAILED_ANSWER_CHARS} for a failure message. */
export function boundedAnswer(text: string): string {
  return text.length <= MAX_FAILED_ANSWER_CHARS ? text : `${text.slice(0, MAX_FAILED_ANSWER_CHARS)}…`;
}

/** The failure message of an answer that did not validate. */
export function outputFailureMessage(issues: readonly OutputIssue[]): string {
  const first = issues[0];
  const said = first === undefined ? 'it did not validate' : `${first.path === '' ? '' : `${first.path}: `}${first.message}`;
  return `the answer does not satisfy outputSchema: ${said}${issues.length > 1 ? ` (and ${issues.length - 1} more)` : ''}`;
}
