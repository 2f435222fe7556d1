import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Redis } from 'ioredis';

/** A private `redis-server` on a unix socket in a scratch folder: no port to race for, no persistence. */
export interface RedisServer {
  /** `unix://…/redis.sock`: what a dispatcher, a worker or `--fleet` takes. */
  readonly url: string;
  readonly path: string;
  readonly pid: () => number;
  /** A client for the test's own looks at the keys. */
  client(): Redis;
  /** SIGKILL, as a crash: no goodbye to the clients. */
  kill(): Promise<void>;
  /** Starts it again on the same socket (empty: there is no persistence), after `kill()`. */
  restart(): Promise<void>;
  /** Ends it and removes its folder. */
  stop(): Promise<void>;
}

/** Starts one; a missing `redis-server` fails with how to get it (the fleet suite never skips). */
export async function startRedis(): Promise<RedisServer> {
  if (spawnSync('redis-server', ['--version']).error !== undefined) {
    throw new Error('redis-server is not installed: the fleet suite runs against a real Redis (Debian: apt-get install redis-server)');
  }
  const folder = mkdtempSync(join(tmpdir(), 'agent-rx-redis-'));
  const path = join(folder, 'redis.sock');
  const clients: Redis[] = [];
  let child: ChildProcess | null = null;
  const launch = async (): Promise<void> => {
    const started = spawn('redis-server', ['--port', '0', '--unixsocket', path, '--unixsocketperm', '700', '--save', '', '--appendonly', 'no', '--dir', folder, '--maxmemory-policy', 'noeviction'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = started;
    let output = '';
    started.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    started.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const deadline = performance.now() + 10_000;
    for (;;) {
      if (/ready to accept connections/i.test(output)) return;
      if (started.exitCode !== null || performance.now() > deadline) throw new Error(`redis-server did not start:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
  const end = async (signal: NodeJS.Signals): Promise<void> => {
    const running = child;
    child = null;
    if (running === null || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill(signal);
    await exited;
  };
  await launch();
  return {
    url: `unix://${path}`,
    path,
    pid: () => child?.pid ?? -1,
    client: () => {
      const client = new Redis({ path, maxRetriesPerRequest: 1 });
      client.on('error', () => undefined);
      clients.push(client);
      return client;
    },
    kill: () => end('SIGKILL'),
    restart: async () => {
      // Two servers on one socket would split the clients between them: a restart follows a kill.
      const running: ChildProcess | null = child;
      if (running !== null && running.exitCode === null && running.signalCode === null) throw new Error('redis-server is still running: kill() it before restart()');
      await launch();
    },
    stop: async () => {
      // A client disconnected already would arm a reconnection timer if told again.
      for (const client of clients.splice(0)) if (client.status !== 'end') client.disconnect();
      await end('SIGTERM');
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

/** A TCP port on 127.0.0.1 that nothing listens on (it was free a moment ago): a Redis that cannot be reached. */
export function unusedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address === null || typeof address === 'string') reject(new Error(`no port: ${String(address)}`));
        else resolve(address.port);
      });
    });
  });
}
