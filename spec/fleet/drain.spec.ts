import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { DrainDeadline, JobLedger } from '../../lib/fleet/drain.js';

beforeEach(() => {
  jest.useFakeTimers();
});
afterEach(() => {
  jest.useRealTimers();
});

describe('DrainDeadline', () => {
  it('ends the drain drainMs after the close', () => {
    const deadline = new DrainDeadline();
    const end = jest.fn();
    deadline.shorten(1000, end);
    jest.advanceTimersByTime(999);
    expect(end).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1);
    expect(end).toHaveBeenCalledTimes(1);
  });

  it('only ever comes sooner: a second close with a shorter drain ends it then, one with a longer drain changes nothing', () => {
    const deadline = new DrainDeadline();
    const first = jest.fn();
    const second = jest.fn();
    const third = jest.fn();
    deadline.shorten(30_000, first);
    deadline.shorten(0, second);
    deadline.shorten(60_000, third);
    jest.advanceTimersByTime(60_000);
    expect([first.mock.calls.length, second.mock.calls.length, third.mock.calls.length]).toEqual([0, 1, 0]);
  });

  it('ends nothing once cleared', () => {
    const deadline = new DrainDeadline();
    const end = jest.fn();
    deadline.shorten(10, end);
    deadline.clear();
    jest.advanceTimersByTime(100);
    expect(end).not.toHaveBeenCalled();
  });
});

describe('JobLedger', () => {
  it('is idle at once with no job, and once the last job taken is processed', async () => {
    const jobs = new JobLedger();
    await jobs.idle();
    jobs.taken();
    jobs.taken();
    let idle = false;
    void jobs.idle().then(() => (idle = true));
    jobs.processed('a');
    await Promise.resolve();
    expect(idle).toBe(false);
    jobs.processed('b');
    await Promise.resolve();
    expect(idle).toBe(true);
  });

  it('waits for BullMQ to settle every job processed here, except one whose lock ran out', async () => {
    const jobs = new JobLedger();
    jobs.taken();
    jobs.processed('old');
    jest.advanceTimersByTime(1001);
    jobs.taken();
    jobs.processed('new');
    let settled = false;
    void jobs.allSettled(1000).then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    jobs.settled('new');
    await Promise.resolve();
    expect(settled).toBe(true);
  });
});
