import { parseJsonObject } from '../shared/json-object.js';

/**
 * Whether a line of stdout is one only pi prints in `--mode json`: its first line, the session
 * header `{"type":"session","version":3,"id":…}`, or the `agent_start` that follows it.
 */
export function recognizesPiOutput(line: string): boolean {
  const event = parseJsonObject(line);
  if (event === undefined) return false;
  return (event['type'] === 'session' && typeof event['id'] === 'string' && typeof event['version'] === 'number') || event['type'] === 'agent_start';
}
