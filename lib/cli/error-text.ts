const LIBRARY_PREFIX = 'agent-rx: ';

/**
 * An error's message for a line a command writes under its own name (`agent-rx run: …`): the
 * library's errors start with `agent-rx: `, which would say it twice.
 */
export function errorText(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.startsWith(LIBRARY_PREFIX) ? message.slice(LIBRARY_PREFIX.length) : message;
}
