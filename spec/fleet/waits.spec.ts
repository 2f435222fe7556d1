import { describe, expect, it } from '@jest/globals';
import { aborted, within } from '../../lib/fleet/waits.js';

const never = new Promise<never>(() => undefined);

describe('within', () => {
  it('resolves when the promise settles, resolved or rejected, before the time is up', async () => {
    const startedAt = performance.now();
    await within(60_000, Promise.resolve('done'));
    await within(60_000, Promise.reject(new Error('refused')));
    expect(performance.now() - startedAt).toBeLessThan(30_000);
  });

  it('resolves when the time is up, the promise still pending', async () => {
    const startedAt = performance.now();
    await within(50, never);
    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(45);
  });
});

describe('aborted', () => {
  it('resolves once the signal is aborted, or at once when it was', async () => {
    const controller = new AbortController();
    let done = false;
    const waiting = aborted(controller.signal).then(() => {
      done = true;
    });
    await Promise.resolve();
    expect(done).toBe(false);
    controller.abort();
    await waiting;
    expect(done).toBe(true);
    await aborted(controller.signal);
  });
});
