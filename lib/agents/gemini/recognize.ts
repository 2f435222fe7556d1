/**
 * Whether a line of stdout is one only Gemini CLI prints with `--output-format stream-json`: its
 * first line `{"type":"init","timestamp":…,"session_id":…,"model":…}`.
 */
export function recognizesGeminiOutput(line: string): boolean {
  const event = objectOf(line);
  if (event === undefined) return false;
  return event['type'] === 'init' && typeof event['session_id'] === 'string';
}

function objectOf(line: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
