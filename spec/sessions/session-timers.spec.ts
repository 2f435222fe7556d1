import { describe, expect, it } from '@jest/globals';
import { VirtualTimeScheduler } from 'rxjs';
import { SessionTimers } from '../../lib/sessions/session-timers.js';

/** Timers on virtual time, with what they did and when. */
function timers(options: { idleMs?: number; graceMs?: number } = {}) {
  const scheduler = new VirtualTimeScheduler();
  const log: string[] = [];
  const subject = new SessionTimers(scheduler, {
    idleMs: options.idleMs,
    graceMs: options.graceMs ?? 100,
    idleExpired: (ms) => log.push(`${scheduler.now()}: idle ${ms}`),
    stop: (cause) => log.push(`${scheduler.now()}: stop ${cause.limit} ${cause.ms}`),
  });
  const at = (time: number, work: () => void): void => {
    scheduler.schedule(work, time);
  };
  const flush = (): void => {
    scheduler.flush();
  };
  return { subject, log, at, flush };
}

describe('SessionTimers', () => {
  it('says the turn went idle after idleMs of silence', () => {
    const { subject, log, flush } = timers({ idleMs: 50 });
    subject.watchIdle(true);
    flush();
    expect(log).toEqual(['50: idle 50']);
  });

  it('counts the silence from the last activity', () => {
    const { subject, log, at, flush } = timers({ idleMs: 50 });
    subject.watchIdle(true);
    at(30, () => {
      subject.activity();
    });
    at(70, () => {
      subject.activity();
    });
    flush();
    expect(log).toEqual(['120: idle 50']);
  });

  it('counts from when watching began, not from activity before it', () => {
    const { subject, log, at, flush } = timers({ idleMs: 50 });
    subject.activity();
    at(40, () => {
      subject.watchIdle(true);
    });
    flush();
    expect(log).toEqual(['90: idle 50']);
  });

  it('counts nothing while not watched, nor without an idle limit', () => {
    const watched = timers({ idleMs: 50 });
    watched.subject.watchIdle(true);
    watched.at(20, () => {
      watched.subject.watchIdle(false);
    });
    watched.flush();
    expect(watched.log).toEqual([]);
    const unlimited = timers();
    unlimited.subject.watchIdle(true);
    unlimited.flush();
    expect(unlimited.log).toEqual([]);
  });

  it('stops the session graceMs after an abort that was not honoured, and not after one that was', () => {
    const late = timers({ graceMs: 100 });
    late.subject.watchAbort(true);
    late.flush();
    expect(late.log).toEqual(['100: stop abort 100']);
    const honoured = timers({ graceMs: 100 });
    honoured.subject.watchAbort(true);
    honoured.at(60, () => {
      honoured.subject.watchAbort(false);
    });
    honoured.flush();
    expect(honoured.log).toEqual([]);
  });

  it('restarts the abort and end limits when they are started again', () => {
    const { subject, log, at, flush } = timers({ graceMs: 100 });
    subject.watchAbort(true);
    at(50, () => {
      subject.watchAbort(true);
    });
    subject.watchEnd();
    at(30, () => {
      subject.watchEnd();
    });
    flush();
    expect(log).toEqual(['130: stop end 100', '150: stop abort 100']);
  });

  it('clears every limit at once', () => {
    const { subject, log, at, flush } = timers({ idleMs: 50, graceMs: 100 });
    subject.watchIdle(true);
    subject.watchAbort(true);
    subject.watchEnd();
    at(10, () => {
      subject.clear();
    });
    flush();
    expect(log).toEqual([]);
    subject.clear();
  });

  it('may be watched again from inside its own expiry', () => {
    const scheduler = new VirtualTimeScheduler();
    const log: number[] = [];
    const subject: SessionTimers = new SessionTimers(scheduler, {
      idleMs: 50,
      graceMs: 100,
      idleExpired: () => {
        log.push(scheduler.now());
        if (log.length < 3) subject.watchIdle(true);
      },
      stop: () => undefined,
    });
    subject.watchIdle(true);
    scheduler.flush();
    expect(log).toEqual([50, 100, 150]);
  });
});
