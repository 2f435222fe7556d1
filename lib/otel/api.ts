import type * as OpenTelemetry from '@opentelemetry/api';

// @opentelemetry/api, the optional peer agent-rx/otel runs on: loaded by import() rather than by
// name, so that a missing package fails here, in words, instead of failing the link of the entry
// point with Node's bare ERR_MODULE_NOT_FOUND.

const loaded = await import('@opentelemetry/api').catch((error: unknown) => {
  if (error instanceof Error && (error as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND' && error.message.includes("'@opentelemetry/api'")) {
    throw new Error('agent-rx/otel needs the optional package @opentelemetry/api: npm install @opentelemetry/api (it cannot be found from agent-rx)', { cause: error });
  }
  throw error;
});

export const context: typeof OpenTelemetry.context = loaded.context;
export const trace: typeof OpenTelemetry.trace = loaded.trace;
export const SpanKind: typeof OpenTelemetry.SpanKind = loaded.SpanKind;
export const SpanStatusCode: typeof OpenTelemetry.SpanStatusCode = loaded.SpanStatusCode;
export const ROOT_CONTEXT: typeof OpenTelemetry.ROOT_CONTEXT = loaded.ROOT_CONTEXT;
export const createTraceState: typeof OpenTelemetry.createTraceState = loaded.createTraceState;
