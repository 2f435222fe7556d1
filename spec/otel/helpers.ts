import { context, trace, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';

/** An OpenTelemetry SDK whose spans stay in memory: what the trace specs read. */
export interface MemoryTracing {
  readonly tracer: Tracer;
  readonly exporter: InMemorySpanExporter;
  /** The finished spans, in the order they ended. */
  spans(): ReadableSpan[];
  /** The finished span named `name` (the only one). */
  span(name: string): ReadableSpan;
  /** The spans whose parent is `parent`. */
  children(parent: ReadableSpan): ReadableSpan[];
}

let contextManager: AsyncLocalStorageContextManager | undefined;

/** A tracer on an in-memory exporter, and the async context manager (so that an active span is a parent). */
export function memoryTracing(): MemoryTracing {
  if (contextManager === undefined) {
    contextManager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(contextManager);
  }
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const tracer = provider.getTracer('agent-rx-spec');
  const spans = (): ReadableSpan[] => exporter.getFinishedSpans();
  return {
    tracer,
    exporter,
    spans,
    span: (name) => {
      const found = spans().filter((span) => span.name === name);
      if (found.length !== 1) throw new Error(`${found.length} spans named ${name}: ${spans().map((span) => span.name).join(', ')}`);
      return found[0] as ReadableSpan;
    },
    children: (parent) => spans().filter((span) => span.parentSpanContext?.spanId === parent.spanContext().spanId),
  };
}

/** `TRACEPARENT` of a span, as W3C Trace Context writes it. */
export function traceparentOf(span: ReadableSpan): string {
  const { traceId, spanId, traceFlags } = span.spanContext();
  return `00-${traceId}-${spanId}-${traceFlags.toString(16).padStart(2, '0')}`;
}

export { trace };
