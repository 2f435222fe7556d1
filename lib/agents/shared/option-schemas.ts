// The pieces of the agents' option schemas, and the call-time check that turns a schema's refusal
// into a `TypeError` that names the option.
import * as z from 'zod';
import { isPermissionPolicy, type PermissionPolicy } from '../../operators/permission-policy.js';
import { isHostTool, type HostTool } from '../../tools/host-tool.js';
import type { ConversationStore } from '../../sessions/conversation-snapshot.js';
import { MCP_SERVER_NAME, McpServersSchema } from '../../tools/mcp-servers.js';
import { ImageMimeTypeSchema, OutputSchemaSchema, type ImageMimeType, type JsonSchemaObject, type Prompt } from '../../messages.js';

/** A non-empty string. */
export const text = (): z.ZodString => z.string({ error: 'must be a non-empty string' }).min(1, { error: 'must be a non-empty string' });

/** An array of strings. */
export const texts = (): z.ZodArray<z.ZodString> => z.array(z.string({ error: 'must be an array of strings' }), { error: 'must be an array of strings' });

/** A boolean. */
export const flag = (): z.ZodBoolean => z.boolean({ error: 'must be a boolean' });

/** One of `values`. */
export const oneOf = <const T extends readonly [string, ...string[]]>(values: T): z.ZodEnum<{ [K in T[number]]: K }> =>
  z.enum(values, { error: `must be one of ${values.join(', ')}` });

/** An integer >= `min`. */
export const integer = (min: number): z.ZodNumber => z.number({ error: `must be an integer >= ${min}` }).int({ error: `must be an integer >= ${min}` }).min(min, { error: `must be an integer >= ${min}` });

/** A time limit: a number of ms > 0 that a timer can hold. */
const timeLimit = (): z.ZodNumber =>
  z
    .number({ error: `must be a number of ms > 0 and <= ${2 ** 31 - 1}` })
    .positive({ error: `must be a number of ms > 0 and <= ${2 ** 31 - 1}` })
    .max(2 ** 31 - 1, { error: `must be a number of ms > 0 and <= ${2 ** 31 - 1}` });

/**
 * The prompt of a run: a string with something besides whitespace, or an array of parts (each
 * part is checked when the run is made, with a `TypeError` naming it).
 */
export const PROMPT = z
  .custom<Prompt>((value) => typeof value === 'string' || Array.isArray(value), { error: 'must be a non-empty string or an array of parts' })
  .refine((prompt) => (typeof prompt === 'string' ? prompt.trim() !== '' : prompt.length > 0), { error: 'must not be empty (nor only whitespace)' });

/** A run's `outputSchema`: a zod schema or a JSON Schema object. */
export const OUTPUT_OPTIONS = { outputSchema: OutputSchemaSchema.optional() };

/**
 * The prompt of a fleet run spec: a string, or parts that carry what they hold (text, and images
 * as base64 `data` with their `mimeType`): the worker cannot read the caller's files, so the
 * dispatcher reads them first.
 */
export const SPEC_PROMPT = z.union(
  [
    z.string().refine((prompt) => prompt.trim() !== '', { error: 'must not be empty (nor only whitespace)' }),
    z
      .array(
        z.union([
          z.string(),
          z.strictObject({ type: z.literal('text'), text: z.string() }),
          z.strictObject({ type: z.literal('image'), data: z.string(), mimeType: ImageMimeTypeSchema }),
        ]),
      )
      .min(1),
  ],
  { error: "must be a non-empty string or an array of text and image parts (images as base64 data with a mimeType)" },
);

/** The prompt of a fleet run spec: text, and images as base64 `data` with their `mimeType`. */
export type SpecPrompt = string | readonly (string | { readonly type: 'text'; readonly text: string } | { readonly type: 'image'; readonly data: string; readonly mimeType: ImageMimeType })[];

/** What a fleet run spec says of its tools, for every agent: which of the worker's MCP servers the run uses. */
export interface SpecToolOptions {
  /**
   * MCP servers of the worker's, by name (`['github', 'docs']`): the worker gives its run the
   * servers it offers under these names (`serveRuns({ mcpServers })`) and refuses a run that names
   * one it does not offer. What a server is (its command, its URL, its secrets) is the worker's:
   * a spec only names it. Host tools (`tool(...)`) cannot cross Redis.
   */
  readonly mcpServers?: readonly string[] | undefined;
}

/** A fleet run spec's `mcpServers`: names of the worker's MCP servers (see {@link SpecToolOptions}). */
export const SPEC_TOOL_OPTIONS = {
  mcpServers: z
    .array(z.string().regex(MCP_SERVER_NAME, { error: 'names must start with a letter and hold only letters, digits, _ and - (at most 32)' }), {
      error: "must be an array of the names of the worker's MCP servers",
    })
    .optional(),
};

/** What a fleet run spec says of its prompt, its answer and its MCP servers, for every agent. */
export interface SpecPromptOptions extends SpecToolOptions {
  /** The prompt: a string, or text and images (base64 `data` with a `mimeType`). */
  readonly prompt: SpecPrompt;
  /** The schema the answer must satisfy, as a JSON Schema object. */
  readonly outputSchema?: JsonSchemaObject | undefined;
}

/** A fleet run spec's `outputSchema`: a JSON Schema object (a zod schema is made into one by the dispatcher). */
export const SPEC_OUTPUT_OPTIONS = {
  outputSchema: z.record(z.string(), z.unknown(), { error: 'must be a JSON Schema object' }).optional(),
};

/**
 * The process options a fleet caller may choose of a run (and every run takes): where it works
 * (a request the worker may refuse) and its time limits.
 */
export const CALLER_PROCESS_OPTIONS = {
  cwd: text().optional(),
  timeoutMs: timeLimit().optional(),
  idleTimeoutMs: timeLimit().optional(),
};

/** A session's permission options: a preset (`ask` included) or a callback, and its deadline. */
export const SESSION_PERMISSION_OPTIONS = {
  permission: z
    .custom<PermissionPolicy>(isPermissionPolicy, { error: "must be 'allow-all', 'allow-reads', 'deny-all', 'ask' or a function of the request" })
    .optional(),
  permissionTimeoutMs: timeLimit().optional(),
};

/** A session's options for a conversation that outlives its processes (`ConversationOptions`). */
export const SESSION_CONVERSATION_OPTIONS = {
  idleMs: timeLimit().optional(),
  conversationId: text().optional(),
  store: z.custom<ConversationStore>(isConversationStore, { error: 'must be a store: an object with load and save' }).optional(),
};

/** Whether a value has the methods of a `ConversationStore`. */
function isConversationStore(value: unknown): value is ConversationStore {
  return typeof value === 'object' && value !== null && typeof (value as ConversationStore).load === 'function' && typeof (value as ConversationStore).save === 'function';
}

/** A run's permission options: as a session's, but `ask` has no command to wait for. */
export const RUN_PERMISSION_OPTIONS = {
  permission: z
    .custom<PermissionPolicy>((value) => value !== 'ask' && isPermissionPolicy(value), {
      error: "must be 'allow-all', 'allow-reads', 'deny-all' or a function of the request ('ask' is for sessions, which take permission commands)",
    })
    .optional(),
  permissionTimeoutMs: timeLimit().optional(),
};

/** The tool options every run and session takes: `mcpServers` by name, and host `tools` (made with `tool(...)`). */
export const TOOL_OPTIONS = {
  mcpServers: McpServersSchema.optional(),
  tools: z
    .array(z.custom<HostTool>(isHostTool, { error: 'must be tools made with tool(...)' }), { error: 'must be an array of tools made with tool(...)' })
    .optional(),
};

/**
 * The process options only a host sets (`processLines` checks each precisely at call time): here
 * only so that a strict schema knows them.
 */
export const HOST_PROCESS_OPTIONS = {
  env: z.unknown().optional(),
  interrupt: z.unknown().optional(),
  gracePeriodMs: z.unknown().optional(),
  killTimeoutMs: z.unknown().optional(),
  maxLineBytes: z.unknown().optional(),
  lineEncoding: z.unknown().optional(),
  stderrTailBytes: z.unknown().optional(),
  onStopped: z.unknown().optional(),
};

/**
 * Checks `options` against `schema` at call time: a programmer error throws a `TypeError` that
 * names the option and what it must be (`agent-rx: thinking must be one of off, …; got "max"`), or
 * an option `what` (`a pi run`) does not have.
 */
export function checkOptions(what: string, schema: z.ZodType, options: unknown): void {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw new TypeError(`agent-rx: ${what} needs an options object`);
  const parsed = schema.safeParse(options, { reportInput: true });
  if (parsed.success) return;
  throw new TypeError(`agent-rx: ${describeIssue(parsed.error.issues[0], what)}`);
}

/** One refusal of a schema, in words; `what` has the options (`a pi run`). */
export function describeIssue(issue: z.core.$ZodIssue | undefined, what = 'this'): string {
  if (issue === undefined) return 'invalid options';
  if (issue.code === 'unrecognized_keys') return `${what} has no option${issue.keys.length === 1 ? '' : 's'} ${issue.keys.map((key) => JSON.stringify(key)).join(', ')}`;
  const path = issue.path.map(String).join('.');
  const got = 'input' in issue ? `; got ${shown(issue.input)}` : '';
  return `${path === '' ? '' : `${path} `}${issue.message}${got}`;
}

function shown(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (typeof value === 'function') return 'a function';
  try {
    const json = JSON.stringify(value);
    return json.length > 80 ? `${json.slice(0, 79)}…` : json;
  } catch {
    return 'a value that is not JSON';
  }
}
