import type { TelemetrySettings } from '../definition.js';
import { endpointBase, onlyProtocol, type AgentTelemetry } from '../shared/telemetry.js';

/** Qwen Code: its telemetry variables (OTLP over HTTP, JSON). Its runs do not read `TRACEPARENT`. */
export function qwenTelemetry(telemetry: AgentTelemetry): TelemetrySettings {
  onlyProtocol('Qwen Code', telemetry, 'http/json');
  return { env: { QWEN_TELEMETRY_ENABLED: 'true', QWEN_TELEMETRY_OTLP_ENDPOINT: endpointBase(telemetry), QWEN_TELEMETRY_OTLP_PROTOCOL: 'http' } };
}
