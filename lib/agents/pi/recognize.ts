/**
 * Whether a line of stdout is one only pi prints in `--mode json`: its first line, the session
 * header `{"type":"session","version":3,"id":…}`, or the `agent_start` that follows it.
 */
export function recognizesPiOutput(line: string): boolean {
  const event = objectOf(line);
  if (event === undefined) return false;
  return (event['type'] === 'session' && typeof event['id'] === 'string' && typeof event['version'] === 'number') || event['type'] === 'agent_start';
}

function objectOf(line: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
