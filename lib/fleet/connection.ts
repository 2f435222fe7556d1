import type { RedisOptions } from 'ioredis';

// Where the fleet's Redis is, read from a URL or ioredis options. No ioredis at run time here: the
// command line checks a URL with it before anything of the fleet is loaded.

/**
 * Where the fleet's Redis is: a URL (`redis://[user:password@]host:port[/db]`, `rediss://…` for
 * TLS, `unix:///path/to/redis.sock`) or ioredis options (`{ host, port }`, `{ path }`, …).
 */
export type FleetConnection = string | RedisOptions;

const URL_KINDS = 'a redis://, rediss:// or unix:// URL';

/**
 * ioredis options from a connection.
 *
 * @example
 * redisOptions('rediss://agent:secret@redis.internal:6380/2');
 * // { host: 'redis.internal', port: 6380, username: 'agent', password: 'secret', db: 2, tls: {} }
 */
export function redisOptions(connection: FleetConnection): RedisOptions {
  if (typeof connection !== 'string') return connection;
  let url: URL;
  try {
    url = new URL(connection);
  } catch {
    throw new TypeError(`agent-rx: the fleet connection must be ${URL_KINDS}, or ioredis options; got ${JSON.stringify(connection)}`);
  }
  if (url.protocol === 'unix:' || url.protocol === 'redis+unix:') {
    const path = decodeURIComponent(url.pathname);
    if (path === '' || path === '/') throw new TypeError(`agent-rx: the fleet connection ${JSON.stringify(connection)} names no socket path`);
    return { path };
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
    throw new TypeError(`agent-rx: the fleet connection must be ${URL_KINDS}; got ${url.protocol}`);
  }
  if (url.hostname === '') throw new TypeError(`agent-rx: the fleet connection ${JSON.stringify(connection)} names no host`);
  const db = url.pathname.length > 1 ? Number(url.pathname.slice(1)) : undefined;
  return {
    host: url.hostname,
    port: url.port === '' ? 6379 : Number(url.port),
    ...(url.username === '' ? {} : { username: decodeURIComponent(url.username) }),
    ...(url.password === '' ? {} : { password: decodeURIComponent(url.password) }),
    ...(db === undefined || !Number.isInteger(db) ? {} : { db }),
    ...(url.protocol === 'rediss:' ? { tls: {} } : {}),
  };
}

/** What is wrong with `url` as the fleet's Redis URL (`must be …; got '…'`), or `null` when it is one. */
export function redisUrlProblem(url: string): string | null {
  try {
    redisOptions(url);
    return null;
  } catch {
    return `must be ${URL_KINDS}; got '${url}'`;
  }
}

/** Where a connection leads, for messages: `host:port`, or the socket's path. */
export function describeConnection(options: RedisOptions): string {
  if (options.path !== undefined) return options.path;
  return `${options.host ?? 'localhost'}:${String(options.port ?? 6379)}`;
}
