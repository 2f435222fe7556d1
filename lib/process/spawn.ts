import { execa } from 'execa';
import { isObservable } from 'rxjs';
import type { StartFailure } from './items.js';
import type { ResolvedProcessOptions, StdinSource } from './options.js';

/** A spawned root process, as execa gives it. */
export type Subprocess = ReturnType<typeof spawnRoot>;

/**
 * Spawns a run's root: no shell, an argv array, its own process group (`detached`, so a group kill
 * reaches grandchildren whose parent already exited), stdout and stderr piped unbuffered, stdin
 * closed unless the options give one, and the run's marker in its environment. execa neither
 * rejects, buffers nor kills here: the stop sequence owns escalation.
 */
export function spawnRoot(command: string, args: readonly string[], options: ResolvedProcessOptions, marker: Readonly<Record<string, string>>) {
  return execa(command, args, {
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    env: { ...options.env, ...marker },
    extendEnv: true,
    ...stdinOption(options.stdin),
    stdout: 'pipe',
    stderr: 'pipe',
    buffer: false,
    reject: false,
    detached: true,
    cleanup: false,
    forceKillAfterDelay: false,
    windowsHide: true,
  });
}

function stdinOption(stdin: StdinSource | undefined) {
  if (stdin === undefined) return { stdin: 'ignore' as const };
  if (isObservable(stdin)) return { stdin: 'pipe' as const };
  return { input: stdin };
}

/** Why the root could not be started, or `null` when it started. */
export function spawnFailure(
  result: { failed: boolean; code?: string | undefined; originalMessage?: string | undefined; shortMessage?: string | undefined },
  pid: number | null,
): StartFailure | null {
  if (pid !== null || !result.failed) return null;
  return { stage: 'spawn', code: result.code ?? 'UNKNOWN', message: result.originalMessage ?? result.shortMessage ?? 'spawn failed' };
}
