import { describe, expect, it } from '@jest/globals';
import { EventEmitter } from 'node:events';
import { RedisWatch } from '../../lib/fleet/redis-watch.js';

/** ioredis's `status` and events, driven by the test. */
class FakeClient extends EventEmitter {
  status = 'connecting';
  ready(): void {
    this.status = 'ready';
    this.emit('ready');
  }
  fail(message: string): void {
    this.status = 'reconnecting';
    this.emit('error', new Error(message));
  }
}

function giveUp(): Error {
  const error = new Error('Reached the max retries per request limit (which is 1). Refer to "maxRetriesPerRequest" option for details.');
  Object.defineProperty(error, 'name', { value: 'MaxRetriesPerRequestError' });
  return error;
}

describe('RedisWatch', () => {
  it('says setup, with the connection\u2019s last error, while the connection never worked', () => {
    const client = new FakeClient();
    const watch = new RedisWatch('127.0.0.1:1', client);
    expect(watch.unreachable()).toMatchObject({ reason: 'setup', message: "the fleet's Redis at 127.0.0.1:1 could not be reached: no answer" });
    client.fail('connect ECONNREFUSED 127.0.0.1:1');
    expect(watch.everReady).toBe(false);
    expect(watch.unreachable(giveUp())).toMatchObject({ reason: 'setup', message: "the fleet's Redis at 127.0.0.1:1 could not be reached: connect ECONNREFUSED 127.0.0.1:1" });
  });

  it('gives the connection\u2019s error for ioredis\u2019s "gave up", and any other error as it is; an error from before the last ready is forgotten', () => {
    const client = new FakeClient();
    const watch = new RedisWatch('h:6379', client);
    client.fail('connect ECONNREFUSED h:6379');
    client.ready();
    expect(watch.everReady).toBe(true);
    expect(watch.reason(giveUp())).toBe('no answer');
    client.fail('read ECONNRESET');
    expect(watch.reason(giveUp())).toBe('read ECONNRESET');
    expect(watch.reason(new Error('Connection is closed.'))).toBe('read ECONNRESET');
    expect(watch.reason(new Error("NOPERM this user has no permissions to run the 'xread' command"))).toBe("NOPERM this user has no permissions to run the 'xread' command");
  });

  it('resolves ready at once when ready, true on the ready event, false at the deadline or on abort, and leaves no listener', async () => {
    const client = new FakeClient();
    const watch = new RedisWatch('h:6379', client);
    const controller = new AbortController();
    const listeners = client.listenerCount('ready');

    const late = watch.ready(performance.now() + 60_000, controller.signal);
    client.ready();
    expect(await late).toBe(true);
    expect(await watch.ready(performance.now() + 60_000, controller.signal)).toBe(true);

    client.fail('connect ECONNREFUSED h:6379');
    expect(await watch.ready(performance.now() + 20, controller.signal)).toBe(false);
    expect(await watch.ready(performance.now() - 1, controller.signal)).toBe(false);
    const aborted = watch.ready(performance.now() + 60_000, controller.signal);
    controller.abort();
    expect(await aborted).toBe(false);
    expect(await watch.ready(performance.now() + 60_000, controller.signal)).toBe(false);
    expect(client.listenerCount('ready')).toBe(listeners);
  });
});
