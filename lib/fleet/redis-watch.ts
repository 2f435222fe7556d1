import type { TerminalFailed } from '../messages.js';
import { fleetFailure } from './failure.js';

/** What a watch needs of a client: ioredis's `status` and its `ready` and `error` events. */
export interface WatchedClient {
  readonly status: string;
  on(event: 'ready', listener: () => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  off(event: 'ready', listener: () => void): unknown;
}

/**
 * What a caller knows of its Redis connection: whether it ever worked, and why it does not now
 * (the connection's last error; ioredis's own "max retries per request" says only that it gave
 * up). A connection that never worked is a setting to fix (`setup`, not retried); one that worked
 * and went away may come back (`lost`, which callers may retry).
 */
export class RedisWatch {
  readonly #where: string;
  readonly #client: WatchedClient;
  #everReady = false;
  #cause: Error | null = null;

  constructor(where: string, client: WatchedClient) {
    this.#where = where;
    this.#client = client;
    client.on('ready', () => {
      this.#everReady = true;
      this.#cause = null;
    });
    client.on('error', (error) => {
      this.#cause = error;
    });
  }

  /** Where the connection leads (`host:port`, or the socket's path). */
  get where(): string {
    return this.#where;
  }

  /** The connection answered once. */
  get everReady(): boolean {
    return this.#everReady;
  }

  /** Resolves `true` once the connection is ready, `false` at `until` (a `performance.now()` time) or on `signal`. */
  ready(until: number, signal: AbortSignal): Promise<boolean> {
    if (this.#client.status === 'ready') return Promise.resolve(true);
    if (signal.aborted || performance.now() >= until) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = (ready: boolean): void => {
        clearTimeout(timer);
        this.#client.off('ready', onReady);
        signal.removeEventListener('abort', onAbort);
        resolve(ready);
      };
      const onReady = (): void => {
        done(true);
      };
      const onAbort = (): void => {
        done(false);
      };
      const timer = setTimeout(onAbort, until - performance.now());
      this.#client.on('ready', onReady);
      signal.addEventListener('abort', onAbort);
    });
  }

  /** Why a command failed: its error's message, or for ioredis's "gave up" errors the connection's own error. */
  reason(error?: Error): string {
    if (error !== undefined && !isGiveUp(error)) return error.message;
    return this.#cause?.message ?? 'no answer';
  }

  /** The terminal of a run whose Redis never answered: `setup` (a setting to fix, not retried), with the connection's error. */
  unreachable(error?: Error): TerminalFailed {
    return fleetFailure('setup', `the fleet's Redis at ${this.#where} could not be reached: ${this.#cause?.message ?? this.reason(error)}`);
  }
}

/** ioredis's errors that say only that it stopped trying (the retry limit, a connection closed under a command). */
function isGiveUp(error: Error): boolean {
  return error.name === 'MaxRetriesPerRequestError' || error.message === 'Connection is closed.';
}
