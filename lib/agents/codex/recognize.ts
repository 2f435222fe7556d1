/**
 * Whether a line of stdout is one only `codex exec --json` prints: its first line
 * `{"type":"thread.started","thread_id":…}`, or the `turn.started` that follows it.
 */
export function recognizesCodexOutput(line: string): boolean {
  const event = objectOf(line);
  if (event === undefined) return false;
  return (event['type'] === 'thread.started' && typeof event['thread_id'] === 'string') || event['type'] === 'turn.started';
}

function objectOf(line: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
