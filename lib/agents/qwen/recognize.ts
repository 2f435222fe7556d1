import { parseJsonObject } from '../shared/json-object.js';

/**
 * Whether a line of stdout is one only Qwen Code prints with `--output-format stream-json`: its
 * first line `{"type":"system","subtype":"init",…,"qwen_code_version":…}`.
 */
export function recognizesQwenOutput(line: string): boolean {
  const event = parseJsonObject(line);
  if (event === undefined) return false;
  return event['type'] === 'system' && event['subtype'] === 'init' && typeof event['qwen_code_version'] === 'string';
}
