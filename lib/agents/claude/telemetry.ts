import type { TelemetrySettings } from '../definition.js';
import { endpointBase, type AgentTelemetry } from '../shared/telemetry.js';

/**
 * Claude Code: its telemetry switch and the standard OTLP variables; traces need its enhanced
 * telemetry (beta). It reads `TRACEPARENT`: its spans continue the caller's trace.
 */
export function claudeTelemetry(telemetry: AgentTelemetry): TelemetrySettings {
  return {
    env: {
      CLAUDE_CODE_ENABLE_TELEMETRY: '1',
      CLAUDE_CODE_ENHANCED_TELEMETRY_BETA: '1',
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_LOGS_EXPORTER: 'otlp',
      OTEL_METRICS_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_PROTOCOL: telemetry.protocol ?? 'http/protobuf',
      OTEL_EXPORTER_OTLP_ENDPOINT: endpointBase(telemetry),
    },
  };
}
