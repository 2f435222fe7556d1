import { parseJsonObject } from '../shared/json-object.js';

/**
 * Whether a line of stdout is one only Gemini CLI prints with `--output-format stream-json`: its
 * first line `{"type":"init","timestamp":…,"session_id":…,"model":…}`.
 */
export function recognizesGeminiOutput(line: string): boolean {
  const event = parseJsonObject(line);
  if (event === undefined) return false;
  return event['type'] === 'init' && typeof event['session_id'] === 'string';
}
