import { isTerminal, type TerminalFailed } from '../messages.js';
import { asError } from '../process/error-message.js';
import type { RunEntry } from './stream-entries.js';
import { fleetFailure } from './failure.js';
import type { ErrorReport } from './on-error.js';
import type { Redis } from './peers.js';
import type { RedisWatch } from './redis-watch.js';
import type { RunKeys } from './redis.js';
import { compareIds, parseEntry } from './stream-entries.js';

/** One subscriber's reading of one run. */
export interface Follower {
  readonly runId: string;
  readonly keys: RunKeys;
  /** Started by this dispatcher's `run` (closing the dispatcher cancels it). */
  readonly own: boolean;
  /** The last entry id delivered. */
  after: string;
  /** When this dispatcher enqueued the run (it may time its start out); `null` for a reader. */
  readonly enqueuedAt: number | null;
  /** When its liveness was last looked at. */
  checkedAt: number;
  /** When it began reading. */
  readonly joinedAt: number;
  entry(entry: RunEntry): void;
  /** The run ended without a terminal in its stream that this caller could read. */
  lost(terminal: TerminalFailed): void;
  /** The reader started at or after the run's terminal: there is nothing left to read. */
  over(): void;
}

/** What the reading loop is given. */
export interface RunReaderOptions {
  /** The blocking connection the loop reads on (nothing else may use it). */
  readonly reader: Redis;
  /** Another connection, to end the reader's wait (`CLIENT UNBLOCK`). */
  readonly redis: Redis;
  readonly watch: RedisWatch;
  /** How long one read waits for new entries; a follower quiet for twice this is looked at. */
  readonly blockMs: number;
  /** No answer from Redis for this long: every follower ends `lost` (or `setup` if Redis never answered). */
  readonly lostAfterMs: number;
  readonly report: ErrorReport;
  /** Looks at a quiet follower's run: is it still alive? (`now`: this round's time.) */
  readonly check: (follower: Follower, now: number) => Promise<void>;
}

/**
 * The reading loop of a dispatcher: one `XREAD` for every run followed (a cursor per stream, the
 * lowest of its followers'), the entries handed to their followers, and, when nothing comes, the
 * quiet followers' liveness looked at. Started by {@link RunReader.start}, ended by {@link RunReader.stop}.
 */
export class RunReader {
  readonly #options: RunReaderOptions;
  readonly #followers = new Set<Follower>();
  #readerId: number | null = null;
  #lastOk = performance.now();
  #stopped = false;
  #wake: (() => void) | null = null;
  #loop: Promise<void> = Promise.resolve();

  constructor(options: RunReaderOptions) {
    this.#options = options;
  }

  /** Starts the loop (it waits while nobody is followed). */
  start(): void {
    const { reader, report } = this.#options;
    reader.on('ready', () => {
      reader.client('ID').then(
        (id) => {
          this.#readerId = id;
        },
        report,
      );
    });
    this.#loop = this.#read();
  }

  /** Reads `follower`'s run from its `after` on, from the next round (which begins now). */
  join(follower: Follower): void {
    this.#followers.add(follower);
    this.#wake?.();
    this.#unblock();
  }

  leave(follower: Follower): void {
    this.#followers.delete(follower);
  }

  /** Redis answered a command of the dispatcher's own: it is not lost. */
  answered(): void {
    this.#lastOk = performance.now();
  }

  /** Ends the loop: returns the followers it still had (none is told anything); `done` settles once it is out. */
  stop(): Follower[] {
    this.#stopped = true;
    this.#wake?.();
    const followers = [...this.#followers];
    this.#followers.clear();
    this.#unblock();
    return followers;
  }

  /** Settles once the loop has ended (after {@link RunReader.stop}); never rejects. */
  get done(): Promise<void> {
    return this.#loop;
  }

  #isStopped(): boolean {
    return this.#stopped;
  }

  // Ends the reader's wait now, so that a new follower is read at once.
  #unblock(): void {
    if (this.#readerId !== null) this.#options.redis.client('UNBLOCK', this.#readerId).catch(() => undefined);
  }

  async #read(): Promise<void> {
    const { reader, blockMs, lostAfterMs, report } = this.#options;
    while (!this.#stopped) {
      if (this.#followers.size === 0) {
        await new Promise<void>((resolve) => {
          this.#wake = resolve;
        });
        this.#wake = null;
        continue;
      }
      const cursors = this.#cursors();
      try {
        const reply = await reader.xread('COUNT', 1000, 'BLOCK', blockMs, 'STREAMS', ...cursors.keys(), ...cursors.values());
        this.#lastOk = performance.now();
        if (reply !== null) this.#deliver(reply);
        await this.#check();
      } catch (error) {
        if (this.#isStopped()) return;
        report(error);
        if (performance.now() - this.#lastOk >= lostAfterMs) this.#loseAll(error);
        await delay(100);
      }
    }
  }

  // One cursor per stream: the lowest of its followers'.
  #cursors(): Map<string, string> {
    const cursors = new Map<string, string>();
    for (const follower of this.#followers) {
      const known = cursors.get(follower.keys.stream);
      if (known === undefined || compareIds(follower.after, known) < 0) cursors.set(follower.keys.stream, follower.after);
    }
    return cursors;
  }

  #deliver(reply: [string, [string, string[]][]][]): void {
    for (const [stream, entries] of reply) {
      for (const follower of [...this.#followers]) {
        if (follower.keys.stream !== stream) continue;
        for (const [id, fields] of entries) {
          if (!this.#followers.has(follower) || compareIds(id, follower.after) <= 0) continue;
          follower.after = id;
          follower.checkedAt = performance.now();
          const message = parseEntry(fields);
          if (message === null) continue;
          if (isTerminal(message)) this.#followers.delete(follower);
          follower.entry({ id, message });
        }
      }
    }
  }

  // The runs quiet for a while: is their worker still beating?
  async #check(): Promise<void> {
    const now = performance.now();
    const due = [...this.#followers].filter((follower) => now - follower.checkedAt >= this.#options.blockMs * 2);
    await Promise.all(due.map((follower) => this.#options.check(follower, now)));
  }

  // Redis did not answer for lostAfterMs: every run being read ends, for this caller only (it cannot be written).
  #loseAll(error: unknown): void {
    const { watch, lostAfterMs } = this.#options;
    const cause = asError(error);
    const terminal = watch.everReady
      ? fleetFailure('lost', `the fleet's Redis at ${watch.where} could not be reached for ${String(lostAfterMs)} ms (lostAfterMs): the run's end is unknown (${watch.reason(cause)})`)
      : watch.unreachable(cause);
    for (const follower of [...this.#followers]) {
      this.#followers.delete(follower);
      follower.lost(terminal);
    }
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
