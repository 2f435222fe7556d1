import { readFileSync } from 'node:fs';
import { Subject, type OperatorFunction, type Subscription } from 'rxjs';
import type { SessionCommand, SessionMessage, StopReport } from '../../lib/index.js';

/**
 * Drives a session the way a caller does: commands in as the test sends them, messages kept in
 * order. `next` awaits the first message matching a condition after the last one `next` returned,
 * so a test reads the stream forward, step by step, without sleeping.
 */
export class SessionDriver {
  readonly messages: SessionMessage[] = [];
  /** When each message arrived (performance.now()), by index. */
  readonly times: number[] = [];
  /** Settles with every message once the stream completes. */
  readonly done: Promise<SessionMessage[]>;
  /** The stop report of the session's process, once its stop sequence or clean-up is over. */
  readonly stopped: Promise<StopReport>;
  readonly #commands = new Subject<SessionCommand>();
  readonly #subscription: Subscription;
  #cursor = 0;
  #waiters: (() => void)[] = [];
  #completed = false;

  constructor(session: (onStopped: (report: StopReport) => void) => OperatorFunction<SessionCommand, SessionMessage>) {
    let resolveStopped!: (report: StopReport) => void;
    this.stopped = new Promise((resolve) => {
      resolveStopped = resolve;
    });
    let resolveDone!: (messages: SessionMessage[]) => void;
    let rejectDone!: (error: unknown) => void;
    this.done = new Promise((resolve, reject) => {
      resolveDone = resolve;
      rejectDone = reject;
    });
    this.#subscription = this.#commands.pipe(session(resolveStopped)).subscribe({
      next: (message) => {
        this.messages.push(message);
        this.times.push(performance.now());
        this.#wake();
      },
      error: (error: unknown) => {
        this.#completed = true;
        this.#wake();
        rejectDone(error);
      },
      complete: () => {
        this.#completed = true;
        this.#wake();
        resolveDone(this.messages);
      },
    });
  }

  send(command: SessionCommand): void {
    this.#commands.next(command);
  }

  /** Completes the command stream: the session ends after the running turn. */
  end(): void {
    this.#commands.complete();
  }

  unsubscribe(): void {
    this.#subscription.unsubscribe();
  }

  /** The first message after the last one returned that satisfies `match`; rejects after `ms` or at completion. */
  async next<T extends SessionMessage>(match: (message: SessionMessage) => message is T, ms?: number): Promise<T>;
  async next(match: (message: SessionMessage) => boolean, ms?: number): Promise<SessionMessage>;
  async next(match: (message: SessionMessage) => boolean, ms = 30_000): Promise<SessionMessage> {
    const deadline = performance.now() + ms;
    for (;;) {
      while (this.#cursor < this.messages.length) {
        const message = this.messages[this.#cursor] as SessionMessage;
        this.#cursor += 1;
        if (match(message)) return message;
      }
      const left = deadline - performance.now();
      if (this.#completed || left <= 0) throw new Error(`no such message; got ${this.messages.map((message) => message.type).join(', ')}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** The next message of a type. */
  nextOf<K extends SessionMessage['type']>(type: K, ms?: number): Promise<Extract<SessionMessage, { type: K }>> {
    return this.next((message): message is Extract<SessionMessage, { type: K }> => message.type === type, ms);
  }

  /** The messages of turn `turn`, from its `turn.started` to its end (both included). */
  turn(turn: number): SessionMessage[] {
    const start = this.messages.findIndex((message) => message.type === 'turn.started' && message.turn === turn);
    const end = this.messages.findIndex((message) => (message.type === 'turn.completed' || message.type === 'turn.failed') && message.turn === turn);
    return start === -1 ? [] : this.messages.slice(start, end === -1 ? undefined : end + 1);
  }

  /** The answer text of turn `turn`: its `assistant` deltas joined. */
  answer(turn: number): string {
    return this.turn(turn)
      .map((message) => (message.type === 'assistant' ? message.text : ''))
      .join('');
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }
}

/** The parent pid of a live process, or null. */
export function parentOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return null;
  }
}

/** The types of the messages, in order, with each run of equal types shown once. */
export function sessionShape(messages: readonly SessionMessage[]): string[] {
  return messages.map((message) => message.type).filter((type, i, all) => type !== all[i - 1]);
}
