import { realpathSync } from 'node:fs';
import { isAbsolute, relative } from 'node:path';

/**
 * A worker's `resolveCwd` that allows these folders and what is inside them: a run that asks for
 * none works in the first; a run that asks for another (after following symbolic links, so a link
 * cannot lead out), or for a folder that does not exist, is refused. The folders must exist now.
 *
 * @example
 * const resolveCwd = allowWorkingDirectories(['/srv/work', '/srv/scratch']);
 * resolveCwd(undefined); // '/srv/work' (its real path): a run that asks for no folder
 * resolveCwd('/srv/work/app'); // allowed: inside /srv/work
 * resolveCwd('/etc'); // throws: the working directory /etc is not one this worker allows
 */
export function allowWorkingDirectories(allowed: readonly string[]): (requested: string | undefined) => string {
  if (allowed.length === 0) throw new TypeError('agent-rx: allowWorkingDirectories needs at least one folder');
  const roots = allowed.map((folder) => {
    try {
      return realpathSync(folder);
    } catch {
      throw new TypeError(`agent-rx: the allowed working directory ${folder} does not exist`);
    }
  });
  const [first] = roots as [string, ...string[]];
  return (requested) => {
    if (requested === undefined) return first;
    let real: string;
    try {
      real = realpathSync(requested);
    } catch {
      throw new Error(`the working directory ${requested} does not exist on this worker`);
    }
    const inside = roots.some((root) => {
      const path = relative(root, real);
      return path === '' || (!path.startsWith('..') && !isAbsolute(path));
    });
    if (!inside) throw new Error(`the working directory ${requested} is not one this worker allows`);
    return real;
  };
}

/**
 * The default `resolveCwd`: runs work in the worker's folder; a run that asks for a folder is refused.
 *
 * @example
 * // The default, said out loud: every run works in the worker's own folder.
 * serveRuns({ connection: 'redis://127.0.0.1:6379', concurrency: 4, agents: { pi: {} }, resolveCwd: workerFolderOnly });
 */
export function workerFolderOnly(requested: string | undefined): string {
  if (requested !== undefined) throw new Error(`the working directory ${requested} is not one this worker allows (it allows none: runs work in its own folder)`);
  return process.cwd();
}
