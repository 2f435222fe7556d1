import type { TelemetrySettings } from '../definition.js';
import { endpointBase, type AgentTelemetry } from './watch-options.js';

// How each CLI is told to export its own OpenTelemetry (traces, logs, metrics) to an OTLP/HTTP
// endpoint, as observed of the pinned versions: what they read, and what they honour.

/** Refuses a protocol a CLI cannot send. */
function only(agent: string, telemetry: AgentTelemetry, protocol: 'http/json'): void {
  if (telemetry.protocol !== undefined && telemetry.protocol !== protocol) {
    throw new TypeError(`agent-rx: ${agent} exports its telemetry over OTLP/HTTP in JSON only: telemetry.protocol must be '${protocol}' or left out, got '${telemetry.protocol}'`);
  }
}

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

/** Gemini CLI: its telemetry variables (OTLP over HTTP, JSON). It does not read `TRACEPARENT`: its spans are traces of their own. */
export function geminiTelemetry(telemetry: AgentTelemetry): TelemetrySettings {
  only('Gemini CLI', telemetry, 'http/json');
  return {
    env: {
      GEMINI_TELEMETRY_ENABLED: 'true',
      GEMINI_TELEMETRY_OTLP_ENDPOINT: endpointBase(telemetry),
      GEMINI_TELEMETRY_OTLP_PROTOCOL: 'http',
      GEMINI_TELEMETRY_TRACES_ENABLED: 'true',
    },
  };
}

/** Qwen Code: its telemetry variables (OTLP over HTTP, JSON). Its runs do not read `TRACEPARENT`. */
export function qwenTelemetry(telemetry: AgentTelemetry): TelemetrySettings {
  only('Qwen Code', telemetry, 'http/json');
  return { env: { QWEN_TELEMETRY_ENABLED: 'true', QWEN_TELEMETRY_OTLP_ENDPOINT: endpointBase(telemetry), QWEN_TELEMETRY_OTLP_PROTOCOL: 'http' } };
}
