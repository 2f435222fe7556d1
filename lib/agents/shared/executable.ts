// Finding an agent's program: on PATH, or inside an npm package this library can resolve.
import { accessSync, constants, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, join } from 'node:path';

/** Whether `path` is a file this process may execute. */
export function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The first of `names` found as an executable file in a folder of `env.PATH`, folder by folder. */
export function findOnPath(names: readonly string[], env: Readonly<Record<string, string | undefined>>): string | undefined {
  for (const dir of (env['PATH'] ?? '').split(delimiter)) {
    if (dir === '') continue;
    for (const name of names) {
      const candidate = join(dir, name);
      if (isExecutable(candidate)) return candidate;
    }
  }
  return undefined;
}

/** The `package.json` of the package `name` as a module at `from` (a path or file URL) resolves it, or undefined. */
export function resolvePackageJson(name: string, from: string | URL): string | undefined {
  try {
    return createRequire(from).resolve(`${name}/package.json`);
  } catch {
    return undefined;
  }
}
