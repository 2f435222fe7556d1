import { statSync } from 'node:fs';
import type { CliMessage, SessionMessage } from '../messages.js';

/** What is wrong with `path` as the folder a flag names (`--cwd`), or `undefined` when it is one. */
export function directoryProblem(flag: string, path: string): string | undefined {
  let stats;
  try {
    stats = statSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? `${flag} ${path}: no such directory` : `${flag} ${path} cannot be used: ${error instanceof Error ? error.message : String(error)}`;
  }
  return stats.isDirectory() ? undefined : `${flag} ${path} is not a directory`;
}

// The sources' install hint speaks to library callers (`pass \`executable\``); here it names the flag.
const LIBRARY_HINT = 'or pass `executable`.';
const FLAG_HINT = 'or pass `--executable <path>`.';

/** A spawn failure's message as a command-line user needs it: the `--executable` flag, not the option. */
export function withFlagHint<M extends CliMessage | SessionMessage>(message: M): M {
  if (!(message.type === 'terminal.failed' || message.type === 'turn.failed') || message.reason !== 'spawn' || !message.message.endsWith(LIBRARY_HINT)) return message;
  return { ...message, message: `${message.message.slice(0, -LIBRARY_HINT.length)}${FLAG_HINT}` };
}
