/** A W3C Trace Context: `traceparent` (`00-<trace id>-<span id>-<flags>`) and `tracestate`. */
export interface TraceContext {
  traceparent: string;
  tracestate?: string;
}

/** A W3C `traceparent`: version, trace id, parent span id, flags, in lowercase hex. */
export const TRACEPARENT_PATTERN = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

/** The longest `tracestate` carried (W3C allows 32 members of at most 256 characters; 512 is what vendors keep). */
export const MAX_TRACESTATE_LENGTH = 512;

/**
 * The trace context in `carrier` (`traceparent`, `tracestate` keys: an ACP `_meta`), or in its
 * `TRACEPARENT` and `TRACESTATE` variables (an environment); `undefined` when it has none or a
 * `traceparent` that is not W3C's (which, as W3C says, starts no trace of the sender's).
 */
export function traceContextOf(carrier: unknown, keys: 'meta' | 'env' = 'meta'): TraceContext | undefined {
  if (typeof carrier !== 'object' || carrier === null) return undefined;
  const fields = carrier as Record<string, unknown>;
  const traceparent = fields[keys === 'meta' ? 'traceparent' : 'TRACEPARENT'];
  if (typeof traceparent !== 'string' || !TRACEPARENT_PATTERN.test(traceparent)) return undefined;
  const tracestate = fields[keys === 'meta' ? 'tracestate' : 'TRACESTATE'];
  return typeof tracestate === 'string' && tracestate !== '' && tracestate.length <= MAX_TRACESTATE_LENGTH ? { traceparent, tracestate } : { traceparent };
}

/** `TRACEPARENT` and `TRACESTATE` for a process's environment. */
export function traceEnv(context: TraceContext | undefined): Record<string, string> {
  if (context === undefined) return {};
  return { TRACEPARENT: context.traceparent, ...(context.tracestate === undefined ? {} : { TRACESTATE: context.tracestate }) };
}
