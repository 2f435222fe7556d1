import { parseJsonObject } from '../shared/json-object.js';

/**
 * Whether a line of stdout is one only `codex exec --json` prints: its first line
 * `{"type":"thread.started","thread_id":…}`, or the `turn.started` that follows it.
 */
export function recognizesCodexOutput(line: string): boolean {
  const event = parseJsonObject(line);
  if (event === undefined) return false;
  return (event['type'] === 'thread.started' && typeof event['thread_id'] === 'string') || event['type'] === 'turn.started';
}
