// What a failed spawn's error code means for the program and the folder it was given.
import { accessSync, constants, statSync, type Stats } from 'node:fs';
import { resolve } from 'node:path';
import type { SpawnProblem, StartFailure } from './items.js';

/** The codes a spawn fails with when its program or folder is wrong (and nothing else is). */
const DIAGNOSED: ReadonlySet<string> = new Set(['ENOENT', 'EACCES', 'ENOTDIR']);

/**
 * `failure` with what the file system says about `command` and `cwd` (its `problem`), when the
 * spawn failed with ENOENT, EACCES or ENOTDIR and the file system can tell why. Never throws.
 */
export function withSpawnProblem(failure: StartFailure, command: string, cwd: string | undefined): StartFailure {
  if (failure.stage !== 'spawn' || !DIAGNOSED.has(failure.code)) return failure;
  const problem = spawnProblem(command, cwd);
  return problem === undefined ? failure : { ...failure, problem };
}

/** Why `command` in `cwd` cannot be started, or `undefined` when the file system shows nothing wrong. */
export function spawnProblem(command: string, cwd: string | undefined): SpawnProblem | undefined {
  // The child changes to its folder before it looks for the program: a missing folder fails first.
  if (cwd !== undefined) {
    const folder = stats(cwd);
    if (folder === undefined) return { kind: 'missing-cwd', cwd };
    if (!folder.isDirectory()) return { kind: 'cwd-not-directory', cwd };
  }
  if (!hasFolder(command)) return { kind: 'not-on-path', program: command };
  const path = resolve(cwd ?? process.cwd(), command);
  const file = stats(path);
  if (file === undefined) return { kind: 'missing', path };
  if (file.isDirectory()) return { kind: 'directory', path };
  try {
    accessSync(path, constants.X_OK);
  } catch {
    return { kind: 'not-executable', path };
  }
  return undefined;
}

// A program named with a folder is that file; a bare name is looked up on PATH.
function hasFolder(command: string): boolean {
  return command.includes('/') || (process.platform === 'win32' && command.includes('\\'));
}

function stats(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}
