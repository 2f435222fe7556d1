import { Observable } from 'rxjs';
import { PermissionDecisionSchema, type PermissionDecision } from '../messages.js';
import type { PermissionCallback } from '../operators/permission-policy.js';
import type { ErrorReport } from './on-error.js';
import { RUN_TTL_SECONDS, type FleetRedis, type RunKeys } from './redis.js';

// The answers to a fleet run's permission requests (`permission: 'ask'`): a caller writes one into
// the run's answers hash (the first answer kept) and publishes it; the run's worker takes it from
// the message, or from the hash with its next heartbeat when pub/sub lost the message.

/** What goes over the permission channel: which run, which request, the decision. */
export interface AnswerMessage {
  readonly runId: string;
  readonly requestId: string;
  readonly decision: PermissionDecision;
}

/**
 * Keeps a caller's answer in the run's answers hash and tells the workers on `channel`; `false` when
 * the run has ended or the request was answered already (the first answer is kept).
 */
export async function writeAnswer(redis: FleetRedis, keys: RunKeys, channel: string, answer: AnswerMessage): Promise<boolean> {
  const kept = await redis.agentRxAnswer(keys.end, keys.answers, answer.requestId, answer.decision, RUN_TTL_SECONDS, channel, JSON.stringify(answer));
  return kept === 1;
}

/** A message of the permission channel, or `null` when it is not one (it is ignored). */
export function parseAnswerMessage(text: string): AnswerMessage | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const { runId, requestId, decision } = value as Record<string, unknown>;
  const checked = PermissionDecisionSchema.safeParse(decision);
  if (typeof runId !== 'string' || typeof requestId !== 'string' || !checked.success) return null;
  return { runId, requestId, decision: checked.data };
}

/**
 * A run's permission requests waiting on its worker for a caller's answer: {@link AnswerDesk.ask}
 * is the run's permission callback. A request waits until an answer comes ({@link AnswerDesk.answer}
 * from the pub/sub message, {@link AnswerDesk.poll} from the hash: at once, then with each
 * heartbeat) or until its signal aborts (the session settled it otherwise: the deadline, the run's
 * end, a cancel). What is not a decision is ignored.
 */
export class AnswerDesk {
  readonly #redis: FleetRedis;
  readonly #keys: RunKeys;
  readonly #report: ErrorReport;
  readonly #waiting = new Map<string, (decision: PermissionDecision) => void>();

  constructor(redis: FleetRedis, keys: RunKeys, report: ErrorReport) {
    this.#redis = redis;
    this.#keys = keys;
    this.#report = report;
  }

  /** The run's permission callback: waits for the answer to `request` through Redis. */
  readonly ask: PermissionCallback = (request, signal) =>
    new Observable<PermissionDecision>((subscriber) => {
      const id = request.requestId;
      if (signal.aborted) {
        subscriber.complete();
        return undefined;
      }
      const settle = (decision: PermissionDecision): void => {
        subscriber.next(decision);
        subscriber.complete();
      };
      const stop = (): void => {
        subscriber.complete();
      };
      this.#waiting.set(id, settle);
      signal.addEventListener('abort', stop, { once: true });
      // An answer may be there already (a reader that answered from the stream before this callback ran).
      this.poll([id]);
      return () => {
        if (this.#waiting.get(id) === settle) this.#waiting.delete(id);
        signal.removeEventListener('abort', stop);
      };
    });

  /** How many requests wait. */
  get waiting(): number {
    return this.#waiting.size;
  }

  /** An answer (from the pub/sub message): settles its request if it waits here. */
  answer(requestId: string, decision: unknown): void {
    const checked = PermissionDecisionSchema.safeParse(decision);
    if (checked.success) this.#waiting.get(requestId)?.(checked.data);
  }

  /** Reads the answers of the requests that wait (all of them, or `ids`) from the run's hash. */
  poll(ids: readonly string[] = [...this.#waiting.keys()]): void {
    if (ids.length === 0) return;
    this.#redis.hmget(this.#keys.answers, ...ids).then((decisions) => {
      ids.forEach((id, index) => {
        const decision = decisions[index];
        if (decision !== null && decision !== undefined) this.answer(id, decision);
      });
    }, this.#report);
  }
}
