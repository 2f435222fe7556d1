import { describe, expect, it } from '@jest/globals';
import { beatLapsed, heartbeatStop, isWorkerStopReason, stopTerminal, type WorkerStopReason } from '../../lib/fleet/stop-reason.js';

describe('heartbeatStop', () => {
  it.each([
    // What the beat found → why the run stops (null: it runs on).
    ['ok', null],
    ['ended', 'ended'],
    ['cancelled', 'cancel'],
    ['forgotten', 'forgotten'],
    ['unreachable', 'unreachable'],
    ['something else', null],
  ] as const)('on %s stops the run with %s', (answer, why) => {
    expect(heartbeatStop(answer)).toBe(why);
  });
});

describe('beatLapsed', () => {
  it.each([
    [0, 3000, false],
    [2999, 3000, false],
    [3000, 3000, true],
    [4500, 3000, true],
  ])('%d ms after the last answered beat, with a %d ms heartbeat, is lapsed: %s', (since, ttl, lapsed) => {
    expect(beatLapsed(since, ttl)).toBe(lapsed);
  });
});

describe('stopTerminal', () => {
  it.each([
    ['cancel', { reason: 'aborted', message: 'the run was cancelled' }],
    ['shutdown', { reason: 'lost', message: 'the worker w1 shut down before the run ended' }],
    ['lock', { reason: 'lost', message: 'the worker w1 lost its hold on the run (its queue lock)' }],
    ['unreachable', { reason: 'lost', message: 'the worker w1 could not reach Redis to renew its heartbeat' }],
    ['forgotten', { reason: 'lost', message: "Redis lost the run's state while the worker w1 ran it (restarted without its data?)" }],
  ] as const)('ends a run stopped for %s with %j', (why, fields) => {
    expect(stopTerminal(why, 'w1')).toEqual({ type: 'terminal.failed', ...fields, exitCode: null, signal: null, stderr: '', stderrTruncatedBytes: 0, invalidOutputLines: [], invalidOutputLinesOmitted: 0 });
  });

  it('writes nothing for a run whose stream someone else ended', () => {
    expect(stopTerminal('ended', 'w1')).toBeNull();
  });
});

describe('isWorkerStopReason', () => {
  it('knows the six reasons, and nothing else (an abort signal may carry anything)', () => {
    const whys: WorkerStopReason[] = ['cancel', 'shutdown', 'lock', 'ended', 'unreachable', 'forgotten'];
    for (const why of whys) expect(isWorkerStopReason(why)).toBe(true);
    for (const other of ['stopped', '', undefined, 3, new Error('cancel')]) expect(isWorkerStopReason(other)).toBe(false);
  });
});
