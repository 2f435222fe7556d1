import { from, take, type SchedulerLike, type Subscription } from 'rxjs';
import type { PermissionDecision, PermissionRequested, PermissionResolver } from '../messages.js';
import { isAwaitedAnswer, isPermissionDecision, notADecision, presetDecision, type PermissionPolicy } from '../operators/permission-policy.js';

/** What the desk reports. */
export interface PermissionDeskIo {
  /** A decision for a request (from the preset, the caller's callback, or the deadline). */
  decided(requestId: string, decision: PermissionDecision, by: PermissionResolver): void;
  /** The caller's callback threw, or gave what is not a decision: the stream errors with it. */
  fail(error: unknown): void;
}

interface Deciding {
  deadline: Subscription | null;
  answer: Subscription | null;
  controller: AbortController | null;
}

/**
 * Decides a session's permission requests, one policy for all: a preset at once; `ask` and the
 * caller's callback within `timeoutMs` on the scheduler, or the request is denied by the deadline.
 * `forget` stops deciding one (its callback's signal aborts); `clear` all of them.
 */
export class PermissionDesk {
  readonly #policy: PermissionPolicy;
  readonly #timeoutMs: number;
  readonly #scheduler: SchedulerLike;
  readonly #io: PermissionDeskIo;
  readonly #deciding = new Map<string, Deciding>();

  readonly #trusted: ((tool: string) => boolean) | undefined;

  constructor(policy: PermissionPolicy, timeoutMs: number, scheduler: SchedulerLike, io: PermissionDeskIo, trusted?: (tool: string) => boolean) {
    this.#policy = policy;
    this.#trusted = trusted;
    this.#timeoutMs = timeoutMs;
    this.#scheduler = scheduler;
    this.#io = io;
  }

  decide(request: PermissionRequested): void {
    const policy = this.#policy;
    const id = request.requestId;
    if (this.#trusted?.(request.tool) === true) {
      this.#io.decided(id, 'allow', 'policy');
      return;
    }
    if (typeof policy === 'string' && policy !== 'ask') {
      this.#io.decided(id, presetDecision(policy, request) ?? 'deny', 'policy');
      return;
    }
    const entry: Deciding = { deadline: null, answer: null, controller: null };
    this.#deciding.set(id, entry);
    entry.deadline = this.#scheduler.schedule(() => {
      this.forget(id);
      this.#io.decided(id, 'deny', 'deadline');
    }, this.#timeoutMs);
    if (typeof policy === 'string') return;
    const controller = new AbortController();
    entry.controller = controller;
    const settle = (value: unknown): void => {
      if (!this.#deciding.has(id)) return;
      this.forget(id);
      if (isPermissionDecision(value)) this.#io.decided(id, value, 'caller');
      else this.#io.fail(notADecision(value, id));
    };
    const failed = (error: unknown): void => {
      if (!this.#deciding.has(id)) return;
      this.forget(id);
      this.#io.fail(error);
    };
    let result: unknown;
    try {
      result = policy(request, controller.signal);
    } catch (error: unknown) {
      failed(error);
      return;
    }
    if (typeof result === 'string' || !isAwaitedAnswer(result)) {
      settle(result);
      return;
    }
    const subscription = from(result).pipe(take(1)).subscribe({ next: settle, error: failed });
    // A callback that answered at once has settled the request already.
    if (this.#deciding.has(id)) entry.answer = subscription;
    else subscription.unsubscribe();
  }

  /** Stops deciding a request: its deadline goes, its callback's signal aborts. */
  forget(requestId: string): void {
    const entry = this.#deciding.get(requestId);
    if (entry === undefined) return;
    this.#deciding.delete(requestId);
    entry.deadline?.unsubscribe();
    entry.answer?.unsubscribe();
    entry.controller?.abort();
  }

  /** Stops deciding every request. */
  clear(): void {
    for (const id of [...this.#deciding.keys()]) this.forget(id);
  }
}


