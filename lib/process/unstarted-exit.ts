import type { ProcessExit, StartFailure, StopCause } from './items.js';

/**
 * The exit item of a run whose process never started: it could not be prepared, spawned or read
 * (`startError`), or it was stopped before its turn to spawn (`stoppedBy`, when a subscriber still
 * listens; `startError` is then `null`). No exit code, signal, stderr or pid.
 */
export function unstartedExit(startError: StartFailure | null, how: { readonly stoppedBy?: StopCause | undefined; readonly durationMs?: number } = {}): ProcessExit {
  return {
    kind: 'exit',
    exitCode: null,
    signal: null,
    stderr: '',
    stderrTruncatedBytes: 0,
    startError,
    pid: null,
    durationMs: how.durationMs ?? 0,
    ...(how.stoppedBy === undefined ? {} : { stoppedBy: how.stoppedBy }),
  };
}

/** The exit item of a run whose preparation failed before any process started (stage `setup`). */
export function setupFailure(message: string): ProcessExit {
  return unstartedExit({ stage: 'setup', code: 'ESETUP', message });
}
