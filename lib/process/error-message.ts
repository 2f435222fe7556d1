/** An error as one line: its code first, unless its message starts with it already (Node's fs errors do). */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === undefined || error.message.startsWith(code) ? error.message : `${code}: ${error.message}`;
  }
  return String(error);
}

/** An error as it came when it is one (an `APICallError`, say, keeps its identity), else one with its text. */
export function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
