import type { ServerResponse } from 'node:http';
import type { FinishReason, UIMessageChunk } from 'ai';
import { Observable, type OperatorFunction, type Subscription } from 'rxjs';
import type { SessionMessage, StopReason, TerminalFailed, TurnFailed, Usage } from '../messages.js';
import { PROVIDER_KEY } from './model-parts.js';
import { createUIMessageStreamResponse, pipeUIMessageStreamToResponse } from './peers.js';

/** What a UI message stream of a run says besides its messages. */
export interface UIMessageStreamOptions {
  /** The id of the assistant message it makes (in its `start` chunk); the page makes one when absent. */
  readonly messageId?: string;
  /** Whether the agent's thinking is sent, as reasoning parts. Default `true`. */
  readonly sendReasoning?: boolean;
  /** The text of a failed run's `error` chunk, from its `terminal.failed` (or a session turn's `turn.failed`). Default: its `message`. */
  readonly errorText?: (failure: TerminalFailed | TurnFailed) => string;
}

/**
 * The metadata a UI message stream puts on its assistant message (`message.metadata.agentRx`): the
 * agent's session id as soon as it is known, and at the end how the run ended (`stopReason` and
 * `usage` when it completed, `failure` when not). {@link chatRequestTurn} resumes the session of
 * the last answer that completed: a stopped or failed run may have left no session to resume.
 */
export interface AgentRxMessageMetadata {
  readonly agentRx: {
    readonly sessionId?: string;
    readonly stopReason?: StopReason;
    readonly usage?: Usage;
    readonly failure?: { readonly reason: string; readonly message: string };
  };
}

/**
 * The AI SDK's UI message chunks of a run, or of a session's turn (the stream ends at the first
 * terminal, or turn end): `start`, the agent's text, its thinking as reasoning, its own tools as
 * provider-executed dynamic tool parts (input, partial output as preliminary output, result or
 * error), an `error` chunk for a failure, and `finish` with the session id, stop reason and usage in
 * the message's metadata ({@link AgentRxMessageMetadata}). Unsubscribing stops the run.
 *
 * ```
 * source:  -S-a-c-r-(C|)      S = session.started, a = assistant, c/r = tool.call/tool.completed, C = terminal.completed
 * result:  (bg)m-(td)-(ei)-o-(hf|)   b = start, g = start-step, m = message-metadata, t/d/e = text-start/delta/end, i/o = tool input/output, h/f = finish-step, finish
 * ```
 *
 * @example
 * import { runPi } from 'agent-rx';
 * import { toUIMessageChunks } from 'agent-rx/ai-sdk';
 *
 * runPi({ prompt: 'Explain this repo' }).pipe(toUIMessageChunks()).subscribe((chunk) => console.log(chunk.type));
 */
export function toUIMessageChunks(options: UIMessageStreamOptions = {}): OperatorFunction<SessionMessage, UIMessageChunk> {
  return (source) =>
    new Observable<UIMessageChunk>((subscriber) => {
      const sendReasoning = options.sendReasoning ?? true;
      let sessionId: string | undefined;
      let text: string | null = null;
      let blocks = 0;
      let ended = false;
      const closeText = (withdrawn = ''): void => {
        if (text === null) return;
        const id = text;
        text = null;
        subscriber.next({ type: 'text-end', id, ...(withdrawn === '' ? {} : { providerMetadata: { [PROVIDER_KEY]: { withdrawn } } }) });
      };
      const finish = (finishReason: FinishReason, agentRx: AgentRxMessageMetadata['agentRx']): void => {
        closeText();
        ended = true;
        subscriber.next({ type: 'finish-step' });
        subscriber.next({ type: 'finish', finishReason, messageMetadata: { agentRx: JSON.parse(JSON.stringify({ ...(sessionId === undefined ? {} : { sessionId }), ...agentRx })) as AgentRxMessageMetadata['agentRx'] } });
        subscriber.complete();
      };
      const fail = (failure: TerminalFailed | TurnFailed): void => {
        closeText();
        let errorText: string;
        try {
          errorText = options.errorText?.(failure) ?? failure.message;
        } catch (error) {
          subscriber.error(error);
          return;
        }
        subscriber.next({ type: 'error', errorText });
        finish('error', { failure: { reason: failure.reason, message: failure.message } });
      };
      subscriber.next({ type: 'start', ...(options.messageId === undefined ? {} : { messageId: options.messageId }) });
      subscriber.next({ type: 'start-step' });
      const subscription = source.subscribe({
        next: (message) => {
          if (ended) return;
          switch (message.type) {
            case 'session.started':
            case 'session.resumed':
              sessionId = message.sessionId;
              subscriber.next({ type: 'message-metadata', messageMetadata: { agentRx: { sessionId } } satisfies AgentRxMessageMetadata });
              return;
            case 'assistant':
              if (message.text === '') return;
              if (text === null) {
                text = `text-${String(blocks++)}`;
                subscriber.next({ type: 'text-start', id: text });
              }
              subscriber.next({ type: 'text-delta', id: text, delta: message.text });
              return;
            case 'assistant.withdrawn':
              closeText(message.text);
              return;
            case 'assistant.thought': {
              closeText();
              if (!sendReasoning) return;
              const id = `reasoning-${String(blocks++)}`;
              subscriber.next({ type: 'reasoning-start', id });
              subscriber.next({ type: 'reasoning-delta', id, delta: message.text });
              subscriber.next({ type: 'reasoning-end', id });
              return;
            }
            case 'tool.call':
              closeText();
              subscriber.next({
                type: 'tool-input-available',
                toolCallId: message.toolCallId,
                toolName: message.name,
                input: message.input ?? {},
                providerExecuted: true,
                dynamic: true,
                ...(message.summary === undefined ? {} : { title: message.summary }),
              });
              return;
            case 'tool.update':
              subscriber.next({ type: 'tool-output-available', toolCallId: message.toolCallId, output: message.output, providerExecuted: true, dynamic: true, preliminary: true });
              return;
            case 'tool.completed':
              subscriber.next({ type: 'tool-output-available', toolCallId: message.toolCallId, output: message.output, providerExecuted: true, dynamic: true });
              return;
            case 'tool.failed':
              subscriber.next({ type: 'tool-output-error', toolCallId: message.toolCallId, errorText: message.output, providerExecuted: true, dynamic: true });
              return;
            case 'terminal.completed':
              finish(FINISH[message.stopReason], { stopReason: message.stopReason, ...(message.usage === undefined ? {} : { usage: message.usage }) });
              return;
            case 'turn.completed':
              finish(FINISH[message.stopReason], { stopReason: message.stopReason, ...(message.usage === undefined ? {} : { usage: message.usage }) });
              return;
            case 'terminal.failed':
            case 'turn.failed':
              fail(message);
              return;
            default:
              return;
          }
        },
        error: (error: unknown) => {
          subscriber.error(error);
        },
        complete: () => {
          if (!ended) {
            closeText();
            subscriber.next({ type: 'error', errorText: 'the run ended without saying how' });
            subscriber.next({ type: 'finish-step' });
            subscriber.next({ type: 'finish', finishReason: 'error' });
          }
          subscriber.complete();
        },
      });
      return subscription;
    });
}

const FINISH: Readonly<Record<StopReason, FinishReason>> = { end_turn: 'stop', max_tokens: 'length', refusal: 'content-filter', aborted: 'other', tool_use: 'other', other: 'other' };

/**
 * A run (or a session's turn) as a `ReadableStream` of UI message chunks ({@link toUIMessageChunks}):
 * reading starts the run; cancelling the stream (the page's Stop, a closed connection) unsubscribes,
 * which stops the agent.
 *
 * @example
 * import { readUIMessageStream } from 'ai';
 * import { runPi } from 'agent-rx';
 * import { uiMessageStream } from 'agent-rx/ai-sdk';
 *
 * // The assistant message as a page would build it, from the run's chunks.
 * for await (const message of readUIMessageStream({ stream: uiMessageStream(runPi({ prompt: 'Explain this repo' })) })) {
 *   console.log(message.parts.length);
 * }
 */
export function uiMessageStream(messages$: Observable<SessionMessage>, options: UIMessageStreamOptions = {}): ReadableStream<UIMessageChunk> {
  let subscription: Subscription | undefined;
  return new ReadableStream<UIMessageChunk>({
    start: (controller) => {
      subscription = messages$.pipe(toUIMessageChunks(options)).subscribe({
        next: (chunk) => {
          controller.enqueue(chunk);
        },
        error: (error: unknown) => {
          controller.error(error);
        },
        complete: () => {
          controller.close();
        },
      });
    },
    cancel: () => {
      subscription?.unsubscribe();
    },
  });
}

/** Response settings of {@link uiMessageStreamResponse} and {@link pipeUIMessageStream}. */
export interface UIMessageResponseInit extends UIMessageStreamOptions {
  readonly status?: number;
  readonly statusText?: string;
  readonly headers?: Record<string, string>;
}

/**
 * The HTTP response a `useChat` page reads, from a run (Server-Sent Events of UI message chunks, by
 * the AI SDK's `createUIMessageStreamResponse`): for a handler of the Fetch API (Next.js, Hono, a
 * Worker). The page's Stop closes the response, which stops the agent.
 *
 * @example
 * import type { UIMessage } from 'ai';
 * import { chatRun, uiMessageStreamResponse } from 'agent-rx/ai-sdk';
 *
 * export async function POST(request: Request): Promise<Response> {
 *   const { messages } = (await request.json()) as { messages: UIMessage[] };
 *   return uiMessageStreamResponse(chatRun('codex', { sandbox: 'read-only' }, messages));
 * }
 */
export function uiMessageStreamResponse(messages$: Observable<SessionMessage>, init: UIMessageResponseInit = {}): Response {
  const { status, statusText, headers, ...options } = init;
  return createUIMessageStreamResponse({ stream: uiMessageStream(messages$, options), ...(status === undefined ? {} : { status }), ...(statusText === undefined ? {} : { statusText }), ...(headers === undefined ? {} : { headers }) });
}

/**
 * Writes a run (or a session's turn) to a Node `ServerResponse` as the UI message stream a
 * `useChat` page reads (by the AI SDK's `pipeUIMessageStreamToResponse`): for Node's `http`,
 * Express and Nest. A closed connection (the page's Stop) stops the agent.
 *
 * @example
 * import { createServer } from 'node:http';
 * import { runPi } from 'agent-rx';
 * import { pipeUIMessageStream } from 'agent-rx/ai-sdk';
 *
 * createServer((request, response) => {
 *   const prompt = new URL(request.url ?? '/', 'http://localhost').searchParams.get('prompt') ?? 'Explain this repo';
 *   void pipeUIMessageStream(runPi({ prompt }), response);
 * }).listen(3000, '127.0.0.1');
 */
export function pipeUIMessageStream(messages$: Observable<SessionMessage>, response: ServerResponse, init: UIMessageResponseInit = {}): Promise<void> {
  const { status, statusText, headers, ...options } = init;
  return pipeUIMessageStreamToResponse({ response, stream: uiMessageStream(messages$, options), ...(status === undefined ? {} : { status }), ...(statusText === undefined ? {} : { statusText }), ...(headers === undefined ? {} : { headers }) });
}
