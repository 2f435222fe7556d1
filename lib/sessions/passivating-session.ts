import { asyncScheduler, Observable, Subject, Subscription, type OperatorFunction, type SchedulerLike } from 'rxjs';
import type { SessionCommand, SessionMessage, TerminalCompleted, TerminalMessage } from '../messages.js';
import { terminalFailed } from '../terminal-failed.js';
import { bindRunScope } from '../process/run-scope.js';
import type { ConversationSnapshot, ConversationStore } from './conversation-snapshot.js';

/** What a session that sleeps when idle is made of: its activations, its snapshots and where they are kept. */
export interface PassivationSpec {
  /** The session of one activation (one agent process): a new conversation, or the resume of `sessionId`. */
  session(resume: string | undefined): OperatorFunction<SessionCommand, SessionMessage>;
  /** Takes the conversation's state out of the agent's home, `turns` being the turns numbered so far. */
  take(sessionId: string, turns: number): Promise<ConversationSnapshot>;
  /** Puts a snapshot back into the agent's home before an activation resumes it. */
  restore(snapshot: ConversationSnapshot): Promise<void>;
  readonly store: ConversationStore;
  /** The conversation's key in the store; `undefined`: the agent's session id, once it is known. */
  readonly conversationId: string | undefined;
  /** After this long without a turn, the process ends and the conversation sleeps (`Infinity`: never). */
  readonly idleMs: number;
  readonly scheduler?: SchedulerLike;
}

type Phase = 'loading' | 'active' | 'passivating' | 'passive' | 'waking' | 'closing' | 'ended';

/** The turn-numbered messages, whose `turn` is renumbered across activations. */
type Numbered = Extract<SessionMessage, { turn: number }>;

/**
 * A session that outlives its processes: the messages of one activation after another, as one
 * session. After `idleMs` without a turn, its conversation is saved in the store, its process is
 * asked to end (the command stream completed: the agent exits gracefully), and the caller gets
 * `session.passivated`; the next command starts a process that resumes the conversation
 * (`session.resumed` with `resumeMs`) and is then handed to it. With a `conversationId` whose
 * snapshot is in the store, the first activation resumes it. The caller sees one session: one
 * `session.started` (or `session.resumed`), turns numbered on across processes, every command
 * answered, exactly one terminal, last. An `abort` or `permission` command while it sleeps is
 * answered without waking it (no turn, no request can be running). A snapshot is also saved after
 * every turn, and the turn's `turn.completed` comes once it is: a host that dies loses no turn its
 * caller saw completed (a save that fails says so in an `agent.warning` after it). The agents' sessions
 * take it through their `idleMs` option; this is the operator under them, for a session of the
 * caller's own.
 *
 * @example
 * // What piSession({ idleMs: 60_000, conversationId: 'chat-42', store }) does.
 * const place = { keeping: AGENTS.pi.conversation!, options: {}, env: process.env, cwd: process.cwd() };
 * commands.pipe(passivatingSession({
 *   session: (resume) => piSession(resume === undefined ? {} : { session: { id: resume } }),
 *   take: (sessionId, turns) => takeSnapshot(place, { agent: 'pi', sessionId, turns }),
 *   restore: (snapshot) => restoreSnapshot(place, snapshot),
 *   store: folderStore('./conversations'),
 *   conversationId: 'chat-42',
 *   idleMs: 60_000,
 * })).subscribe(render);
 */
export function passivatingSession(spec: PassivationSpec): OperatorFunction<SessionCommand, SessionMessage> {
  const scheduler = spec.scheduler ?? asyncScheduler;
  return (commands) =>
    new Observable<SessionMessage>((subscriber) => {
      let phase: Phase = 'loading';
      let inner: { readonly commands: Subject<SessionCommand>; readonly subscription: Subscription } | undefined;
      const queue: SessionCommand[] = [];
      let commandsDone = false;
      let sessionId: string | undefined;
      let announced = false;
      // Turns numbered by earlier activations, and the highest number the caller has seen.
      let offset = 0;
      let turns = 0;
      let running = false;
      // Follow-ups the process has accepted and not started yet, and commands it has not answered.
      let owed = 0;
      let unanswered = 0;
      // The process of this activation has reported its session.
      let ready = false;
      const acceptedAsTurn = new Set<number>();
      let wakeStartedAt: number | undefined;
      let idle: Subscription | undefined;
      let lastEnd: TerminalCompleted | undefined;
      let saving: Promise<void> = Promise.resolve();
      // Commands held while the snapshot after a turn is being read.
      let holding = false;
      const held: SessionCommand[] = [];

      // A completed turn is said once its snapshot is saved: it waits behind a gate its save opens,
      // and what comes after it waits too, in order.
      const out: ({ readonly message: SessionMessage } | { readonly gate: { open: boolean } })[] = [];

      const keyOf = (): string | undefined => spec.conversationId ?? sessionId;
      const emit = (message: SessionMessage): void => {
        if (phase === 'ended') return;
        if (out.length === 0) subscriber.next(message);
        else out.push({ message });
      };
      /** Says what waited, up to the first gate still closed (every gate: `force`). */
      const flush = (force = false): void => {
        while (out.length > 0 && phase !== 'ended') {
          const head = out[0] as (typeof out)[number];
          if ('gate' in head && !head.gate.open && !force) return;
          out.shift();
          if ('message' in head) subscriber.next(head.message);
        }
      };
      const end = (terminal: TerminalMessage): void => {
        if (phase === 'ended') return;
        flush(true);
        disarm();
        // The session the caller knows, whichever process ended it.
        const withId = sessionId === undefined ? terminal : { ...terminal, sessionId };
        subscriber.next(withId);
        phase = 'ended';
        inner?.subscription.unsubscribe();
        subscriber.complete();
      };
      const fail = (what: string, error: unknown): void => {
        end(terminalFailed('setup', `${what}: ${error instanceof Error ? error.message : String(error)}`, { sessionId }));
      };

      const disarm = (): void => {
        idle?.unsubscribe();
        idle = undefined;
      };
      const arm = (): void => {
        disarm();
        if (!Number.isFinite(spec.idleMs) || phase !== 'active' || commandsDone) return;
        idle = scheduler.schedule(() => {
          idle = undefined;
          if (phase === 'active' && ready && !running && owed === 0 && unanswered === 0 && !commandsDone) passivate();
        }, spec.idleMs);
      };

      /** Saves a snapshot of the conversation now, after the saves before it; `onTaken` once it is read (or failed to be). */
      const save = (onTaken?: () => void): Promise<number> => {
        const id = sessionId;
        const key = keyOf();
        const taken = saving.then(async () => {
          if (id === undefined || key === undefined) return 0;
          let snapshot: ConversationSnapshot;
          try {
            snapshot = await spec.take(id, turns);
          } finally {
            onTaken?.();
          }
          await spec.store.save(key, snapshot);
          return Buffer.byteLength(JSON.stringify(snapshot));
        });
        saving = taken.then(
          () => undefined,
          () => undefined,
        );
        return taken;
      };

      const passivate = (): void => {
        phase = 'passivating';
        disarm();
        // The agent's own graceful end: its input closes, it exits; its terminal comes to onInner.
        inner?.commands.complete();
      };

      const afterPassivation = (): void => {
        save().then(
          (snapshotBytes) => {
            if (phase !== 'passivating') return;
            phase = 'passive';
            inner = undefined;
            emit({ type: 'session.passivated', sessionId: sessionId as string, conversationId: keyOf() as string, idleMs: spec.idleMs, snapshotBytes });
            // What came while it fell asleep: answered as asleep where no process is needed, in order.
            const waiting = queue.splice(0);
            for (const [index, command] of waiting.entries()) {
              const answered = answerAsleep(command);
              if (answered === undefined) {
                queue.push(...waiting.slice(index));
                break;
              }
              emit(answered);
            }
            if (queue.length > 0) wake();
            else if (commandsDone) end(lastEnd ?? { type: 'terminal.completed', stopReason: 'end_turn' });
          },
          (error: unknown) => { fail('the conversation could not be saved', error); },
        );
      };

      /** A save that failed where the session goes on (or ends as the agent ended it): said, not fatal. */
      const warnUnsaved = (when: string, error: unknown): void => {
        emit({ type: 'agent.warning', message: `the conversation could not be saved ${when}: ${error instanceof Error ? error.message : String(error)}` });
      };

      const renumber = (message: Numbered): SessionMessage => ({ ...message, turn: message.turn + offset });

      const onInner = (message: SessionMessage): void => {
        if (phase === 'ended') return;
        switch (message.type) {
          case 'session.started':
          case 'session.resumed': {
            sessionId = message.sessionId;
            ready = true;
            arm();
            const resumed = message.type === 'session.resumed' && wakeStartedAt !== undefined ? { ...message, resumeMs: Math.max(0, scheduler.now() - wakeStartedAt) } : message;
            wakeStartedAt = undefined;
            if (!announced || message.type === 'session.resumed') emit(resumed);
            else emit({ type: 'agent.warning', message: `the agent started a new session (${message.sessionId}) where it was to resume one` });
            announced = true;
            return;
          }
          case 'input.accepted':
            unanswered = Math.max(0, unanswered - 1);
            if (message.as === 'follow-up') owed += 1;
            if (message.as === 'turn') acceptedAsTurn.add(message.turn);
            emit(renumber(message));
            return;
          case 'input.dropped':
            // A follow-up dropped by an abort was accepted before; any other drop answers a command.
            if (message.reason === 'aborted') owed = Math.max(0, owed - 1);
            else unanswered = Math.max(0, unanswered - 1);
            emit(message);
            arm();
            return;
          case 'turn.started':
            if (!acceptedAsTurn.delete(message.turn) && owed > 0) owed -= 1;
            running = true;
            disarm();
            turns = Math.max(turns, message.turn + offset);
            emit(renumber(message));
            return;
          case 'turn.completed':
          case 'turn.failed':
            running = false;
            if (message.type === 'turn.completed') {
              // Said once its snapshot is saved, so that a completed turn outlives the host. The next
              // command waits until the snapshot is read: it holds the turns completed so far, not the next one's prompt.
              const gate = { open: false };
              out.push({ gate });
              emit(renumber(message));
              holding = true;
              const turn = message.turn + offset;
              const opened = (): void => {
                gate.open = true;
                flush();
              };
              save(release).then(opened, (error: unknown) => {
                opened();
                warnUnsaved(`after turn ${String(turn)}`, error);
              });
            } else emit(renumber(message));
            arm();
            return;
          case 'terminal.completed':
          case 'terminal.failed':
            if (phase === 'passivating') {
              // Asleep all the same when the agent had to be stopped (it did not exit within its
              // grace period, a loaded machine): its conversation up to its last turn is in its files.
              if (message.type === 'terminal.completed') lastEnd = message;
              else emit({ type: 'agent.warning', message: `the agent did not end by itself as the session fell asleep (${message.reason}: ${message.message}); it was stopped` });
              afterPassivation();
              return;
            }
            // The process ended by itself, or as the commands ended: the session ends with it. Its
            // conversation is saved once more (the process has written all of it), then it ends.
            disarm();
            phase = 'closing';
            void save().then(
              () => { end(message); },
              (error: unknown) => {
                warnUnsaved('at its end', error);
                end(message);
              },
            );
            return;
          default:
            emit(message);
        }
      };

      // A process started later (a command woke the session) is in the scope the session was subscribed in.
      const activate = bindRunScope((resume: string | undefined): void => {
        const input = new Subject<SessionCommand>();
        const subscription = new Subscription();
        inner = { commands: input, subscription };
        phase = 'active';
        running = false;
        ready = false;
        owed = 0;
        unanswered = 0;
        acceptedAsTurn.clear();
        subscription.add(
          input.pipe(spec.session(resume)).subscribe({
            next: onInner,
            error: (error: unknown) => {
              if (phase !== 'ended') subscriber.error(error);
            },
          }),
        );
        for (const command of queue.splice(0)) forward(command);
        if (commandsDone) input.complete();
      });

      const forward = (command: SessionCommand): void => {
        unanswered += 1;
        disarm();
        if (holding) held.push(command);
        else inner?.commands.next(command);
      };
      /** The snapshot after a turn is read: the commands held meanwhile go to the process, in order. */
      const release = (): void => {
        holding = false;
        const target = inner;
        for (const command of held.splice(0)) target?.commands.next(command);
        if (commandsDone && phase === 'active') target?.commands.complete();
      };

      const wake = (): void => {
        phase = 'waking';
        wakeStartedAt = scheduler.now();
        offset = turns;
        const key = keyOf() as string;
        spec.store
          .load(key)
          .then(async (snapshot) => {
            if (snapshot === undefined) throw new Error(`the store has no snapshot of the conversation ${key}`);
            await spec.restore(snapshot);
            return snapshot;
          })
          .then(
            (snapshot) => {
              if (phase === 'waking') activate(snapshot.sessionId);
            },
            (error: unknown) => { fail('the conversation could not be resumed', error); },
          );
      };

      const onCommand = (command: SessionCommand): void => {
        switch (phase) {
          case 'active':
            forward(command);
            return;
          case 'passive': {
            const answered = answerAsleep(command);
            if (answered !== undefined) emit(answered);
            else {
              queue.push(command);
              wake();
            }
            return;
          }
          case 'ended':
            return;
          default:
            queue.push(command);
        }
      };

      const input = commands.subscribe({
        next: onCommand,
        error: (error: unknown) => {
          if (phase !== 'ended') subscriber.error(error);
        },
        complete: () => {
          commandsDone = true;
          disarm();
          if (phase === 'active' && !holding) inner?.commands.complete();
          else if (phase === 'passive') end(lastEnd ?? { type: 'terminal.completed', stopReason: 'end_turn' });
        },
      });

      // The first activation: the stored conversation when there is one, else a new one.
      const key = spec.conversationId;
      if (key === undefined) activate(undefined);
      else {
        wakeStartedAt = scheduler.now();
        spec.store
          .load(key)
          .then(async (snapshot) => {
            if (snapshot !== undefined) await spec.restore(snapshot);
            return snapshot;
          })
          .then(
            (snapshot) => {
              if (phase !== 'loading') return;
              if (snapshot === undefined) wakeStartedAt = undefined;
              else offset = turns = snapshot.turns;
              activate(snapshot?.sessionId);
            },
            (error: unknown) => { fail('the stored conversation could not be read', error); },
          );
      }

      return () => {
        phase = 'ended';
        disarm();
        input.unsubscribe();
        inner?.subscription.unsubscribe();
      };
    });
}

/** The answer to a command that needs no process while the session sleeps, or `undefined` to wake it. */
function answerAsleep(command: unknown): SessionMessage | undefined {
  if (typeof command !== 'object' || command === null) return undefined;
  const { type, id, requestId } = command as Partial<SessionCommand> & { readonly requestId?: unknown };
  const ids = typeof id === 'string' ? { commandId: id } : {};
  if (type === 'abort') return { type: 'input.dropped', kind: 'abort', reason: 'no-turn', message: 'no turn is running', ...ids };
  if (type === 'permission' && typeof requestId === 'string') {
    return { type: 'input.dropped', kind: 'permission', reason: 'no-request', message: `no permission request ${requestId} is pending`, requestId, ...ids };
  }
  return undefined;
}
