import { describe, expect, it } from '@jest/globals';
import { judgeLiveness, UNKNOWN_RUN_GRACE_MS, type LivenessLook, type LivenessStep } from '../../lib/fleet/liveness.js';

/** An own run (this dispatcher enqueued it) just enqueued, whose keys are all empty. */
const OWN: LivenessLook = {
  runId: 'r1',
  own: true,
  after: '0-0',
  waitedMs: 0,
  readingMs: 0,
  startTimeoutMs: undefined,
  unknownRunGraceMs: UNKNOWN_RUN_GRACE_MS,
  owner: null,
  heartbeat: null,
  end: null,
};
/** A `follow` reader of the same run: it never enqueued it. */
const READER: LivenessLook = { ...OWN, own: false, waitedMs: null };
const NOBODY = { owner: null, end: null, stream: false } as const;

const STOPPED_BEATING = 'the worker w1 stopped beating (killed, frozen or cut off); the agent may have done part of its work';
const NOT_TAKEN = 'no worker took the run within startTimeoutMs (500 ms)';
const NOBODY_RUNS = 'nobody runs the run: it left the queue without being started, or Redis lost its state';
const UNKNOWN = 'no run r1 is known (never enqueued, or its stream expired)';

type Row = [string, LivenessLook, LivenessStep];

const table: Row[] = [
  // The run's terminal is in its stream: only the reader's position counts.
  ['a reader at the terminal', { ...READER, after: '5-1', end: '5-1' }, { type: 'over' }],
  ['a reader past the terminal', { ...READER, after: '6-0', end: '5-1' }, { type: 'over' }],
  ['a reader before the terminal (the next read brings it)', { ...READER, after: '5-0', end: '5-1' }, { type: 'wait' }],
  ['an ended run whose worker no longer beats', { ...OWN, after: '1-0', end: '5-1', owner: 'w1', heartbeat: null }, { type: 'wait' }],
  // Taken by a worker: its heartbeat says whether it lives.
  ['a run whose worker beats', { ...OWN, owner: 'w1', heartbeat: 'w1' }, { type: 'wait' }],
  ['a run whose worker stopped beating', { ...OWN, owner: 'w1', heartbeat: null }, { type: 'writeLost', why: STOPPED_BEATING }],
  ['a reader of a run whose worker stopped beating', { ...READER, owner: 'w1', heartbeat: null }, { type: 'writeLost', why: STOPPED_BEATING }],
  ['a run taken long ago whose worker beats (no start timeout once taken)', { ...OWN, owner: 'w1', heartbeat: 'w1', waitedMs: 9000, startTimeoutMs: 500 }, { type: 'wait' }],
  // Not taken: the start timeout first, then the queue.
  ['an own run not taken, no start timeout', OWN, { type: 'readJobState' }],
  ['an own run not taken, within its start timeout', { ...OWN, waitedMs: 499, startTimeoutMs: 500 }, { type: 'readJobState' }],
  ['an own run not taken at its start timeout', { ...OWN, waitedMs: 500, startTimeoutMs: 500 }, { type: 'removeThenWriteLost', why: NOT_TAKEN }],
  ['an own run past its start timeout whose job was gone when removed', { ...OWN, waitedMs: 900, startTimeoutMs: 500, removed: false }, { type: 'readJobState' }],
  ['a reader never times a start out (it did not enqueue the run)', { ...READER, startTimeoutMs: 500, readingMs: 9000 }, { type: 'readJobState' }],
  ['a run the queue holds (waiting)', { ...OWN, jobState: 'waiting' }, { type: 'wait' }],
  ['a run the queue holds (active)', { ...OWN, jobState: 'active' }, { type: 'wait' }],
  ['a run the queue holds (delayed)', { ...READER, jobState: 'delayed', readingMs: 9000 }, { type: 'wait' }],
  ['a run the queue does not know', { ...OWN, jobState: 'unknown' }, { type: 'readAgain' }],
  // The queue does not know it: the keys read again decide.
  ['a run taken meanwhile', { ...OWN, jobState: 'unknown', again: { ...NOBODY, owner: 'w1' } }, { type: 'wait' }],
  ['a run ended meanwhile', { ...OWN, jobState: 'unknown', again: { ...NOBODY, end: '5-1' } }, { type: 'wait' }],
  ['an own run nobody holds', { ...OWN, jobState: 'unknown', again: NOBODY }, { type: 'writeLost', why: NOBODY_RUNS }],
  ['a run with a stream nobody holds', { ...READER, jobState: 'unknown', again: { ...NOBODY, stream: true } }, { type: 'writeLost', why: NOBODY_RUNS }],
  ['a reader of a run nobody knows, within the grace', { ...READER, readingMs: 999, jobState: 'unknown', again: NOBODY }, { type: 'wait' }],
  ['a reader of a run nobody knows, at the grace', { ...READER, readingMs: 1000, jobState: 'unknown', again: NOBODY }, { type: 'endReaderLost', why: UNKNOWN }],
];

describe('judgeLiveness', () => {
  it.each(table)('%s', (_case, look, step) => {
    expect(judgeLiveness(look)).toEqual(step);
  });

  it('reaches a verdict in at most three looks after the MGET, for every combination of answers', () => {
    const verdicts = new Set(['wait', 'over', 'writeLost', 'endReaderLost']);
    const keys = [null, 'x'] as const;
    let walked = 0;
    for (const base of [OWN, READER])
      for (const owner of keys)
        for (const heartbeat of keys)
          for (const end of [null, '0-0', '9-0'])
            for (const waitedMs of base.waitedMs === null ? [null] : [0, 500])
              for (const removedJob of [true, false])
                for (const jobState of ['waiting', 'unknown'])
                  for (const again of [NOBODY, { ...NOBODY, owner: 'w2' }, { ...NOBODY, stream: true }])
                    for (const readingMs of [0, 1000]) {
                      // The shell's answers to each ask; a removal that worked ends the check with its write.
                      let look: LivenessLook = { ...base, owner, heartbeat, end, waitedMs, readingMs, startTimeoutMs: 500 };
                      let step = judgeLiveness(look);
                      let looks = 0;
                      while (!verdicts.has(step.type)) {
                        looks += 1;
                        expect(looks).toBeLessThanOrEqual(3);
                        if (step.type === 'removeThenWriteLost') {
                          if (removedJob) break;
                          look = { ...look, removed: false };
                        } else if (step.type === 'readJobState') look = { ...look, jobState };
                        else look = { ...look, again };
                        step = judgeLiveness(look);
                      }
                      walked += 1;
                    }
    // Own runs: 2 owners × 2 beats × 3 ends × 2 waits × 2 removals × 2 job states × 3 re-reads × 2 reading times; readers wait no start.
    expect(walked).toBe(576 + 288);
  });

  it('lets the time spent reading count only for a reader of a run nobody knows', () => {
    for (const [, look] of table) {
      const early = judgeLiveness({ ...look, readingMs: 0 });
      const late = judgeLiveness({ ...look, readingMs: 1_000_000 });
      if (late.type !== early.type) expect({ own: look.own, jobState: look.jobState, again: look.again, late: late.type }).toEqual({ own: false, jobState: 'unknown', again: NOBODY, late: 'endReaderLost' });
    }
  });
});
