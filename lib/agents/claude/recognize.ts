import { parseJsonObject } from '../shared/json-object.js';

/**
 * Whether a line of stdout is one only Claude Code prints with `--output-format stream-json`: a
 * `system` event carrying `session_id` (its first line is `{"type":"system","subtype":"init",…}`,
 * which names `claude_code_version`: other CLIs print Claude-shaped init lines too), or a
 * `control_response`/`control_request` of a duplex session.
 */
export function recognizesClaudeOutput(line: string): boolean {
  const event = parseJsonObject(line);
  if (event === undefined) return false;
  const type = event['type'];
  const subtype = event['subtype'];
  const system = type === 'system' && typeof subtype === 'string' && typeof event['session_id'] === 'string' && (subtype !== 'init' || typeof event['claude_code_version'] === 'string');
  return system || type === 'control_response' || type === 'control_request';
}
