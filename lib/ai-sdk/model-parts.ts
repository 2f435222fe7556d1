import type { LanguageModelV4FinishReason, LanguageModelV4StreamPart, LanguageModelV4Usage, SharedV4ProviderMetadata, SharedV4Warning } from '@ai-sdk/provider';
import { Observable, type OperatorFunction } from 'rxjs';
import type { CliMessage, StopReason, TerminalFailed, Usage } from '../messages.js';
import { runFailureError } from './errors.js';

/** What the parts of one call say besides the messages: the agent, the model id, the warnings of the call. */
export interface ModelPartsContext {
  readonly agent: string;
  readonly modelId: string;
  readonly warnings: readonly SharedV4Warning[];
  /** The text sent to the agent, for the error of a failed run (`requestBodyValues`). */
  readonly prompt: unknown;
  /**
   * A typed answer was asked for (`responseFormat: json`): the answer's text is held and given
   * once, as the run's validated output in JSON, when the run completes.
   */
  readonly json: boolean;
  /** Every message also as a `raw` part (`includeRawChunks`). */
  readonly raw: boolean;
}

/** The provider metadata key of agent-rx (`providerMetadata.agentRx`). */
export const PROVIDER_KEY = 'agentRx';

/**
 * The AI SDK's stream parts of a run (a language model's `doStream`): `stream-start` with the
 * call's warnings first, `response-metadata` when the agent says its session, text and reasoning
 * blocks, the agent's own tool calls and results as provider-executed dynamic tools, and one
 * `finish` (after an `error` part when the run failed). Every part after the session's header
 * carries `providerMetadata.agentRx.sessionId`, so that a later call can resume it.
 *
 * ```
 * source:  -S-a-a-c-r-a-(C|)     S = session.started, a = assistant, c/r = tool.call/tool.completed, C = terminal.completed
 * result:  s-m-(td)-d-(ec)-r-(td)-(ef|)   s = stream-start, m = response-metadata, t/d/e = text-start/delta/end, c/r = tool-call/tool-result, f = finish
 * ```
 *
 * @example
 * import { runCodex } from 'agent-rx';
 * import { modelParts } from 'agent-rx/ai-sdk';
 *
 * runCodex({ prompt: 'Explain this repo' })
 *   .pipe(modelParts({ agent: 'codex', modelId: 'codex', warnings: [], prompt: 'Explain this repo', json: false, raw: false }))
 *   .subscribe((part) => console.log(part.type));
 */
export function modelParts(context: ModelPartsContext): OperatorFunction<CliMessage, LanguageModelV4StreamPart> {
  return (source) =>
    new Observable<LanguageModelV4StreamPart>((subscriber) => {
      const parts = new PartWriter(context, (part) => {
        subscriber.next(part);
      });
      parts.start();
      let ended = false;
      const subscription = source.subscribe({
        next: (message) => {
          if (ended) return;
          if (context.raw) subscriber.next({ type: 'raw', rawValue: message });
          ended = parts.message(message);
          if (ended) subscriber.complete();
        },
        error: (error: unknown) => {
          subscriber.error(error);
        },
        complete: () => {
          if (!ended) {
            parts.closeBlocks();
            subscriber.next({ type: 'error', error: new Error(`the ${context.agent} run ended without a terminal message`) });
            subscriber.next({ type: 'finish', usage: modelUsage(undefined), finishReason: { unified: 'error', raw: undefined } });
          }
          subscriber.complete();
        },
      });
      return subscription;
    });
}

class PartWriter {
  readonly #context: ModelPartsContext;
  readonly #emit: (part: LanguageModelV4StreamPart) => void;
  #sessionId: string | undefined;
  #pid: number | undefined;
  #text: { readonly id: string; withdrawn: string } | null = null;
  #blocks = 0;
  #heldText = '';

  constructor(context: ModelPartsContext, emit: (part: LanguageModelV4StreamPart) => void) {
    this.#context = context;
    this.#emit = emit;
  }

  start(): void {
    this.#emit({ type: 'stream-start', warnings: [...this.#context.warnings] });
  }

  /** The parts of one message; `true` once the terminal was written. */
  message(message: CliMessage): boolean {
    switch (message.type) {
      case 'session.started':
      case 'session.resumed':
        this.#sessionId = message.sessionId;
        this.#pid = message.pid;
        this.#emit({ type: 'response-metadata', id: message.sessionId, modelId: message.model ?? this.#context.modelId });
        return false;
      case 'assistant':
        if (message.text === '') return false;
        if (this.#context.json) {
          this.#heldText += message.text;
          return false;
        }
        if (this.#text === null) {
          this.#text = { id: `text-${String(this.#blocks++)}`, withdrawn: '' };
          this.#emit({ type: 'text-start', id: this.#text.id, ...this.#metadata() });
        }
        this.#emit({ type: 'text-delta', id: this.#text.id, delta: message.text });
        return false;
      case 'assistant.withdrawn':
        if (this.#context.json) {
          this.#heldText = this.#heldText.slice(0, Math.max(0, this.#heldText.length - message.text.length));
          return false;
        }
        // Streamed text cannot be taken back from the SDK's stream: the block ends, saying what was withdrawn.
        if (this.#text !== null) this.#text.withdrawn += message.text;
        this.closeBlocks();
        return false;
      case 'assistant.thought': {
        this.closeBlocks();
        const id = `reasoning-${String(this.#blocks++)}`;
        this.#emit({ type: 'reasoning-start', id, ...this.#metadata() });
        this.#emit({ type: 'reasoning-delta', id, delta: message.text });
        this.#emit({ type: 'reasoning-end', id, ...this.#metadata() });
        return false;
      }
      case 'tool.call':
        this.closeBlocks();
        this.#emit({
          type: 'tool-call',
          toolCallId: message.toolCallId,
          toolName: message.name,
          input: JSON.stringify(message.input ?? {}),
          providerExecuted: true,
          dynamic: true,
          ...this.#metadata(message.kind === undefined ? {} : { kind: message.kind }),
        });
        return false;
      case 'tool.completed':
      case 'tool.failed':
        this.#emit({
          type: 'tool-result',
          toolCallId: message.toolCallId,
          toolName: message.name,
          result: message.output,
          dynamic: true,
          ...(message.type === 'tool.failed' ? { isError: true } : {}),
          ...this.#metadata(message.type === 'tool.completed' && message.content !== undefined ? { content: message.content } : {}),
        });
        return false;
      case 'terminal.completed':
        this.closeBlocks();
        if (this.#context.json) {
          const text = message.output === undefined ? this.#heldText : JSON.stringify(message.output);
          this.#emit({ type: 'text-start', id: 'text-json', ...this.#metadata() });
          this.#emit({ type: 'text-delta', id: 'text-json', delta: text });
          this.#emit({ type: 'text-end', id: 'text-json', ...this.#metadata() });
        }
        this.#emit({
          type: 'finish',
          usage: modelUsage(message.usage),
          finishReason: finishReason(message.stopReason, message.agentStopReason),
          ...this.#metadata({ stopReason: message.stopReason, ...(message.usage?.cost === undefined ? {} : { cost: message.usage.cost }) }),
        });
        return true;
      case 'terminal.failed':
        this.closeBlocks();
        if (this.#context.json && message.reason === 'output-schema') {
          // The answer did not satisfy the schema: given as it came, for the SDK to refuse it its own way (NoObjectGeneratedError).
          const text = this.#heldText === '' ? (message.answer ?? '') : this.#heldText;
          this.#emit({ type: 'text-start', id: 'text-json', ...this.#metadata() });
          this.#emit({ type: 'text-delta', id: 'text-json', delta: text });
          this.#emit({ type: 'text-end', id: 'text-json', ...this.#metadata() });
          this.#emit({ type: 'finish', usage: modelUsage(undefined), finishReason: { unified: 'other', raw: 'output-schema' }, ...this.#metadata(failureMetadata(message)) });
          return true;
        }
        this.#emit({ type: 'error', error: runFailureError(this.#context.agent, message, this.#context.prompt) });
        this.#emit({ type: 'finish', usage: modelUsage(undefined), finishReason: { unified: 'error', raw: message.reason }, ...this.#metadata(failureMetadata(message)) });
        return true;
      default:
        // tool.update, permissions, the agent's retries and warnings: in the raw parts only.
        return false;
    }
  }

  closeBlocks(): void {
    if (this.#text === null) return;
    const { id, withdrawn } = this.#text;
    this.#text = null;
    this.#emit({ type: 'text-end', id, ...this.#metadata(withdrawn === '' ? {} : { withdrawn }) });
  }

  #metadata(extra: Readonly<Record<string, unknown>> = {}): { providerMetadata?: SharedV4ProviderMetadata } {
    const fields = {
      ...(this.#sessionId === undefined ? {} : { sessionId: this.#sessionId }),
      ...(this.#pid === undefined ? {} : { pid: this.#pid }),
      agent: this.#context.agent,
      ...extra,
    };
    return { providerMetadata: { [PROVIDER_KEY]: JSON.parse(JSON.stringify(fields)) as SharedV4ProviderMetadata[string] } };
  }
}

function failureMetadata(failure: TerminalFailed): Readonly<Record<string, unknown>> {
  return { reason: failure.reason, ...(failure.httpStatus === undefined ? {} : { httpStatus: failure.httpStatus }) };
}

/** The SDK's usage from a run's: the run's input tokens are those not read from or written to a cache. */
export function modelUsage(usage: Usage | undefined): LanguageModelV4Usage {
  if (usage === undefined) {
    return { inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: undefined, text: undefined, reasoning: undefined } };
  }
  return {
    inputTokens: { total: usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens, noCache: usage.inputTokens, cacheRead: usage.cacheReadTokens, cacheWrite: usage.cacheWriteTokens },
    outputTokens: { total: usage.outputTokens, text: undefined, reasoning: undefined },
    raw: { ...usage },
  };
}

/**
 * The SDK's finish reason from a run's stop reason. A run that stopped wanting tools (`tool_use`, at
 * a turn limit) is `other`: the SDK's `tool-calls` would ask it to run tools of its own and call again.
 */
export function finishReason(stopReason: StopReason, raw: string | undefined): LanguageModelV4FinishReason {
  const unified = ({ end_turn: 'stop', max_tokens: 'length', refusal: 'content-filter', aborted: 'interrupted', tool_use: 'other', other: 'other' } as const)[stopReason];
  return { unified, raw: raw ?? stopReason };
}
