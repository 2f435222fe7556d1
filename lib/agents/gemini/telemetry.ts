import type { TelemetrySettings } from '../definition.js';
import { endpointBase, onlyProtocol, type AgentTelemetry } from '../shared/telemetry.js';

/** Gemini CLI: its telemetry variables (OTLP over HTTP, JSON). It does not read `TRACEPARENT`: its spans are traces of their own. */
export function geminiTelemetry(telemetry: AgentTelemetry): TelemetrySettings {
  onlyProtocol('Gemini CLI', telemetry, 'http/json');
  return {
    env: {
      GEMINI_TELEMETRY_ENABLED: 'true',
      GEMINI_TELEMETRY_OTLP_ENDPOINT: endpointBase(telemetry),
      GEMINI_TELEMETRY_OTLP_PROTOCOL: 'http',
      GEMINI_TELEMETRY_TRACES_ENABLED: 'true',
    },
  };
}
