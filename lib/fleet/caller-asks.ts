import { from, take, type Subscription } from 'rxjs';
import { PermissionDecisionSchema, type CliMessage, type PermissionDecision } from '../messages.js';
import { isAwaitedAnswer, notADecision, type PermissionCallback } from '../operators/permission-policy.js';

/** What the caller's asking does with a decision, and with a callback that failed. */
export interface CallerAsksIo {
  /** The callback's decision for a request: to be written back to the worker. */
  answer(requestId: string, decision: PermissionDecision): void;
  /** The callback threw, or gave what is not a decision: the caller's stream errors with it. */
  fail(error: unknown): void;
}

/**
 * The caller's side of a fleet run with `permission: 'ask'`: each `permission.requested` read from
 * the run's stream is given to the caller's callback, and its decision (checked) is answered. A
 * request settled otherwise (its `permission.resolved` read: the worker's deadline, another
 * reader's answer, the run's end) aborts its callback's signal, and so does {@link CallerAsks.close}
 * (the run's end, an unsubscribe); a decision that comes after that is dropped.
 */
export class CallerAsks {
  readonly #callback: PermissionCallback;
  readonly #io: CallerAsksIo;
  readonly #asking = new Map<string, { readonly controller: AbortController; subscription: Subscription | null }>();
  /** Every request asked: each is asked once. */
  readonly #asked = new Set<string>();
  #closed = false;

  constructor(callback: PermissionCallback, io: CallerAsksIo) {
    this.#callback = callback;
    this.#io = io;
  }

  /** A message of the run, as read: a request is asked, a resolution ends its asking. */
  see(message: CliMessage): void {
    if (this.#closed) return;
    if (message.type === 'permission.resolved') {
      this.#asked.add(message.requestId);
      this.#forget(message.requestId);
    }
    else if (message.type === 'permission.requested') this.#ask(message.requestId, message);
  }

  /** Stops asking: every callback's signal aborts, and nothing more is asked. */
  close(): void {
    this.#closed = true;
    for (const id of [...this.#asking.keys()]) this.#forget(id);
  }

  #ask(id: string, request: Parameters<PermissionCallback>[0]): void {
    if (this.#asked.has(id)) return;
    this.#asked.add(id);
    const entry = { controller: new AbortController(), subscription: null as Subscription | null };
    this.#asking.set(id, entry);
    const settle = (value: unknown): void => {
      if (this.#asking.get(id) !== entry) return;
      this.#forget(id);
      const checked = PermissionDecisionSchema.safeParse(value);
      if (checked.success) this.#io.answer(id, checked.data);
      else this.#io.fail(notADecision(value, id));
    };
    const failed = (error: unknown): void => {
      if (this.#asking.get(id) !== entry) return;
      this.#forget(id);
      this.#io.fail(error);
    };
    let result: unknown;
    try {
      result = this.#callback(request, entry.controller.signal);
    } catch (error: unknown) {
      failed(error);
      return;
    }
    if (!isAwaitedAnswer(result)) {
      settle(result);
      return;
    }
    const subscription = from(result)
      .pipe(take(1))
      .subscribe({ next: settle, error: failed });
    // A callback that answered at once has settled the request already.
    if (this.#asking.get(id) === entry) entry.subscription = subscription;
    else subscription.unsubscribe();
  }

  #forget(id: string): void {
    const entry = this.#asking.get(id);
    if (entry === undefined) return;
    this.#asking.delete(id);
    entry.subscription?.unsubscribe();
    entry.controller.abort();
  }
}


