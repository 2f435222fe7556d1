import { endpointBase, type AgentTelemetry } from './watch-options.js';

// What every CLI's own OpenTelemetry export is pointed with: each agent's folder says how it takes it.

/** Refuses a protocol a CLI cannot send. */
export function onlyProtocol(agent: string, telemetry: AgentTelemetry, protocol: 'http/json'): void {
  if (telemetry.protocol !== undefined && telemetry.protocol !== protocol) {
    throw new TypeError(`agent-rx: ${agent} exports its telemetry over OTLP/HTTP in JSON only: telemetry.protocol must be '${protocol}' or left out, got '${telemetry.protocol}'`);
  }
}

export { endpointBase, type AgentTelemetry };
