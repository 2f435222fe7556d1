import type { ProcessExit } from '../process/items.js';

/** The exit item of a run whose preparation failed before any process started (stage `setup`). */
export function setupFailure(message: string): ProcessExit {
  return {
    kind: 'exit',
    exitCode: null,
    signal: null,
    stderr: '',
    stderrTruncatedBytes: 0,
    startError: { stage: 'setup', code: 'ESETUP', message },
    pid: null,
    durationMs: 0,
  };
}
