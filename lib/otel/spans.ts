import type { Attributes, Context, Span, SpanContext, Tracer } from '@opentelemetry/api';
import { context, createTraceState, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from './api.js';
import type { SessionMessage, TerminalFailed, TurnFailed, Usage } from '../messages.js';
import type { TraceContext } from '../process/trace-context.js';

/** Options of `traceRun` and `traceSession`. */
export interface TraceOptions {
  /** The tracer. Default: `trace.getTracer('agent-rx')` (a no-op until the host registers an SDK). */
  readonly tracer?: Tracer;
  /** `gen_ai.agent.name`, and in span names (`invoke_agent claude`): which agent runs. */
  readonly agent?: string;
  /** `gen_ai.request.model`: the model the caller asked for. */
  readonly model?: string;
  /** `gen_ai.provider.name` (`anthropic`, `openai`, `gcp.gemini`), where the caller knows it. */
  readonly provider?: string;
  /** Attributes added to the run's or session's span. */
  readonly attributes?: Attributes;
  /**
   * Record what the agent was told and said: the turn's prompt and the answer
   * (`gen_ai.input.messages`, `gen_ai.output.messages`), tool inputs and outputs
   * (`gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`), each cut to {@link MAX_CONTENT_CHARACTERS}.
   * Default false: they may hold secrets.
   */
  readonly recordContent?: boolean;
  /** For a run: its prompt, recorded with `recordContent` (a run's messages do not carry it). */
  readonly prompt?: string;
  /**
   * The parent of the span: an OpenTelemetry context, or a W3C trace context from elsewhere (an
   * editor's over ACP: `AcpSessionRequest.traceContext`). Default: the context active when the
   * stream is subscribed.
   */
  readonly context?: Context | TraceContext;
  /**
   * Give the agent process the span's trace context, `TRACEPARENT` and `TRACESTATE` in its
   * environment, so that a CLI that exports its own spans (Claude Code, Codex) joins the trace.
   * Default true.
   */
  readonly propagate?: boolean;
}

/** How much of a text, an input or an output a span records with `recordContent`. */
export const MAX_CONTENT_CHARACTERS = 16 * 1024;

export const TRACER_NAME = 'agent-rx';

export function tracerOf(options: TraceOptions): Tracer {
  return options.tracer ?? trace.getTracer(TRACER_NAME);
}

/** The parent context of a span: the `context` option (a W3C trace context made a remote parent), else the active one. */
export function parentOf(given: TraceOptions['context']): Context {
  if (given === undefined) return context.active();
  return isTraceContext(given) ? remoteContext(given) : given;
}

function isTraceContext(given: Context | TraceContext): given is TraceContext {
  return typeof (given as { traceparent?: unknown }).traceparent === 'string';
}

/** The context whose span is the one a W3C trace context names (a remote parent). */
function remoteContext(carried: TraceContext): Context {
  const [, traceId = '', spanId = '', flags = '00'] = carried.traceparent.split('-');
  const parent: SpanContext = {
    traceId,
    spanId,
    traceFlags: Number.parseInt(flags, 16),
    isRemote: true,
    ...(carried.tracestate === undefined ? {} : { traceState: createTraceState(carried.tracestate) }),
  };
  return trace.setSpanContext(ROOT_CONTEXT, parent);
}

/**
 * `TRACEPARENT` and `TRACESTATE` (W3C Trace Context) for a span: what a child process continues the
 * trace from. `traceRun` and `traceSession` give them to the agent process; for a process of the
 * caller's own, or a request to a service that reads them.
 *
 * @example
 * import { trace } from '@opentelemetry/api';
 * import { runPi } from 'agent-rx';
 * import { traceEnvironment } from 'agent-rx/otel';
 * const span = trace.getActiveSpan();
 * runPi({ prompt: 'Fix the failing test', env: span === undefined ? {} : traceEnvironment(span.spanContext()) }).subscribe(render);
 */
export function traceEnvironment(context: SpanContext): Record<string, string> {
  if (!trace.isSpanContextValid(context)) return {};
  const flags = (context.traceFlags & 0xff).toString(16).padStart(2, '0');
  const state = context.traceState?.serialize();
  return { TRACEPARENT: `00-${context.traceId}-${context.spanId}-${flags}`, ...(state === undefined || state === '' ? {} : { TRACESTATE: state }) };
}

function cut(text: string): string {
  return text.length <= MAX_CONTENT_CHARACTERS ? text : `${text.slice(0, MAX_CONTENT_CHARACTERS)}… (${text.length - MAX_CONTENT_CHARACTERS} more characters)`;
}

function json(value: unknown): string {
  try {
    // `undefined` (and a function) have no JSON: said as null.
    return value === undefined || typeof value === 'function' ? 'null' : cut(JSON.stringify(value));
  } catch {
    return '"(not serializable)"';
  }
}

/** The attributes of a usage, by the GenAI conventions. */
export function usageAttributes(usage: Usage): Attributes {
  return {
    'gen_ai.usage.input_tokens': usage.inputTokens,
    'gen_ai.usage.output_tokens': usage.outputTokens,
    'gen_ai.usage.cache_read.input_tokens': usage.cacheReadTokens,
    'gen_ai.usage.cache_creation.input_tokens': usage.cacheWriteTokens,
    ...(usage.cost === undefined ? {} : { 'agent_rx.usage.cost': usage.cost }),
  };
}

/**
 * One `invoke_agent` span (a run, or a session's turn) and the `execute_tool` spans of its tool
 * calls: opened and closed as the messages say, each tool span ended at the latest with it.
 */
export class InvocationSpan {
  readonly span: Span;
  readonly #tracer: Tracer;
  readonly #context: Context;
  readonly #record: boolean;
  readonly #tools = new Map<string, Span>();
  #answer = '';
  #ended = false;

  constructor(tracer: Tracer, parent: Context, options: TraceOptions, attributes: Attributes, prompt: string | undefined) {
    this.#tracer = tracer;
    this.#record = options.recordContent === true;
    const agent = options.agent;
    this.span = tracer.startSpan(
      agent === undefined ? 'invoke_agent' : `invoke_agent ${agent}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          'gen_ai.operation.name': 'invoke_agent',
          ...(agent === undefined ? {} : { 'gen_ai.agent.name': agent }),
          ...(options.model === undefined ? {} : { 'gen_ai.request.model': options.model }),
          ...(options.provider === undefined ? {} : { 'gen_ai.provider.name': options.provider }),
          ...attributes,
          ...(this.#record && prompt !== undefined ? { 'gen_ai.input.messages': json([{ role: 'user', parts: [{ type: 'text', content: prompt }] }]) } : {}),
        },
      },
      parent,
    );
    this.#context = trace.setSpan(parent, this.span);
  }

  /** The context whose active span is this one. */
  get context(): Context {
    return this.#context;
  }

  /** Reads one message of the run or turn (not its end). */
  see(message: SessionMessage): void {
    if (this.#ended) return;
    switch (message.type) {
      case 'session.started':
      case 'session.resumed':
        this.span.setAttribute('gen_ai.conversation.id', message.sessionId);
        if (message.model !== undefined) this.span.setAttribute('gen_ai.response.model', message.model);
        return;
      case 'assistant':
        if (this.#record && this.#answer.length <= MAX_CONTENT_CHARACTERS) this.#answer += message.text;
        return;
      case 'assistant.withdrawn':
        if (this.#record) this.#answer = this.#answer.slice(0, Math.max(0, this.#answer.length - message.text.length));
        return;
      case 'tool.call': {
        const tool = this.#tracer.startSpan(
          `execute_tool ${message.name}`,
          {
            kind: SpanKind.INTERNAL,
            attributes: {
              'gen_ai.operation.name': 'execute_tool',
              'gen_ai.tool.name': message.name,
              'gen_ai.tool.call.id': message.toolCallId,
              'gen_ai.tool.type': 'function',
              ...(message.kind === undefined ? {} : { 'agent_rx.tool.kind': message.kind }),
              ...(this.#record ? { 'gen_ai.tool.call.arguments': json(message.input) } : {}),
            },
          },
          this.#context,
        );
        this.#tools.get(message.toolCallId)?.end();
        this.#tools.set(message.toolCallId, tool);
        return;
      }
      case 'tool.completed':
      case 'tool.failed': {
        const tool = this.#tools.get(message.toolCallId);
        if (tool === undefined) return;
        this.#tools.delete(message.toolCallId);
        if (this.#record) tool.setAttribute('gen_ai.tool.call.result', cut(message.output));
        if (message.type === 'tool.failed') {
          tool.setAttribute('error.type', 'tool_error');
          tool.setStatus({ code: SpanStatusCode.ERROR, message: cut(message.output) });
        }
        tool.end();
        return;
      }
      case 'permission.requested':
        this.span.addEvent('agent_rx.permission.requested', { 'agent_rx.permission.request_id': message.requestId, 'gen_ai.tool.name': message.tool, 'agent_rx.tool.kind': message.kind, ...(message.toolCallId === undefined ? {} : { 'gen_ai.tool.call.id': message.toolCallId }) });
        return;
      case 'permission.resolved':
        this.span.addEvent('agent_rx.permission.resolved', { 'agent_rx.permission.request_id': message.requestId, 'agent_rx.permission.decision': message.decision, 'agent_rx.permission.by': message.by });
        return;
      case 'agent.retry':
        this.span.addEvent('agent_rx.agent.retry', {
          'agent_rx.retry.reason': message.reason,
          ...(message.attempt === undefined ? {} : { 'agent_rx.retry.attempt': message.attempt }),
          ...(message.delayMs === undefined ? {} : { 'agent_rx.retry.delay_ms': message.delayMs }),
        });
        return;
      case 'agent.warning':
        this.span.addEvent('agent_rx.warning', { 'agent_rx.warning.message': message.message });
        return;
      case 'run.retrying':
        // A new attempt: its tools are new too.
        this.#closeTools('retried');
        this.#answer = '';
        this.span.addEvent('agent_rx.run.retrying', {
          'agent_rx.retry.attempt': message.attempt,
          'agent_rx.retry.delay_ms': message.delayMs,
          'error.type': message.failure.reason,
          'agent_rx.retry.failure': message.failure.message,
        });
        return;
      default:
        return;
    }
  }

  /** Ends it as the run or turn completed. */
  completed(usage: Usage | undefined, stopReason: string, sessionId: string | undefined): void {
    if (this.#ended) return;
    if (sessionId !== undefined) this.span.setAttribute('gen_ai.conversation.id', sessionId);
    this.span.setAttributes({ 'gen_ai.response.finish_reasons': [stopReason], ...(usage === undefined ? {} : usageAttributes(usage)) });
    this.#recordAnswer(stopReason);
    this.#end('completed');
  }

  /** Ends it as the run or turn failed: `error.type` is the failure's reason. */
  failed(failure: TerminalFailed | TurnFailed): void {
    if (this.#ended) return;
    if (failure.type === 'terminal.failed' && failure.sessionId !== undefined) this.span.setAttribute('gen_ai.conversation.id', failure.sessionId);
    this.span.setAttributes({
      'error.type': failure.reason,
      ...(failure.httpStatus === undefined ? {} : { 'http.response.status_code': failure.httpStatus }),
      ...(failure.budget === undefined ? {} : { 'agent_rx.budget.limit': failure.budget.limit, 'agent_rx.budget.max': failure.budget.max, 'agent_rx.budget.used': failure.budget.used }),
      ...(failure.timeout === undefined ? {} : { 'agent_rx.timeout.limit': failure.timeout.limit, 'agent_rx.timeout.ms': failure.timeout.ms }),
    });
    this.span.setStatus({ code: SpanStatusCode.ERROR, message: failure.message });
    this.#recordAnswer(undefined);
    this.#end('failed');
  }

  /**
   * Ends it without an end from the agent: the caller unsubscribed (a cancellation, not an error),
   * the stream errored, or it completed without one.
   */
  abandoned(how: 'unsubscribed' | 'errored' | 'incomplete', error?: unknown): void {
    if (this.#ended) return;
    if (how === 'errored') {
      this.span.recordException(error instanceof Error ? error : String(error));
      this.span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      this.span.setAttribute('error.type', error instanceof Error ? error.name : 'error');
    }
    this.#end(how);
  }

  #recordAnswer(finish: string | undefined): void {
    if (!this.#record) return;
    this.span.setAttribute('gen_ai.output.messages', json([{ role: 'assistant', parts: [{ type: 'text', content: cut(this.#answer) }], ...(finish === undefined ? {} : { finish_reason: finish }) }]));
  }

  #closeTools(why: string): void {
    for (const tool of this.#tools.values()) {
      tool.setAttribute('agent_rx.tool.unfinished', why);
      tool.end();
    }
    this.#tools.clear();
  }

  #end(outcome: string): void {
    this.#ended = true;
    this.#closeTools(outcome);
    this.span.setAttribute('agent_rx.outcome', outcome);
    this.span.end();
  }
}
