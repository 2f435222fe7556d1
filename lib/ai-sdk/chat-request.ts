import type { LanguageModelV4FilePart, LanguageModelV4Message, LanguageModelV4TextPart, LanguageModelV4ToolCallPart, SharedV4ProviderOptions } from '@ai-sdk/provider';
import type { UIMessage } from 'ai';
import type { Observable } from 'rxjs';
import { agentByName, AGENTS, isAgentName, type AgentName } from '../agent-table.js';
import type { CliMessage, PromptPart } from '../messages.js';
import { runAgent } from '../sources/run-agent.js';
import { callPrompt, turnRun } from './call-prompt.js';
import type { AgentRxModelOptions } from './language-model.js';
import { PROVIDER_KEY } from './model-parts.js';

/** What a chat request asks of the agent: see {@link chatRequestTurn}. */
export interface ChatTurn {
  /** The new turn (its text and images), or the whole conversation as text when no session resumes it (`history: 'text'`). */
  readonly prompt: string | readonly (string | PromptPart)[];
  /** The agent session to resume: the one the last answer's metadata names (`metadata.agentRx.sessionId`). */
  readonly sessionId: string | undefined;
  /** How the earlier turns reach the agent: none came, its session is resumed, or they are in `prompt` as text. */
  readonly history: 'none' | 'resumed' | 'text';
  /** The system messages of the request, joined. */
  readonly system: string | undefined;
}

/**
 * Reads the messages a `useChat` page sends (`UIMessage[]`, the whole conversation) as one turn of
 * the agent: the user's new turn, and the agent session to resume, from the metadata that a UI
 * message stream of agent-rx put on the last answer that completed. Turns after that answer (an
 * answer stopped or failed, and the prompt it answered) go as text with the new turn; without any
 * such answer, the whole conversation does. Images the page attached (data URLs) go as images; a
 * file of another kind, or one by a remote URL, is refused with a `TypeError`.
 *
 * @example
 * import type { UIMessage } from 'ai';
 * import { runClaudeCode } from 'agent-rx';
 * import { chatRequestTurn, uiMessageStreamResponse } from 'agent-rx/ai-sdk';
 *
 * export async function POST(request: Request): Promise<Response> {
 *   const { prompt, sessionId } = chatRequestTurn(((await request.json()) as { messages: UIMessage[] }).messages);
 *   return uiMessageStreamResponse(runClaudeCode({ prompt, ...(sessionId === undefined ? {} : { session: { resume: sessionId } }) }));
 * }
 */
export function chatRequestTurn(messages: readonly UIMessage[]): ChatTurn {
  if (!Array.isArray(messages)) throw new TypeError('agent-rx: chatRequestTurn() takes the request\u2019s messages (UIMessage[])');
  let read;
  try {
    read = callPrompt(messages.map(modelMessage), undefined);
  } catch (error) {
    throw new TypeError(`agent-rx: the chat request cannot be sent to an agent: ${(error as Error).message}`, { cause: error });
  }
  const prompt = read.prompt.length === 1 && typeof read.prompt[0] === 'string' ? read.prompt[0] : read.prompt;
  return { prompt, sessionId: read.sessionId, history: read.history, system: read.system };
}

/**
 * The run that answers a `useChat` request: the agent `agent` with `options`, given the new turn
 * and resuming the agent session of the earlier answers ({@link chatRequestTurn}); the request's
 * system text is the agent's appended system prompt where it takes one, else at the head of the
 * prompt. Cold, like every run: serve it with {@link uiMessageStreamResponse} or {@link pipeUIMessageStream}.
 *
 * @example
 * import { createServer } from 'node:http';
 * import type { UIMessage } from 'ai';
 * import { chatRun, pipeUIMessageStream } from 'agent-rx/ai-sdk';
 *
 * // The page's Stop closes the request, which stops the agent.
 * createServer(async (request, response) => {
 *   let body = '';
 *   for await (const chunk of request) body += String(chunk);
 *   const { messages } = JSON.parse(body) as { messages: UIMessage[] };
 *   await pipeUIMessageStream(chatRun('pi', { cwd: '/path/to/project' }, messages), response);
 * }).listen(3000, '127.0.0.1');
 */
export function chatRun<N extends AgentName>(agent: N, options: AgentRxModelOptions<N>, messages: readonly UIMessage[]): Observable<CliMessage> {
  if (typeof agent !== 'string' || !isAgentName(agent)) throw new TypeError(`agent-rx: chatRun() takes an agent's name (${Object.keys(AGENTS).join(', ')}), not ${JSON.stringify(agent)}`);
  const turn = chatRequestTurn(messages);
  const { prompt } = turn;
  const definition = agentByName(agent);
  const run = turnRun(definition, options, { ...turn, prompt: typeof prompt === 'string' ? [prompt] : prompt });
  return runAgent(definition, { ...run.options, prompt: run.prompt });
}

interface LooseUIPart {
  readonly type: string;
  readonly text?: unknown;
  readonly url?: unknown;
  readonly mediaType?: unknown;
  readonly filename?: unknown;
  readonly toolName?: unknown;
  readonly toolCallId?: unknown;
  readonly providerMetadata?: unknown;
}

/** A UI message as the model message the provider reads (its text, images, tool calls, and agent-rx's metadata). */
function modelMessage(message: UIMessage): LanguageModelV4Message {
  const parts = (Array.isArray(message.parts) ? message.parts : []) as readonly LooseUIPart[];
  const text = (part: LooseUIPart): string => (typeof part.text === 'string' ? part.text : '');
  // The session of an answer that completed (its metadata has the stop reason): one stopped or failed may have left none.
  const options = (metadata: unknown): { providerOptions?: SharedV4ProviderOptions } => {
    const own = (metadata as { readonly [PROVIDER_KEY]?: { readonly sessionId?: unknown; readonly stopReason?: unknown } } | undefined)?.[PROVIDER_KEY];
    return typeof own?.sessionId === 'string' && typeof own.stopReason === 'string' ? { providerOptions: { [PROVIDER_KEY]: { sessionId: own.sessionId } } } : {};
  };
  switch (message.role) {
    case 'system':
      return { role: 'system', content: parts.map(text).join('') };
    case 'assistant':
      return {
        role: 'assistant',
        content: parts.flatMap((part): (LanguageModelV4TextPart | LanguageModelV4ToolCallPart)[] =>
          part.type === 'text'
            ? [{ type: 'text' as const, text: text(part) }]
            : part.type === 'dynamic-tool' || part.type.startsWith('tool-')
              ? [{ type: 'tool-call' as const, toolCallId: String(part.toolCallId), toolName: typeof part.toolName === 'string' ? part.toolName : part.type.slice('tool-'.length), input: {} }]
              : [],
        ),
        ...options(message.metadata),
      };
    default:
      return {
        role: 'user',
        content: parts.flatMap((part): (LanguageModelV4TextPart | LanguageModelV4FilePart)[] => {
          if (part.type === 'text') return [{ type: 'text' as const, text: text(part) }];
          if (part.type !== 'file') return [];
          const mediaType = typeof part.mediaType === 'string' ? part.mediaType : 'application/octet-stream';
          const url = typeof part.url === 'string' ? part.url : '';
          const data = /^data:[^;,]*(;[^,]*)?;base64,(.*)$/s.exec(url);
          if (data === null) throw new TypeError(`a file part (${mediaType}) whose url is not a base64 data URL: the agent is given bytes, not links`);
          return [{ type: 'file' as const, mediaType, data: { type: 'data' as const, data: data[2] ?? '' }, ...(typeof part.filename === 'string' ? { filename: part.filename } : {}) }];
        }),
      };
  }
}
