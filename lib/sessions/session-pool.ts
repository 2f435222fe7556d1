// Sessions started before anyone asks for them: each waits, subscribed to a command stream of its
// own, until a caller takes it; what it said while it waited reaches the caller first.
import { asyncScheduler, Observable, Subject, Subscription, type OperatorFunction, type SchedulerLike, type Subscriber } from 'rxjs';
import type { SessionCommand, SessionMessage } from '../messages.js';

/** What {@link poolSessions} takes. */
export interface SessionPoolOptions {
  /** How many sessions are kept started and waiting. Default 1; 0 keeps none (every session starts when taken). */
  readonly size?: number;
  /**
   * How long a waiting session may wait: after that it is ended (its agent's input closed, as
   * when a session's commands complete), and the pool starts no other until a session is taken
   * again. Default: no limit.
   */
  readonly idleMs?: number;
  /** For `idleMs` and for starting replacements after a take. Default `asyncScheduler`. */
  readonly scheduler?: SchedulerLike;
}

/** Sessions kept started, made by {@link poolSessions} (and by `createAgentPool`). */
export interface SessionPool {
  /**
   * A session taken from the pool: an operator from commands to the session's messages, like the
   * pooled session operator itself. Each subscription takes one waiting session (or starts one
   * when none waits, or the pool is closed) and has it to itself: its messages from the first
   * (what it said while it waited comes first), its process stopped when the subscriber leaves,
   * ended when the commands complete. A replacement is started after each take, once the taken
   * agent answers (or 2 s after the take, or when it ends): on a small machine another agent's
   * start-up would slow the first word.
   */
  session(): OperatorFunction<SessionCommand, SessionMessage>;
  /** How many sessions are started and waiting now. */
  readonly waiting: number;
  /**
   * Ends the waiting sessions (each agent's input closed; the stop sequence where it does not
   * exit within its grace) and keeps no more; sessions already taken are their callers'. Settles
   * when the waiting sessions have ended. Sessions taken later start when taken.
   */
  close(): Promise<void>;
}

/** A taken session's replacement starts at its first answer, or this long after the take. */
const REFILL_AFTER_MS = 2000;

/** Messages that say a taken session's agent is answering (or done). */
const ANSWERING = new Set<SessionMessage['type']>(['assistant', 'assistant.thought', 'tool.call', 'turn.completed', 'turn.failed', 'terminal.completed', 'terminal.failed']);

/** At most this many messages are kept from a session that waits: more, and it is ended as broken. */
const MAX_EARLY_MESSAGES = 1000;

/**
 * Keeps sessions of `session` started, so that a caller's first prompt meets an agent that is up:
 * the agent's start-up (its process, its handshake) happens before the caller asks. A session is
 * used by one caller only, from its start; after each take a replacement is started in the
 * background. A session that ends while it waits (its agent died) is not handed out; the pool
 * starts its replacement with the next take, so an agent that cannot start is not restarted in a
 * loop. The waiting sessions are ordinary subscriptions: the host-exit guarantees cover them.
 *
 * @example
 * const pool = poolSessions(claudeCodeSession({ permission: 'deny-all' }), { size: 2 });
 * // Later, when a user opens a chat: the agent is already up.
 * commands.pipe(pool.session()).subscribe(render);
 * // On shutdown:
 * await pool.close();
 */
export function poolSessions(session: OperatorFunction<SessionCommand, SessionMessage>, options: SessionPoolOptions = {}): SessionPool {
  const size = options.size ?? 1;
  if (!Number.isInteger(size) || size < 0) throw new TypeError(`agent-rx: a pool's size must be a whole number ≥ 0; got ${String(size)}`);
  const { idleMs } = options;
  if (idleMs !== undefined && !(Number.isFinite(idleMs) && idleMs > 0)) throw new TypeError(`agent-rx: a pool's idleMs must be a number > 0; got ${String(idleMs)}`);
  const scheduler = options.scheduler ?? asyncScheduler;
  const waiting = new Set<WaitingSession>();
  const ending = new Set<Promise<void>>();
  let closed = false;

  /** Ends a session that waits; its end is awaited by `close`. */
  const retire = (entry: WaitingSession): void => {
    waiting.delete(entry);
    const ended = entry.end();
    ending.add(ended);
    void ended.then(() => ending.delete(ended));
  };
  const start = (): void => {
    const entry = new WaitingSession(session, () => {
      // It ended while it waited: not to be handed out.
      waiting.delete(entry);
    });
    if (entry.over) return;
    waiting.add(entry);
    if (idleMs !== undefined) entry.expiry.add(scheduler.schedule(() => {
      if (waiting.has(entry)) retire(entry);
    }, idleMs));
  };
  const fill = (): void => {
    if (closed) return;
    for (let count = waiting.size; count < size; count += 1) start();
  };
  fill();

  return {
    session: () => (commands) =>
      new Observable<SessionMessage>((subscriber) => {
        const [taken] = waiting;
        let entry: WaitingSession;
        if (taken === undefined) entry = new WaitingSession(session, () => undefined);
        else {
          waiting.delete(taken);
          entry = taken;
        }
        // The replacement starts once the taken agent answers (its start-up would slow the first
        // word on a small machine), when the session ends, or REFILL_AFTER_MS after the take.
        let replaced = closed;
        const replace = (): void => {
          if (replaced) return;
          replaced = true;
          later.unsubscribe();
          scheduler.schedule(fill);
        };
        const later = replaced ? Subscription.EMPTY : scheduler.schedule(replace, REFILL_AFTER_MS);
        entry.hand(subscriber, replace);
        const input = subscriber.closed ? null : commands.subscribe(entry.commands);
        return () => {
          input?.unsubscribe();
          entry.stop();
          replace();
        };
      }),
    get waiting() {
      return waiting.size;
    },
    close: async () => {
      closed = true;
      for (const entry of [...waiting]) retire(entry);
      await Promise.all([...ending]);
    },
  };
}

/** One session, subscribed and waiting for its caller; its messages kept until then. */
class WaitingSession {
  /** The session's commands: the caller's, once taken. */
  readonly commands = new Subject<SessionCommand>();
  /** Its idle limit. */
  readonly expiry = new Subscription();
  /** It ended (completed or errored) before anyone took it. */
  over = false;
  private early: SessionMessage[] = [];
  private caller: Subscriber<SessionMessage> | null = null;
  private answering: () => void = () => undefined;
  private ended: { readonly error?: unknown } | null = null;
  private readonly settled: Promise<void>;
  private settle = (): void => undefined;
  private readonly subscription = new Subscription();

  constructor(session: OperatorFunction<SessionCommand, SessionMessage>, endedWaiting: () => void) {
    this.settled = new Promise((resolve) => {
      this.settle = resolve;
    });
    const finish = (end: { readonly error?: unknown }): void => {
      this.expiry.unsubscribe();
      this.settle();
      if (this.caller !== null) {
        if ('error' in end) this.caller.error(end.error);
        else this.caller.complete();
        return;
      }
      this.ended = end;
      this.over = true;
      endedWaiting();
    };
    // Added to a subscription made first: a session stopped while it subscribes is stopped at once.
    this.subscription.add(this.commands.pipe(session).subscribe({
      next: (message) => {
        if (this.caller !== null) {
          this.caller.next(message);
          if (ANSWERING.has(message.type)) this.answering();
          return;
        }
        if (this.over) return;
        this.early.push(message);
        // An agent that talks on and on while nobody asked it anything is broken: it is stopped.
        if (this.early.length > MAX_EARLY_MESSAGES) this.stop();
      },
      error: (error: unknown) => {
        finish({ error });
      },
      complete: () => {
        finish({});
      },
    }));
  }

  /** Gives the session to its caller: what it said so far, then the rest as it comes; `answering` at its first answer. */
  hand(caller: Subscriber<SessionMessage>, answering: () => void): void {
    this.expiry.unsubscribe();
    this.caller = caller;
    this.answering = answering;
    const early = this.early;
    this.early = [];
    for (const message of early) {
      if (caller.closed) return;
      caller.next(message);
    }
    if (this.ended === null) return;
    if ('error' in this.ended) caller.error(this.ended.error);
    else caller.complete();
  }

  /** Ends it the graceful way (its input closed); settles when it has ended. */
  end(): Promise<void> {
    this.expiry.unsubscribe();
    this.commands.complete();
    return this.settled;
  }

  /** Stops it at once (the stop sequence). */
  stop(): void {
    this.expiry.unsubscribe();
    this.subscription.unsubscribe();
    this.over = true;
    this.settle();
  }
}
