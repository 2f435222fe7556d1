// A tool defined in TypeScript by the host, and how one call of it is answered: its input checked
// with its schema, its `run` called with a signal, whatever `run` does made into a tool result.
import { isObservable, Subscription, type Observable } from 'rxjs';
import * as z from 'zod';
import { errorMessage } from '../process/error-message.js';

/** What a host tool's `run` is given besides its input. */
export interface ToolRunContext {
  /**
   * Fires when the call is no longer wanted: its turn was aborted or ended, or the run or session
   * ended (unsubscribed, stopped, done). The answer given after it is not seen by the agent.
   */
  readonly signal: AbortSignal;
}

/**
 * What a host tool's `run` gives: a string (the text the agent reads), or any JSON value (the
 * agent reads it as JSON; an object is also the result's `structuredContent`). A value, a promise
 * or an Observable (its first value; the rest is not awaited).
 */
export type ToolAnswer = unknown;

/** A tool of the host's own, served to the agent of a run or session that has it in `tools`. Made with {@link tool}. */
export interface HostTool<Input = Record<string, unknown>> {
  /** Its name: letters, digits, `_` and `-`, starting with a letter, at most 48. The agent sees it as `mcp__host__<name>`. */
  readonly name: string;
  /** What it does, for the model. */
  readonly description: string;
  /** The schema of its input: a zod object schema. The agent is told its JSON Schema. */
  readonly input: z.ZodType<Input>;
  /** Answers one call, with the input checked by `input`: a {@link ToolAnswer}, a promise of one, or an Observable (its first value). */
  run(input: Input, context: ToolRunContext): unknown;
}

/** What {@link tool} takes. */
export interface ToolDefinition<Schema extends z.ZodType<Record<string, unknown>>> {
  readonly name: string;
  readonly description: string;
  readonly input: Schema;
  /** Answers one call: a {@link ToolAnswer}, a promise of one, or an Observable (its first value). */
  run(input: z.output<Schema>, context: ToolRunContext): unknown;
}

/** What a host tool's name may be. */
export const HOST_TOOL_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,47}$/;

/**
 * A tool of the host's, for the `tools` option of any agent's runs and sessions: the library serves
 * it to the agent through a local MCP server made for the run and stopped with it. The agent's call
 * is in the stream as any tool's (`tool.call` … `tool.completed` / `tool.failed`, named
 * `mcp__host__<name>`). The input is checked with `input` before `run` is called: an input that
 * does not satisfy it, and a `run` that throws or rejects, are a tool error the agent reads, never
 * an error of the stream. `run` gets a signal that fires when its call is no longer wanted.
 * Throws `TypeError` for a bad name, or an input schema that is not an object's.
 *
 * @example
 * const lookupOrder = tool({
 *   name: 'lookup_order',
 *   description: 'Looks an order up by its id',
 *   input: z.object({ orderId: z.string() }),
 *   run: async ({ orderId }, { signal }) => (await fetch(`http://127.0.0.1:8080/orders/${orderId}`, { signal })).json(),
 * });
 * runClaudeCode({ prompt: 'Where is order A-17?', tools: [lookupOrder] }).subscribe(render);
 */
export function tool<Schema extends z.ZodType<Record<string, unknown>>>(definition: ToolDefinition<Schema>): HostTool<z.output<Schema>> {
  const { name, description, input } = definition;
  if (typeof name !== 'string' || !HOST_TOOL_NAME.test(name)) {
    throw new TypeError(`agent-rx: a tool's name must start with a letter and hold only letters, digits, _ and - (at most 48); got ${JSON.stringify(name)}`);
  }
  if (typeof description !== 'string' || description.trim() === '') throw new TypeError(`agent-rx: tool ${name} needs a description`);
  if (!(input instanceof z.ZodType)) throw new TypeError(`agent-rx: tool ${name}'s input must be a zod schema`);
  if (toolInputSchema(input)['type'] !== 'object') throw new TypeError(`agent-rx: tool ${name}'s input must be an object schema (z.object(...))`);
  if (typeof definition.run !== 'function') throw new TypeError(`agent-rx: tool ${name} needs a run function`);
  return Object.freeze({ name, description, input: input as unknown as z.ZodType<z.output<Schema>>, run: (value: z.output<Schema>, context: ToolRunContext) => definition.run(value, context) });
}

/** Whether `value` is a tool made with {@link tool}. */
export function isHostTool(value: unknown): value is HostTool<unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Partial<HostTool<unknown>>;
  return typeof candidate.name === 'string' && typeof candidate.description === 'string' && candidate.input instanceof z.ZodType && typeof candidate.run === 'function';
}

/** The JSON Schema of a tool's input, as the agent is told it. */
export function toolInputSchema(input: z.ZodType): Record<string, unknown> {
  try {
    return z.toJSONSchema(input, { io: 'input', unrepresentable: 'any' });
  } catch {
    return { type: 'object' };
  }
}

/** One MCP tool result: its text (and the structured value, for an object). */
export interface HostToolResult {
  readonly content: { readonly type: 'text'; readonly text: string }[];
  readonly structuredContent?: Record<string, unknown>;
  readonly isError?: true;
}

/** A tool error the agent reads. */
export function toolError(text: string): HostToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

/** `JSON.stringify`, which gives `undefined` for a function or a symbol. */
const jsonText: (value: unknown) => string | undefined = JSON.stringify;

/** An answer of `run` as a tool result. */
export function toolResult(answer: ToolAnswer): HostToolResult {
  if (typeof answer === 'string') return { content: [{ type: 'text', text: answer }] };
  if (answer === undefined) return { content: [{ type: 'text', text: 'Done.' }] };
  let text: string | undefined;
  try {
    text = jsonText(answer);
  } catch (error) {
    return toolError(`the tool's answer is not JSON: ${errorMessage(error)}`);
  }
  if (text === undefined) return toolError("the tool's answer is not JSON");
  const structured = typeof answer === 'object' && answer !== null && !Array.isArray(answer) ? { structuredContent: JSON.parse(text) as Record<string, unknown> } : {};
  return { content: [{ type: 'text', text }], ...structured };
}

/**
 * Answers one call of `hostTool` with `args`: the input checked, `run` called with `signal`, its
 * answer (or its failure, or the end of the call when `signal` fires first) made a tool result.
 * Never rejects.
 */
export async function callHostTool(hostTool: HostTool<unknown>, args: unknown, signal: AbortSignal): Promise<HostToolResult> {
  let input: unknown;
  try {
    const parsed = hostTool.input.safeParse(args ?? {});
    if (!parsed.success) {
      const issues = parsed.error.issues.map((issue) => `${issue.path.length === 0 ? 'input' : issue.path.map(String).join('.')}: ${issue.message}`);
      return toolError(`Invalid input for ${hostTool.name}: ${issues.join('; ')}`);
    }
    input = parsed.data;
  } catch (error) {
    return toolError(`Invalid input for ${hostTool.name}: ${errorMessage(error)}`);
  }
  if (signal.aborted) return toolError(`${hostTool.name} was not run: ${reasonText(signal)}`);
  const ended = new Promise<HostToolResult>((resolve) => {
    signal.addEventListener('abort', () => { resolve(toolError(`${hostTool.name} was ended: ${reasonText(signal)}`)); }, { once: true });
  });
  const answered = (async (): Promise<HostToolResult> => {
    try {
      const answer = hostTool.run(input, { signal });
      if (isObservable(answer)) return toolResult(await firstOf(answer, signal));
      return toolResult(await answer);
    } catch (error) {
      return toolError(`${hostTool.name} failed: ${errorMessage(error)}`);
    }
  })();
  return Promise.race([answered, ended]);
}

/** The first value of `answer$`; unsubscribed once it has one, or when `signal` fires. */
function firstOf(answer$: Observable<unknown>, signal: AbortSignal): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const subscription = new Subscription();
    subscription.add(
      answer$.subscribe({
        next: (value) => {
          resolve(value);
          subscription.unsubscribe();
        },
        error: reject,
        complete: () => {
          reject(new Error('it completed without an answer'));
        },
      }),
    );
    signal.addEventListener('abort', () => {
      subscription.unsubscribe();
    }, { once: true });
  });
}

function reasonText(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  return typeof reason === 'string' ? reason : reason instanceof Error ? reason.message : 'the call was cancelled';
}
