import { describe, expect, it } from '@jest/globals';
import { describeConnection, redisOptions, redisUrlProblem } from '../../lib/fleet/connection.js';

describe('the fleet connection', () => {
  it('reads redis://, rediss:// and unix:// URLs into ioredis options', () => {
    expect(redisOptions('redis://user:p%40ss@10.0.0.5:6380/2')).toEqual({ host: '10.0.0.5', port: 6380, username: 'user', password: 'p@ss', db: 2 });
    expect(redisOptions('rediss://cache.example')).toEqual({ host: 'cache.example', port: 6379, tls: {} });
    expect(redisOptions('unix:///run/redis/redis.sock')).toEqual({ path: '/run/redis/redis.sock' });
    expect(redisOptions({ host: 'h', port: 1 })).toEqual({ host: 'h', port: 1 });
  });

  it.each(['notaurl', 'http://example', 'redis://', 'redis:localhost', 'unix://', 'redis://127.0.0.1:99999'])('refuses %j with a TypeError, and says so for a flag', (url) => {
    expect(() => redisOptions(url)).toThrow(TypeError);
    expect(redisUrlProblem(url)).toBe(`must be a redis://, rediss:// or unix:// URL; got '${url}'`);
  });

  it('finds nothing wrong with a Redis URL', () => {
    expect(redisUrlProblem('redis://127.0.0.1:1')).toBeNull();
    expect(redisUrlProblem('unix:///tmp/redis.sock')).toBeNull();
  });

  it('names where a connection leads: host and port, or the socket', () => {
    expect(describeConnection(redisOptions('redis://127.0.0.1:1'))).toBe('127.0.0.1:1');
    expect(describeConnection({})).toBe('localhost:6379');
    expect(describeConnection({ path: '/tmp/redis.sock' })).toBe('/tmp/redis.sock');
  });
});
