import type { SessionCommand } from '../messages.js';
import { outputContract, outputInstruction, type OutputContract } from '../operators/output-schema.js';
import { PREPARED_PROMPT, preparedPromptOf, runPromptOf, promptContent, refuseUnsupported, type PreparedPrompt, type PromptAbilities, type PromptContent } from '../operators/prompt-parts.js';
import type { SessionPromptAbilities } from '../operators/session-protocol.js';
import { fileReader } from '../sources/prompt-files.js';

/**
 * A command as the session machine reads it: a `prompt`, `follow-up` or `steer` with `parts` or an
 * `outputSchema` gets its prompt made ready now ({@link PreparedPrompt}: its images and files read
 * from `cwd` and checked, its schema made ready, the schema's instruction appended for an agent that
 * is told it in the prompt), or the reason it cannot (the machine drops it, `unsupported`). Any
 * other value is passed on as it is (the machine checks it).
 */
export function prepareCommand(value: unknown, abilities: SessionPromptAbilities, who: string, cwd: string | undefined): unknown {
  if (typeof value !== 'object' || value === null || preparedPromptOf(value) !== undefined) return value;
  const request = runPromptOf(value);
  if (request !== undefined) {
    let prepared: PreparedPrompt;
    try {
      refuseUnsupported(request.content, abilities, who);
      prepared = promptFor(request.content, request.output, abilities);
    } catch (error) {
      prepared = { refused: error instanceof Error ? error.message.replace(/^agent-rx: /, '') : String(error) };
    }
    return { ...value, [PREPARED_PROMPT]: prepared };
  }
  const command = value as Partial<SessionCommand> & { readonly parts?: unknown; readonly outputSchema?: unknown };
  if (command.type !== 'prompt' && command.type !== 'follow-up' && command.type !== 'steer') return value;
  if (command.parts === undefined && command.outputSchema === undefined) return value;
  if (typeof command.text !== 'string') return value;
  let prepared: PreparedPrompt;
  try {
    const parts = command.parts === undefined ? [] : Array.isArray(command.parts) ? (command.parts as unknown[]) : undefined;
    if (parts === undefined) throw new TypeError('agent-rx: parts must be an array of parts');
    // The parts are named as the caller wrote them (`parts[0]` is the first part, after `text`).
    const read = parts.length === 0 ? [] : promptContent(parts as never[], fileReader(cwd), 'parts');
    refuseUnsupported(read, abilities, who, 'parts');
    const content: PromptContent = [{ type: 'text', text: command.text }, ...read];
    const output = command.outputSchema === undefined ? undefined : outputContract(command.outputSchema);
    prepared = promptFor(content, output, abilities);
  } catch (error) {
    prepared = { refused: error instanceof Error ? error.message.replace(/^agent-rx: /, '') : String(error) };
  }
  return { ...command, [PREPARED_PROMPT]: prepared };
}

/** A prepared prompt: the content, with the schema's instruction appended when the agent is told it in the prompt. */
export function promptFor(content: PromptContent, output: OutputContract | undefined, abilities: { readonly nativeOutput?: boolean }): PreparedPrompt {
  if (output === undefined) return { content };
  if (abilities.nativeOutput === true) return { content, output };
  return { content: [...content, { type: 'text', text: outputInstruction(output) }], output };
}

export type { PromptAbilities };
