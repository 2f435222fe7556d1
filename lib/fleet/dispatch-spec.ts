import type { AgentName } from '../agent-table.js';
import type { OutputSchema, Prompt } from '../messages.js';
import { outputContract, type OutputContract } from '../operators/output-schema.js';
import { fileBlock, promptContent, type PromptContent } from '../operators/prompt-parts.js';
import type { SpecPrompt } from '../agents/shared/option-schemas.js';
import { fileReader } from '../sources/prompt-files.js';
import { checkRunSpec, type AgentRunSpec, type RunSpec, type RunSpecOptions } from './run-spec.js';

/**
 * The options of a run given to `dispatcher.run`: a {@link RunSpecOptions}'s, but `prompt` is any
 * {@link Prompt} (images by path or as bytes, files) and `outputSchema` may be a zod schema. The
 * dispatcher makes them plain JSON before anything is enqueued (see {@link toRunSpec}).
 */
export type DispatchRunOptions<N extends AgentName, Output = unknown> = Omit<RunSpecOptions<N>, 'prompt' | 'outputSchema'> & {
  /** The prompt: a string, or parts (text, images by `path` or `data`, files), read on the caller's machine. */
  readonly prompt: Prompt;
  /** The schema the answer must satisfy: a zod schema (it types `terminal.completed.output`) or a JSON Schema object. */
  readonly outputSchema?: OutputSchema<Output> | undefined;
};

/** A run of the agent `N` as given to `dispatcher.run` (see {@link DispatchRunOptions}). */
export interface AgentDispatchSpec<N extends AgentName, Output = unknown> extends Omit<AgentRunSpec<N>, 'options'> {
  readonly options: DispatchRunOptions<N, Output>;
}

/**
 * A run as given to `dispatcher.run`: a {@link RunSpec}, whose prompt may also hold images by path
 * or as bytes and files, and whose `outputSchema` may be a zod schema. Every `RunSpec` is one.
 *
 * @example
 * import * as z from 'zod';
 * import type { DispatchSpec } from 'agent-rx/fleet';
 *
 * const Verdict = z.object({ verdict: z.enum(['pass', 'fail']) });
 * const spec: DispatchSpec<z.infer<typeof Verdict>> = {
 *   agent: 'pi',
 *   options: { prompt: ['Does this screenshot show the bug?', { type: 'image', path: 'shot.png' }], outputSchema: Verdict },
 * };
 */
export type DispatchSpec<Output = unknown> = { [N in AgentName]: AgentDispatchSpec<N, Output> }[AgentName];

/** A spec made plain ({@link toRunSpec}), and its zod schema's contract when it was given one. */
export interface PreparedSpec {
  readonly spec: RunSpec;
  /** The contract of a zod `outputSchema`, for the check on the caller's side; `undefined` for a JSON Schema object or none. */
  readonly zodOutput: OutputContract | undefined;
}

/**
 * A spec given to `dispatcher.run` made into a {@link RunSpec}, plain JSON that a worker can take:
 * the prompt's images and files are read here, on the caller's machine (paths against
 * `readFrom`, default this process's working directory: the spec's `cwd` names a folder of the
 * worker's), and checked as a local run checks them (type from the bytes, size limits); images go
 * as base64 `data` with their `mimeType`, each file as a text part holding a `<file path="…">`
 * block with its text (what a local run gives an agent that takes text); a zod `outputSchema`
 * becomes its JSON Schema. Then the whole is checked as a spec. Throws a `TypeError` naming what is
 * wrong (`options.prompt[1]: cannot read /tmp/shot.png (ENOENT)`).
 *
 * @example
 * import * as z from 'zod';
 * import { toRunSpec } from 'agent-rx/fleet';
 *
 * const Summary = z.object({ summary: z.string() });
 * const spec = toRunSpec({ agent: 'pi', options: { prompt: ['Summarize', { type: 'file', path: 'notes.md' }], outputSchema: Summary } });
 * // { agent: 'pi', options: { prompt: [{ type: 'text', text: 'Summarize' }, { type: 'text', text: '<file path="/home/me/notes.md">…</file>' }],
 * //   outputSchema: { type: 'object', properties: { summary: { type: 'string' } }, … } } }
 * JSON.stringify(spec); // what goes to Redis
 */
export function toRunSpec(spec: DispatchSpec, readFrom?: string): RunSpec {
  return prepareSpec(spec, readFrom).spec;
}

/** {@link toRunSpec}, and the contract of a zod `outputSchema` (for the caller-side check). */
export function prepareSpec(spec: DispatchSpec, readFrom?: string): PreparedSpec {
  const given = spec as unknown;
  // Not a spec's shape: checkRunSpec says what is wrong.
  if (typeof given !== 'object' || given === null || Array.isArray(given)) return { spec: checkRunSpec(given), zodOutput: undefined };
  const options = (given as { readonly options?: unknown }).options;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) return { spec: checkRunSpec(given), zodOutput: undefined };
  const { prompt, outputSchema, ...rest } = options as { readonly prompt?: unknown; readonly outputSchema?: unknown; readonly [key: string]: unknown };
  const contract = outputSchema === undefined ? undefined : outputContract(outputSchema, 'options.outputSchema');
  const plain = {
    ...rest,
    ...(prompt === undefined ? {} : { prompt: specPrompt(prompt as Prompt, readFrom) }),
    ...(contract === undefined ? {} : { outputSchema: contract.jsonSchema }),
  };
  const checked = checkRunSpec({ ...given, options: plain });
  const isZod = contract !== undefined && contract.validator === outputSchema;
  return { spec: checked, zodOutput: isZod ? contract : undefined };
}

// A prompt as a spec carries it: a string as it is; parts read and checked, then as text and image data.
function specPrompt(prompt: Prompt, readFrom: string | undefined): SpecPrompt {
  if (typeof prompt === 'string') return prompt;
  return plainParts(promptContent(prompt, fileReader(readFrom), 'options.prompt'));
}

function plainParts(content: PromptContent): SpecPrompt {
  return content.map((part) => {
    switch (part.type) {
      case 'text':
        return { type: 'text', text: part.text };
      case 'image':
        return { type: 'image', data: part.data, mimeType: part.mimeType };
      case 'file':
        return { type: 'text', text: fileBlock(part.path, part.text) };
    }
  });
}
