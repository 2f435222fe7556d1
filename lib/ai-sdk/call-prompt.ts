import type { AgentDefinition } from '../agents/definition.js';
import type { LanguageModelV4FilePart, LanguageModelV4Message, LanguageModelV4Prompt, SharedV4ProviderOptions, SharedV4Warning } from '@ai-sdk/provider';
import { IMAGE_MIME_TYPES, type ImageMimeType, type PromptPart } from '../messages.js';
import { PROVIDER_KEY } from './model-parts.js';
import { UnsupportedFunctionalityError } from './peers.js';

/**
 * What one call sends to the agent: the prompt (the new user turn, or the whole conversation as
 * text when no earlier session can be resumed), the system text, and the session to resume.
 */
export interface CallPrompt {
  /** Parts in order: text, and the images of the new turn. */
  readonly prompt: readonly (string | PromptPart)[];
  /** The system messages, joined (absent when none). */
  readonly system: string | undefined;
  /** The agent session the call resumes: from the call's `providerOptions.agentRx.sessionId`, else from the last earlier answer that carries one. */
  readonly sessionId: string | undefined;
  /** How the earlier turns reach the agent: none came, its session is resumed (turns it does not hold are sent as text too), or they are all sent as text. */
  readonly history: 'none' | 'resumed' | 'text';
  readonly warnings: readonly SharedV4Warning[];
}

/**
 * A turn's run options for an agent, from its definition: its system text appended to the agent's
 * system prompt where the CLI takes one (else at the head of the prompt, with a warning), and its
 * session resumed (`resumeRun`; an agent whose runs cannot resume one is refused).
 */
export function turnRun(
  definition: AgentDefinition<string, Readonly<Record<string, unknown>>, Readonly<Record<string, unknown>>, unknown>,
  options: Readonly<Record<string, unknown>>,
  read: Pick<CallPrompt, 'prompt' | 'system' | 'sessionId'>,
): { readonly options: Readonly<Record<string, unknown>>; readonly prompt: string | readonly (string | PromptPart)[]; readonly warnings: readonly SharedV4Warning[] } {
  let runOptions = options;
  let prompt = read.prompt;
  const warnings: SharedV4Warning[] = [];
  if (read.system !== undefined) {
    if (definition.appendSystemPrompt !== undefined) runOptions = definition.appendSystemPrompt(runOptions, read.system);
    else {
      prompt = [`${read.system}\n\n`, ...prompt];
      warnings.push({ type: 'compatibility', feature: 'system', details: `the ${definition.displayName} CLI takes no system prompt of the caller: the system text was sent at the head of the prompt` });
    }
  }
  if (read.sessionId !== undefined) {
    if (definition.resumeRun === undefined) throw new UnsupportedFunctionalityError({ functionality: `resuming a ${definition.displayName} session in a run` });
    runOptions = definition.resumeRun(runOptions, read.sessionId);
  }
  return { options: runOptions, prompt: prompt.length === 1 && typeof prompt[0] === 'string' ? prompt[0] : prompt, warnings };
}

/** The agent session an answer of this provider came from, in its provider options (`agentRx.sessionId`). */
function sessionIdOf(message: LanguageModelV4Message): string | undefined {
  const own = idIn(message.providerOptions);
  if (own !== undefined) return own;
  if (message.role === 'system') return undefined;
  for (const part of message.content) {
    const id = idIn(part.providerOptions);
    if (id !== undefined) return id;
  }
  return undefined;
}

function idIn(options: SharedV4ProviderOptions | undefined): string | undefined {
  const id = options?.[PROVIDER_KEY]?.['sessionId'];
  return typeof id === 'string' && id !== '' ? id : undefined;
}

/**
 * Reads a call's prompt. The turns after the last answer that names its agent session (or after
 * the last answer at all, when the call names the session) are the new turn, in that session; turns
 * no session holds (earlier answers that name none) are sent as text before it, in one prompt, with
 * a warning saying so. Images of the new turn go to the agent as images; a file of another kind is
 * refused (`UnsupportedFunctionalityError`).
 */
export function callPrompt(prompt: LanguageModelV4Prompt, askedSessionId: string | undefined): CallPrompt {
  const system = prompt
    .filter((message): message is Extract<LanguageModelV4Message, { role: 'system' }> => message.role === 'system')
    .map((message) => message.content)
    .join('\n\n');
  const turns = prompt.filter((message) => message.role !== 'system');
  const last = turns.at(-1);
  if (last === undefined || last.role !== 'user') {
    throw new UnsupportedFunctionalityError({ functionality: 'a prompt that does not end with a user message (an agent answers a user turn)' });
  }
  let from = 0;
  let sessionId = askedSessionId;
  for (let index = turns.length - 1; index >= 0; index -= 1) {
    const message = turns[index] as LanguageModelV4Message;
    if (message.role !== 'assistant') continue;
    const id = sessionIdOf(message);
    if (askedSessionId !== undefined || id !== undefined) {
      from = index + 1;
      sessionId ??= id;
      break;
    }
  }
  const fresh = turns.slice(from);
  const warnings: SharedV4Warning[] = [];
  const earlier = fresh.some((message) => message.role === 'assistant');
  if (!earlier) {
    const users = fresh.filter((message): message is Extract<LanguageModelV4Message, { role: 'user' }> => message.role === 'user');
    const parts = users.flatMap((message, index) => [...(index > 0 ? ['\n\n'] : []), ...message.content.map(userPart)]);
    return { prompt: merged(parts), system: system === '' ? undefined : system, sessionId, history: sessionId === undefined ? 'none' : 'resumed', warnings };
  }
  // Earlier turns no session holds: as text, before the new turn (and its images).
  const lastUser = fresh.findLastIndex((message) => message.role === 'assistant') + 1;
  const transcript = fresh.slice(0, lastUser).map(transcriptLine).filter((line) => line !== '');
  const now = fresh.slice(lastUser).flatMap((message, index) => [...(index > 0 ? ['\n\n'] : []), ...(message.role === 'user' ? message.content.map(userPart) : [])]);
  warnings.push({
    type: 'compatibility',
    feature: 'earlier turns',
    details:
      sessionId === undefined
        ? 'no earlier answer carries an agentRx sessionId to resume: the conversation so far was sent to the agent as text, before the new turn'
        : 'turns after the last answer that carries an agentRx sessionId were sent to the agent as text, before the new turn, in its resumed session',
  });
  const heading = sessionId === undefined ? 'The conversation so far' : 'Said since your last complete answer';
  return {
    prompt: merged([`${heading}:\n\n${transcript.join('\n\n')}\n\nThe new message:\n\n`, ...now]),
    system: system === '' ? undefined : system,
    sessionId,
    history: sessionId === undefined ? 'text' : 'resumed',
    warnings,
  };
}

function transcriptLine(message: LanguageModelV4Message): string {
  switch (message.role) {
    case 'user':
      return `User: ${message.content.map((part) => (part.type === 'text' ? part.text : `[${part.mediaType} file${part.filename === undefined ? '' : ` ${part.filename}`}]`)).join('')}`;
    case 'assistant': {
      const said = message.content
        .map((part) => (part.type === 'text' ? part.text : part.type === 'tool-call' ? `[used the tool ${part.toolName}]` : ''))
        .filter((text) => text !== '')
        .join(' ');
      return said === '' ? '' : `Assistant: ${said}`;
    }
    default:
      return '';
  }
}

function userPart(part: Extract<LanguageModelV4Message, { role: 'user' }>['content'][number]): string | PromptPart {
  if (part.type === 'text') return part.text;
  return filePart(part);
}

function filePart(part: LanguageModelV4FilePart): string | PromptPart {
  const { data, mediaType } = part;
  if (data.type === 'text') return `${part.filename === undefined ? 'A file' : `The file ${part.filename}`}:\n\n${data.text}\n\n`;
  if (mediaType.startsWith('image/') && (IMAGE_MIME_TYPES as readonly string[]).includes(mediaType) && data.type === 'data') {
    return { type: 'image', data: data.data, mimeType: mediaType as ImageMimeType };
  }
  throw new UnsupportedFunctionalityError({
    functionality: `a file of type ${mediaType} (${data.type}) in a prompt: agents take images (${IMAGE_MIME_TYPES.join(', ')}) and text`,
  });
}

/** Adjacent strings joined into one text part. */
function merged(parts: readonly (string | PromptPart)[]): (string | PromptPart)[] {
  const out: (string | PromptPart)[] = [];
  for (const part of parts) {
    const previous = out.at(-1);
    if (typeof part === 'string' && typeof previous === 'string') out[out.length - 1] = previous + part;
    else out.push(part);
  }
  return out;
}
