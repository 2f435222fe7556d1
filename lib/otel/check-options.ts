import { TRACEPARENT_PATTERN } from '../process/trace-context.js';
import type { TraceOptions } from './spans.js';

const KNOWN = new Set(['tracer', 'agent', 'model', 'provider', 'attributes', 'recordContent', 'prompt', 'context', 'propagate']);

/** Checks the options of `traceRun` and `traceSession` at call time: a programmer error is a `TypeError`. */
export function checkTraceOptions(what: string, options: TraceOptions): void {
  if (typeof options !== 'object' || (options as unknown) === null) throw new TypeError(`agent-rx: ${what} takes an object of options`);
  for (const key of Object.keys(options)) {
    if (!KNOWN.has(key)) throw new TypeError(`agent-rx: ${what} has no option ${JSON.stringify(key)} (${[...KNOWN].join(', ')})`);
  }
  if (options.tracer !== undefined && typeof (options.tracer as { startSpan?: unknown }).startSpan !== 'function') {
    throw new TypeError(`agent-rx: ${what}'s tracer must be an OpenTelemetry Tracer (trace.getTracer(...))`);
  }
  for (const key of ['agent', 'model', 'provider', 'prompt'] as const) {
    const value = options[key];
    if (value !== undefined && (typeof value !== 'string' || value === '')) throw new TypeError(`agent-rx: ${what}'s ${key} must be a non-empty string, got ${JSON.stringify(value)}`);
  }
  const given = options.context as { traceparent?: unknown } | undefined;
  if (given !== undefined && 'traceparent' in given && (typeof given.traceparent !== 'string' || !TRACEPARENT_PATTERN.test(given.traceparent))) {
    throw new TypeError(`agent-rx: ${what}'s context.traceparent must be a W3C traceparent (00-<32 hex>-<16 hex>-<2 hex>), got ${JSON.stringify(given.traceparent)}`);
  }
  for (const key of ['recordContent', 'propagate'] as const) {
    const value = options[key];
    if (value !== undefined && typeof value !== 'boolean') throw new TypeError(`agent-rx: ${what}'s ${key} must be a boolean, got ${String(value)}`);
  }
}
