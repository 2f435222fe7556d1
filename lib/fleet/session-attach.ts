import { randomUUID } from 'node:crypto';
import { Observable, type OperatorFunction } from 'rxjs';
import { isTerminal, type BudgetExceeded, type InputKind, type SessionCommand, type SessionMessage } from '../messages.js';
import { budgetText } from '../operators/budget-text.js';
import { currentRunScope } from '../process/run-scope.js';
import { traceContextOf, type TraceContext } from '../process/trace-context.js';
import { fleetFailure } from './failure.js';
import { asError } from '../process/error-message.js';
import type { ErrorReport } from './on-error.js';
import type { Queue, Redis } from './peers.js';
import type { FleetRedis } from './redis.js';
import { sessionKeys, SESSION_MAX_ENTRIES, SESSION_TTL_SECONDS, type SessionKeys } from './session-keys.js';
import { ACTIVATION_JOB, checkSessionId, checkSessionSpec, type ActivationData, type SessionSpec } from './session-spec.js';
import { readAfter } from './stream-entries.js';

/** What the caller's side of fleet sessions needs of its dispatcher. */
export interface SessionCaller {
  readonly prefix: string;
  readonly redis: FleetRedis;
  readonly queue: Queue;
  readonly report: ErrorReport;
  /** A new connection for one reader's blocking reads. */
  reader(): Redis;
  readonly blockMs: number;
  /** No answer from Redis for this long: the attachment ends `lost`. */
  readonly lostAfterMs: number;
  /** How long a queued activation's marker lives (after which another caller may enqueue one again). */
  readonly activationWaitMs: number;
  /** Aborted when the dispatcher closes: its attachments end `lost` (the sessions go on), its followers complete. */
  readonly closed: AbortSignal;
}

/** An entry of a fleet session's log: its id (for a later `followSession`, an SSE `id:`) and its message. */
export interface SessionEntry {
  readonly id: string;
  readonly message: SessionMessage;
}

/** How often an attachment that waits for answers looks at the lease (a lost activation, a command no activation took). */
const WATCH_MS = 1000;

/**
 * The caller's side of `dispatcher.session(sessionId, spec)`: each command is appended to the
 * session's command stream (an `id` added when it has none: answers name it), and an activation is
 * put on the queue when none is live or queued; the session's log is read from the moment of the
 * subscription. While commands wait for answers, the lease is watched: a lost activation's turn
 * and taken commands are answered (`lost`, `session-ended`) and the commands it did not take get a
 * new activation. Completing the commands ends the attachment once each is answered, with a
 * `terminal.completed` of its own; a terminal in the log (the session's agent failed) ends it too;
 * unsubscribing only stops reading (a turn goes on; the session sleeps when idle).
 */
export function attachSession(caller: SessionCaller, sessionId: string, spec: SessionSpec): OperatorFunction<SessionCommand, SessionMessage> {
  checkSessionId(sessionId);
  const checked = checkSessionSpec(spec);
  const keys = sessionKeys(caller.prefix, sessionId);
  return (commands) =>
    new Observable<SessionMessage>((subscriber) => {
      const reader = caller.reader();
      // A trace around the attachment (traceSession): its context goes with each activation it asks
      // for, so that the session's agent on its worker joins the trace.
      const scope = currentRunScope();
      let over = false;
      const isOver = (): boolean => over;
      let commandsDone = false;
      // Commands sent and not answered: command id → the turn it started (once known).
      const waiting = new Map<string, number | null>();
      const kinds = new Map<string, InputKind>();
      const settle = (id: string): void => {
        waiting.delete(id);
        kinds.delete(id);
        sentIn.delete(id);
      };
      let agentSessionId: string | undefined;
      // The session's epoch as this attachment last saw it, and the epoch each waiting command was sent in.
      let epoch: string | undefined;
      const sentIn = new Map<string, string>();
      let sending: Promise<unknown> = Promise.resolve();
      let lastAnswer = performance.now();
      let watchedAt = 0;

      const end = (terminal: SessionMessage): void => {
        if (over) return;
        over = true;
        subscriber.next(terminal);
        subscriber.complete();
      };
      const maybeDone = (): void => {
        if (commandsDone && waiting.size === 0) end({ type: 'terminal.completed', stopReason: 'end_turn', ...(agentSessionId === undefined ? {} : { sessionId: agentSessionId }) });
      };
      const answered = (message: SessionMessage): void => {
        switch (message.type) {
          case 'session.started':
          case 'session.resumed':
            agentSessionId = message.sessionId;
            break;
          case 'input.dropped':
            if (message.commandId !== undefined) settle(message.commandId);
            break;
          case 'input.accepted':
            if (message.commandId === undefined || !waiting.has(message.commandId)) break;
            if (message.as === 'turn') waiting.set(message.commandId, message.turn);
            else if (message.as !== 'follow-up') settle(message.commandId);
            break;
          case 'turn.started':
            if (message.commandId !== undefined && waiting.has(message.commandId)) waiting.set(message.commandId, message.turn);
            break;
          case 'turn.completed':
          case 'turn.failed':
            for (const [id, turn] of waiting) if (turn === message.turn) settle(id);
            break;
          default:
            break;
        }
      };

      const send = (command: SessionCommand): void => {
        // A value that is not a command is sent as it is: the session answers it (`invalid`).
        const value: unknown = command;
        const withId = typeof value === 'object' && value !== null && typeof (value as { readonly id?: unknown }).id !== 'string' ? { ...value, id: randomUUID() } : value;
        const id = typeof withId === 'object' && withId !== null ? (withId as { readonly id?: unknown }).id : undefined;
        if (typeof id === 'string') {
          waiting.set(id, null);
          const type = (withId as { readonly type?: unknown }).type;
          kinds.set(id, type === 'prompt' || type === 'follow-up' || type === 'steer' || type === 'abort' || type === 'permission' ? type : 'invalid');
        }
        sending = sending.then(async () => {
          const now = await append(withId, typeof id === 'string' ? id : randomUUID());
          if (now === undefined) return;
          if (typeof id === 'string' && waiting.has(id)) sentIn.set(id, now);
          sawEpoch(now);
          await activate(caller, keys, sessionId, checked, traceContextOf(scope?.env, 'env')).catch(caller.report);
        });
      };

      /**
       * Appends a command to the session's command stream, again every 250 ms while Redis fails
       * (an attempt whose answer was lost is not appended twice): the session's epoch then, or
       * `undefined` once the attachment is over (it ends `lost` when Redis took nothing for
       * `lostAfterMs`). A command that never reached Redis would otherwise wait for an answer forever.
       */
      const append = async (command: unknown, key: string): Promise<string | undefined> => {
        let failingSince: number | undefined;
        for (let again = false; !isOver(); again = true) {
          try {
            return await caller.redis.agentRxSessionSend(keys.commands, keys.epoch, JSON.stringify(command), key, again ? '1' : '', SESSION_MAX_ENTRIES, SESSION_TTL_SECONDS, randomUUID());
          } catch (error) {
            caller.report(error);
            failingSince ??= performance.now();
            if (performance.now() - failingSince >= caller.lostAfterMs) {
              end(fleetFailure('lost', `Redis took no command for ${String(caller.lostAfterMs)} ms: this reader of the session ${sessionId} stopped`));
              return undefined;
            }
            await new Promise((resolve) => setTimeout(resolve, 250));
          }
        }
        return undefined;
      };

      /**
       * The session's epoch now (`null`: none, its state is gone): when it is not the one seen
       * before, Redis lost the session's state, and the commands sent before are answered by this
       * attachment itself (no activation will: their entries, and the turns they ran, are gone).
       */
      const sawEpoch = (now: string | null): void => {
        const before = epoch;
        if (now !== null) epoch = now;
        if (before === undefined || before === now || over) return;
        const message = `Redis lost the session ${sessionId}'s state (restarted without its data?)`;
        subscriber.next({ type: 'agent.warning', message: `${message}: its conversation starts again` });
        for (const [id, turn] of [...waiting]) {
          const was = sentIn.get(id);
          if (was === undefined || was === now) continue;
          const kind = kinds.get(id) ?? 'invalid';
          settle(id);
          if (isOver()) return;
          if (turn === null) subscriber.next({ type: 'input.dropped', kind, reason: 'session-ended', message, commandId: id });
          else subscriber.next({ type: 'turn.failed', turn, reason: 'lost', message });
        }
        if (now === null) epoch = undefined;
        maybeDone();
      };
      const watch = async (): Promise<void> => {
        if (waiting.size === 0 || performance.now() - watchedAt < WATCH_MS) return;
        watchedAt = performance.now();
        try {
          await caller.redis.agentRxSessionLost(keys.lease, keys.log, keys.open, keys.taken, 'the activation that ran it was lost (its worker died, froze or lost Redis)', SESSION_MAX_ENTRIES, SESSION_TTL_SECONDS);
          await activate(caller, keys, sessionId, checked, traceContextOf(scope?.env, 'env'));
          // Redis lost the session's keys (restarted without its data): what waits is answered here,
          // as lost. The commands sent so far are in first (a first command's append may still run).
          await sending;
          sawEpoch(await caller.redis.get(keys.epoch));
        } catch (error) {
          caller.report(error);
        }
      };

      // Commands are taken at once (a hot source loses nothing) and sent once the log's position is
      // known, so that every answer to them is read.
      let positioned = false;

      // A budget around the attachment aborts the running turn on its worker (an `abort` command);
      // the turn's failure then says `budget`, as a local session's does.
      let running: number | null = null;
      let budgetAbort: { readonly turn: number; readonly exceeded: BudgetExceeded } | null = null;
      const detach = currentRunScope()?.attach({
        abortTurn: (exceeded) => {
          if (over || !positioned || running === null) return false;
          if (budgetAbort?.turn !== running) {
            budgetAbort = { turn: running, exceeded };
            send({ type: 'abort' });
          }
          return true;
        },
      });
      subscriber.add(() => detach?.());
      const budgeted = (message: SessionMessage): SessionMessage => {
        if (message.type === 'turn.started') running = message.turn;
        if (message.type !== 'turn.completed' && message.type !== 'turn.failed') return message;
        if (running === message.turn) running = null;
        const abort = budgetAbort;
        if (abort === null || abort.turn !== message.turn) return message;
        budgetAbort = null;
        return message.type === 'turn.failed' && message.reason === 'aborted'
          ? { ...message, reason: 'budget', message: `${budgetText(abort.exceeded)}: the turn was aborted`, budget: abort.exceeded }
          : message;
      };
      const early: SessionCommand[] = [];
      const input = commands.subscribe({
        next: (command) => {
          if (positioned) send(command);
          else early.push(command);
        },
        complete: () => {
          commandsDone = true;
          if (positioned) void sending.then(maybeDone);
        },
        error: (error: unknown) => {
          subscriber.error(error);
        },
      });
      subscriber.add(input);

      const read = async (): Promise<void> => {
        let after = '0-0';
        try {
          const last = (await caller.redis.xrevrange(keys.log, '+', '-', 'COUNT', 1)) as [string, string[]][];
          after = last[0]?.[0] ?? '0-0';
          lastAnswer = performance.now();
        } catch (error) {
          caller.report(error);
        }
        if (over) return;
        positioned = true;
        for (const command of early.splice(0)) send(command);
        if (commandsDone) void sending.then(maybeDone);
        while (!isOver()) {
          let result: [string, [string, string[]][]][] | null;
          try {
            result = (await reader.xread('COUNT', 64, 'BLOCK', caller.blockMs, 'STREAMS', keys.log, after));
            lastAnswer = performance.now();
          } catch (error) {
            if (isOver()) break;
            caller.report(error);
            if (performance.now() - lastAnswer >= caller.lostAfterMs) {
              end(fleetFailure('lost', `Redis did not answer for ${String(caller.lostAfterMs)} ms: this reader of the session ${sessionId} stopped`));
              break;
            }
            await new Promise((resolve) => setTimeout(resolve, 250));
            continue;
          }
          for (const [id, fields] of result?.[0]?.[1] ?? []) {
            after = id;
            const parsed = parseMessage(fields);
            if (parsed === null || isOver()) continue;
            if (isTerminal(parsed)) {
              end(parsed);
              break;
            }
            const message = budgeted(parsed);
            subscriber.next(message);
            answered(message);
          }
          maybeDone();
          await watch();
        }
      };
      const onClose = (): void => {
        end(fleetFailure('lost', `the dispatcher was closed: this reader of the session ${sessionId} stopped (the session goes on)`));
        reader.disconnect();
      };
      if (caller.closed.aborted) {
        onClose();
        return;
      }
      caller.closed.addEventListener('abort', onClose);
      void read().catch((error: unknown) => {
        if (!over) end(fleetFailure('lost', `this reader of the session ${sessionId} failed: ${asError(error).message}`));
      });
      return () => {
        over = true;
        caller.closed.removeEventListener('abort', onClose);
        reader.disconnect();
      };
    });
}

/** Puts an activation on the queue when a command waits and none is live or queued. */
async function activate(caller: SessionCaller, keys: SessionKeys, sessionId: string, spec: SessionSpec, traceContext: TraceContext | undefined): Promise<void> {
  const needed = await caller.redis.agentRxSessionEnsure(keys.lease, keys.activating, keys.commands, keys.applied, caller.activationWaitMs);
  if (needed !== 1) return;
  const data: ActivationData = { sessionId, spec, ...(traceContext === undefined ? {} : { traceContext }) };
  await caller.queue.add(ACTIVATION_JOB, data, { jobId: `session.${sessionId}.${randomUUID()}`, attempts: 1, removeOnComplete: true, removeOnFail: true });
}

/**
 * A fleet session's log from after `after` (an entry id; default: its start), as it grows, until
 * unsubscribed or a terminal in it (the session's agent failed). Never sends a command.
 */
export function followSession(caller: SessionCaller, sessionId: string, after = '0-0'): Observable<SessionEntry> {
  checkSessionId(sessionId);
  const start = readAfter(after);
  const keys = sessionKeys(caller.prefix, sessionId);
  return new Observable<SessionEntry>((subscriber) => {
    const reader = caller.reader();
    let from = start;
    let over = false;
    const isOver = (): boolean => over;
    const onClose = (): void => {
      over = true;
      reader.disconnect();
      subscriber.complete();
    };
    if (caller.closed.aborted) {
      onClose();
      return;
    }
    caller.closed.addEventListener('abort', onClose);
    void (async () => {
      while (!isOver()) {
        let result: [string, [string, string[]][]][] | null;
        try {
          result = (await reader.xread('COUNT', 64, 'BLOCK', caller.blockMs, 'STREAMS', keys.log, from));
        } catch (error) {
          if (isOver()) break;
          caller.report(error);
          await new Promise((resolve) => setTimeout(resolve, 250));
          continue;
        }
        for (const [id, fields] of result?.[0]?.[1] ?? []) {
          from = id;
          const message = parseMessage(fields);
          if (message === null || isOver()) continue;
          subscriber.next({ id, message });
          if (isTerminal(message)) {
            over = true;
            subscriber.complete();
            break;
          }
        }
      }
    })();
    return () => {
      over = true;
      caller.closed.removeEventListener('abort', onClose);
      reader.disconnect();
    };
  });
}

/** A log entry's message (`m`), or `null` for anything else. */
function parseMessage(fields: readonly string[]): SessionMessage | null {
  const at = fields.indexOf('m');
  const text = at === -1 ? undefined : fields[at + 1];
  if (text === undefined) return null;
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === 'object' && value !== null && typeof (value as { readonly type?: unknown }).type === 'string' ? (value as SessionMessage) : null;
  } catch {
    return null;
  }
}
