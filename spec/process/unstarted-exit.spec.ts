import { describe, expect, it } from '@jest/globals';
import { setupFailure, unstartedExit } from '../../lib/process/unstarted-exit.js';

describe('unstartedExit', () => {
  it('gives the exit item of a process that could not start: no code, signal, stderr or pid', () => {
    const startError = { stage: 'spawn' as const, code: 'ENOENT', message: 'spawn nope ENOENT' };
    expect(unstartedExit(startError)).toStrictEqual({
      kind: 'exit',
      exitCode: null,
      signal: null,
      stderr: '',
      stderrTruncatedBytes: 0,
      startError,
      pid: null,
      durationMs: 0,
    });
  });

  it('says who stopped a run before its spawn, and how long a source took to fail', () => {
    expect(unstartedExit(null, { stoppedBy: { kind: 'host' } })).toMatchObject({ startError: null, stoppedBy: { kind: 'host' } });
    expect(unstartedExit({ stage: 'input', code: 'EISDIR', message: 'a folder' }, { durationMs: 12 }).durationMs).toBe(12);
    expect(Object.keys(unstartedExit(null, { stoppedBy: undefined }))).not.toContain('stoppedBy');
  });

  it('gives a setup failure as an unstarted exit at the setup stage', () => {
    expect(setupFailure('could not prepare the overlay')).toStrictEqual(unstartedExit({ stage: 'setup', code: 'ESETUP', message: 'could not prepare the overlay' }));
  });
});
