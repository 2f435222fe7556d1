import { parseJsonObject } from '../shared/json-object.js';

/**
 * Whether a line of stdout is one only Claude Code prints with `--output-format stream-json`: a
 * `system` event carrying `session_id` (its first line is `{"type":"system","subtype":"init",…}`),
 * or a `control_response`/`control_request` of a duplex session.
 */
export function recognizesClaudeOutput(line: string): boolean {
  const event = parseJsonObject(line);
  if (event === undefined) return false;
  const type = event['type'];
  return (type === 'system' && typeof event['subtype'] === 'string' && typeof event['session_id'] === 'string') || type === 'control_response' || type === 'control_request';
}
