import { statSync } from 'node:fs';

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
