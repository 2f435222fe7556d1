import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4Content,
  LanguageModelV4FinishReason,
  LanguageModelV4GenerateResult,
  LanguageModelV4StreamPart,
  LanguageModelV4StreamResult,
  LanguageModelV4Usage,
  SharedV4ProviderMetadata,
  SharedV4Warning,
} from '@ai-sdk/provider';
import { Subscription, type Observable } from 'rxjs';
import { agentByName, AGENTS, isAgentName, type AgentName, type AgentRunOptions } from '../agent-table.js';
import type { CliMessage } from '../messages.js';
import { runAgent } from '../sources/run-agent.js';
import { callPrompt, turnRun } from './call-prompt.js';
import { modelParts, modelUsage, PROVIDER_KEY, type ModelPartsContext } from './model-parts.js';
import { asError } from '../process/error-message.js';
import { UnsupportedFunctionalityError } from './peers.js';

/** A model's options: the agent's run options, without what each call gives (`prompt`, `outputSchema`). */
export type AgentRxModelOptions<N extends AgentName> = Omit<AgentRunOptions<N>, 'prompt' | 'outputSchema'>;

/**
 * What a call may say to agent-rx in `providerOptions.agentRx`: the agent session to resume (else
 * the last earlier answer's, from its provider metadata), and run options for this call only,
 * over the model's (checked by the agent's schema).
 */
export interface AgentRxCallOptions {
  readonly sessionId?: string;
  readonly options?: Readonly<Record<string, unknown>>;
}

/** Call settings an agent CLI has no way to honour: each one given is a warning of the call. */
const UNSUPPORTED_SETTINGS = ['maxOutputTokens', 'temperature', 'stopSequences', 'topP', 'topK', 'presencePenalty', 'frequencyPenalty', 'seed', 'reasoning'] as const;

/**
 * An agent as an AI SDK language model (specification v4): `streamText`, `generateText`, and
 * `generateText` with `Output.object` (or `generateObject`) run the agent once per call.
 *
 * - The agent's text, its thinking (as reasoning), and its own tool calls and their results (as
 *   provider-executed, dynamic tools) come out as the SDK's parts; usage, the finish reason and the
 *   agent's session id (`providerMetadata.agentRx.sessionId`) come with the finish.
 * - A call whose earlier assistant messages carry that metadata (the SDK keeps it on the parts of
 *   `response.messages`), or whose `providerOptions.agentRx.sessionId` names a session, resumes
 *   that session and sends the new user turn only; without it, the conversation so far is sent as
 *   text, with a warning.
 * - `abortSignal` is the run's stop sequence: the agent and its tools are stopped, by process tree.
 * - A failed run is an `APICallError` (its `isRetryable` is `isRetryableFailure`'s verdict, so the
 *   SDK's `maxRetries` retries what a retry can mend): thrown by `doGenerate`, and by `doStream`
 *   when the run fails before any of its content, else an `error` part.
 * - `responseFormat: json` is the run's `outputSchema`: natively where the agent takes a schema,
 *   else asked for in the prompt and validated; the answer's text is the validated JSON.
 * - Function tools of the caller are refused (`UnsupportedFunctionalityError`): the agent calls its
 *   own tools, and host tools are the model options' `tools`. Sampling settings are warnings.
 *
 * @example
 * import { streamText } from 'ai';
 * import { agentRx } from 'agent-rx/ai-sdk';
 *
 * const result = streamText({ model: agentRx('claude', { cwd: '/path/to/project' }), prompt: 'Why does the build fail?' });
 * for await (const text of result.textStream) process.stdout.write(text);
 */
export function agentRx<N extends AgentName>(agent: N, options?: AgentRxModelOptions<N>): LanguageModelV4 {
  if (typeof agent !== 'string' || !isAgentName(agent)) throw new TypeError(`agent-rx: agentRx() takes an agent's name (${Object.keys(AGENTS).join(', ')}), not ${JSON.stringify(agent)}`);
  const given = (options ?? {}) as Readonly<Record<string, unknown>>;
  if ('prompt' in given || 'outputSchema' in given) throw new TypeError("agent-rx: agentRx()'s options are the agent's run options without prompt and outputSchema: each call gives those");
  // The options are the agent's: checked now (nothing runs until a call subscribes).
  runAgent(agentByName(agent), { ...given, prompt: 'a check of the options' });
  return new AgentRxLanguageModel(agent, given);
}

class AgentRxLanguageModel implements LanguageModelV4 {
  readonly specificationVersion = 'v4';
  readonly provider: string;
  readonly modelId: string;
  // Every URL is downloaded by the SDK: the agent takes the bytes.
  readonly supportedUrls = {};
  readonly #agent: AgentName;
  readonly #options: Readonly<Record<string, unknown>>;

  constructor(agent: AgentName, options: Readonly<Record<string, unknown>>) {
    this.#agent = agent;
    this.#options = options;
    this.provider = `agent-rx.${agent}`;
    this.modelId = typeof options['model'] === 'string' ? options['model'] : agent;
  }

  /** The run of a call, made now (a `TypeError` for what the agent cannot take), and what its parts need. */
  #call(call: LanguageModelV4CallOptions): { readonly run$: Observable<CliMessage>; readonly context: ModelPartsContext } {
    const warnings: SharedV4Warning[] = [];
    for (const setting of UNSUPPORTED_SETTINGS) {
      if (call[setting] !== undefined && !(setting === 'reasoning' && call.reasoning === 'provider-default')) {
        warnings.push({ type: 'unsupported', feature: setting, details: `the ${AGENTS[this.#agent].displayName} CLI takes no ${setting}: set what it has in the model's options` });
      }
    }
    if (call.tools !== undefined && call.tools.length > 0) {
      throw new UnsupportedFunctionalityError({
        functionality: `tools given to the call (${call.tools.map((tool) => tool.name).join(', ')}): the agent calls its own tools; give it host tools with the model options' tools`,
      });
    }
    const asked = (call.providerOptions?.[PROVIDER_KEY] ?? {}) as { readonly sessionId?: unknown; readonly options?: unknown };
    if (asked.sessionId !== undefined && typeof asked.sessionId !== 'string') throw new TypeError('agent-rx: providerOptions.agentRx.sessionId must be a string');
    if (asked.options !== undefined && (typeof asked.options !== 'object' || asked.options === null)) throw new TypeError('agent-rx: providerOptions.agentRx.options must be an object of run options');
    const read = callPrompt(call.prompt, asked.sessionId);
    warnings.push(...read.warnings);
    const definition = agentByName(this.#agent);
    const turn = turnRun(definition, { ...this.#options, ...(asked.options as Readonly<Record<string, unknown>> | undefined) }, read);
    warnings.push(...turn.warnings);
    const format = call.responseFormat;
    const json = format?.type === 'json';
    const run$ = runAgent(definition, { ...turn.options, prompt: turn.prompt, ...(format?.type === 'json' ? { outputSchema: format.schema ?? {} } : {}) });
    const promptText = typeof turn.prompt === 'string' ? turn.prompt : turn.prompt.map((part) => (typeof part === 'string' ? part : `[${part.type}]`)).join('');
    return {
      run$,
      context: { agent: this.#agent, modelId: this.modelId, warnings, prompt: promptText, json, raw: call.includeRawChunks === true },
    };
  }

  doStream(call: LanguageModelV4CallOptions): Promise<LanguageModelV4StreamResult> {
    const { run$, context } = this.#call(call);
    const signal = call.abortSignal;
    if (signal?.aborted === true) return Promise.reject(abortReason(signal));
    return new Promise((resolve, reject) => {
      // Parts are held until the run's first content: a run that fails before it rejects the call,
      // which the SDK's retries act on; after it, a failure is an `error` part.
      const held: LanguageModelV4StreamPart[] = [];
      let controller: ReadableStreamDefaultController<LanguageModelV4StreamPart> | null = null;
      let settled = false;
      const subscription = new Subscription();
      const onAbort = (): void => {
        subscription.unsubscribe();
        const reason = abortReason(signal as AbortSignal);
        if (!settled) {
          settled = true;
          reject(reason);
        } else controller?.error(reason);
      };
      const open = (): void => {
        settled = true;
        resolve({
          stream: new ReadableStream<LanguageModelV4StreamPart>({
            start: (started) => {
              controller = started;
              for (const part of held.splice(0)) started.enqueue(part);
            },
            cancel: () => {
              signal?.removeEventListener('abort', onAbort);
              subscription.unsubscribe();
            },
          }),
          request: { body: { agent: this.#agent, prompt: context.prompt } },
        });
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      subscription.add(run$.pipe(modelParts(context)).subscribe({
        next: (part) => {
          if (controller !== null) {
            controller.enqueue(part);
            return;
          }
          if (!settled && part.type === 'error') {
            settled = true;
            signal?.removeEventListener('abort', onAbort);
            reject(asError(part.error));
            return;
          }
          held.push(part);
          if (!settled && isContent(part)) open();
        },
        error: (error: unknown) => {
          signal?.removeEventListener('abort', onAbort);
          if (!settled) {
            settled = true;
            reject(asError(error));
          } else controller?.error(error);
        },
        complete: () => {
          signal?.removeEventListener('abort', onAbort);
          if (!settled) open();
          controller?.close();
        },
      }));
    });
  }

  doGenerate(call: LanguageModelV4CallOptions): Promise<LanguageModelV4GenerateResult> {
    const { run$, context } = this.#call(call);
    const signal = call.abortSignal;
    if (signal?.aborted === true) return Promise.reject(abortReason(signal));
    return new Promise((resolve, reject) => {
      const result = new GeneratedResult(context.warnings);
      const subscription = new Subscription();
      const onAbort = (): void => {
        subscription.unsubscribe();
        reject(abortReason(signal as AbortSignal));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      subscription.add(run$.pipe(modelParts(context)).subscribe({
        next: (part) => {
          result.add(part);
        },
        error: (error: unknown) => {
          signal?.removeEventListener('abort', onAbort);
          reject(asError(error));
        },
        complete: () => {
          signal?.removeEventListener('abort', onAbort);
          if (result.error !== undefined) reject(asError(result.error));
          else resolve({ ...result.value(), request: { body: { agent: this.#agent, prompt: context.prompt } } });
        },
      }));
    });
  }
}

function isContent(part: LanguageModelV4StreamPart): boolean {
  return part.type === 'text-delta' || part.type === 'reasoning-start' || part.type === 'tool-call' || part.type === 'finish';
}

/** What an aborted call rejects with: the signal's reason when it is an error, else an `AbortError`. */
function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new DOMException(typeof reason === 'string' ? reason : 'This operation was aborted', 'AbortError');
}

/** A whole call's content, from its parts. */
class GeneratedResult {
  readonly #warnings: readonly SharedV4Warning[];
  readonly #content: LanguageModelV4Content[] = [];
  readonly #open = new Map<string, { type: 'text' | 'reasoning'; text: string }>();
  #finish: { usage: LanguageModelV4Usage; finishReason: LanguageModelV4FinishReason; providerMetadata?: SharedV4ProviderMetadata } | undefined;
  #response: { id?: string; modelId?: string } = {};
  error: unknown;

  constructor(warnings: readonly SharedV4Warning[]) {
    this.#warnings = warnings;
  }

  add(part: LanguageModelV4StreamPart): void {
    switch (part.type) {
      case 'text-start':
      case 'reasoning-start':
        this.#open.set(part.id, { type: part.type === 'text-start' ? 'text' : 'reasoning', text: '' });
        return;
      case 'text-delta':
      case 'reasoning-delta': {
        const block = this.#open.get(part.id);
        if (block !== undefined) block.text += part.delta;
        return;
      }
      case 'text-end':
      case 'reasoning-end': {
        const block = this.#open.get(part.id);
        this.#open.delete(part.id);
        if (block === undefined) return;
        // Text the agent withdrew is not part of the answer.
        const withdrawn = part.providerMetadata?.[PROVIDER_KEY]?.['withdrawn'];
        const text = typeof withdrawn === 'string' ? block.text.slice(0, Math.max(0, block.text.length - withdrawn.length)) : block.text;
        if (text !== '') this.#content.push({ type: block.type, text, ...(part.providerMetadata === undefined ? {} : { providerMetadata: part.providerMetadata }) });
        return;
      }
      case 'tool-call':
      case 'tool-result':
        this.#content.push(part);
        return;
      case 'response-metadata':
        this.#response = { ...(part.id === undefined ? {} : { id: part.id }), ...(part.modelId === undefined ? {} : { modelId: part.modelId }) };
        return;
      case 'finish':
        this.#finish = { usage: part.usage, finishReason: part.finishReason, ...(part.providerMetadata === undefined ? {} : { providerMetadata: part.providerMetadata }) };
        return;
      case 'error':
        this.error = part.error;
        return;
      default:
        return;
    }
  }

  value(): LanguageModelV4GenerateResult {
    const finish = this.#finish ?? { usage: modelUsage(undefined), finishReason: { unified: 'error', raw: undefined } };
    return { content: this.#content, ...finish, response: this.#response, warnings: [...this.#warnings] };
  }
}
