import type { TelemetrySettings } from '../definition.js';
import { endpointBase, type AgentTelemetry } from '../shared/telemetry.js';

/**
 * Codex: its `otel` configuration (`-c`), one exporter per signal with the signal's full URL; the
 * OTLP variables alone do nothing. It reads `TRACEPARENT`.
 */
export function codexTelemetry(telemetry: AgentTelemetry, options: Readonly<Record<string, unknown>>): TelemetrySettings {
  const protocol = telemetry.protocol === 'http/json' ? 'json' : 'binary';
  const exporter = (signal: string): Record<string, unknown> => ({ 'otlp-http': { endpoint: `${endpointBase(telemetry)}/v1/${signal}`, protocol } });
  const config = (options['config'] ?? {}) as Readonly<Record<string, unknown>>;
  return { options: { config: { ...config, otel: { exporter: exporter('logs'), trace_exporter: exporter('traces'), metrics_exporter: exporter('metrics') } } } };
}
