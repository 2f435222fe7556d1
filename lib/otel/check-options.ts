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
  for (const key of ['recordContent', 'propagate'] as const) {
    const value = options[key];
    if (value !== undefined && typeof value !== 'boolean') throw new TypeError(`agent-rx: ${what}'s ${key} must be a boolean, got ${String(value)}`);
  }
}
