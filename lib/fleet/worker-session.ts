import type { Job } from 'bullmq';
import { randomUUID } from 'node:crypto';
import { Subject, type OperatorFunction, type Subscription } from 'rxjs';
import { agentByName } from '../agent-table.js';
import { isTerminal, type SessionCommand, type SessionMessage } from '../messages.js';
import { DEFAULT_GRACE_PERIOD_MS } from '../process/options.js';
import { currentRunScope, RunScope } from '../process/run-scope.js';
import { sweepMarked } from '../process/sweep.js';
import { traceContextOf, traceEnv } from '../process/trace-context.js';
import { parseSnapshot, type ConversationStore } from '../sessions/conversation-snapshot.js';
import { agentSession } from '../sessions/agent-session.js';
import { terminalFailed } from '../terminal-failed.js';
import { asError } from '../process/error-message.js';
import type { ErrorReport } from './on-error.js';
import type { Redis } from './peers.js';
import { UnrecoverableError } from './peers.js';
import type { FleetRedis } from './redis.js';
import { sessionKeys, SESSION_MAX_ENTRIES, SESSION_TTL_SECONDS, type SessionKeys } from './session-keys.js';
import { checkSessionId, checkSessionSpec, FLEET_SESSION_IDLE_MS, type ActivationData, type SessionSpec } from './session-spec.js';

/**
 * The variable every process of a session's activation carries: `<session id>/<worker>/<token>`
 * (the session and its lease holder), which its worker sweeps when the activation ends. Tokens
 * count per session, so the session id is what keeps one activation's sweep off another's agents.
 */
export const SESSION_ENV = 'AGENT_RX_SESSION';

/** What a session's activation needs of its worker. */
export interface SessionHost {
  readonly workerName: string;
  readonly prefix: string;
  readonly redis: FleetRedis;
  /** How often the lease is renewed, and how long it lives unrenewed. */
  readonly beatMs: number;
  readonly leaseMs: number;
  /** Aborted once the worker closes: an activation fetched then is not started. */
  readonly closing: AbortSignal;
  /** The activations running here, by session id: the drain puts them to sleep. */
  readonly sessions: Map<string, ActiveSession>;
  readonly report: ErrorReport;
  /**
   * The session options of the spec's agent on this worker (its settings for the agent, the folder
   * it resolves, its markers in `env`); throws when it refuses the session.
   */
  options(spec: SessionSpec, marker: Readonly<Record<string, string>>): Readonly<Record<string, unknown>>;
  tell(event: WorkerSessionEvent): void;
}

/** A session activation running on this worker. */
export interface ActiveSession {
  /** Puts it to sleep as soon as no turn runs (the drain); `stop` after the drain's deadline. */
  drain(): void;
  /** Stops its agent now (the stop sequence), then gives the lease back: a running turn ends `lost`. */
  stop(): void;
}

/** What a worker did with a session's activation. */
export type WorkerSessionEvent =
  | { readonly type: 'session.activated'; readonly sessionId: string; readonly agent: SessionSpec['agent']; readonly token: number }
  | { readonly type: 'session.skipped'; readonly sessionId: string; readonly why: 'active' | 'closing' }
  | { readonly type: 'session.deactivated'; readonly sessionId: string; readonly why: 'slept' | 'ended' | 'drained' | 'fenced' | 'unreachable' | 'stopped' };

/**
 * Runs a session's activation job: takes the session's lease (a fencing token; none when another
 * activation is live, and the job ends), then serves the session here until it sleeps, ends, or
 * loses the lease. Settles once its agent is gone and the lease is back (or lost).
 */
export async function activateSession(host: SessionHost, job: Job): Promise<void> {
  const data = checkActivation(job.data);
  const keys = sessionKeys(host.prefix, data.sessionId);
  if (host.closing.aborted) {
    // Another worker takes it: a caller enqueues it again once the marker is gone.
    await host.redis.del(keys.activating).catch(host.report);
    host.tell({ type: 'session.skipped', sessionId: data.sessionId, why: 'closing' });
    return;
  }
  // The lease names this activation alone: after a Redis restart that lost the fencing counter, a
  // token can come again, on the same worker too.
  const claimant = `${host.workerName}~${randomUUID().slice(0, 8)}`;
  const token = await host.redis.agentRxSessionAcquire(keys.lease, keys.fence, keys.activating, claimant, host.leaseMs, SESSION_TTL_SECONDS);
  if (token === null) {
    host.tell({ type: 'session.skipped', sessionId: data.sessionId, why: 'active' });
    return;
  }
  const lastTurn = Number((await host.redis.get(keys.lastTurn).catch(() => null)) ?? 0);
  const upMs = token === 1 ? await redisUptimeMs(host.redis) : Number.POSITIVE_INFINITY;
  host.tell({ type: 'session.activated', sessionId: data.sessionId, agent: data.spec.agent, token });
  await new Promise<void>((resolve) => {
    new Activation(host, data, keys, `${claimant}/${String(token)}`, lastTurn, upMs, resolve).start();
  });
}

/** How long the Redis server has been up (`INFO server`), in ms; 0 when it cannot be read. */
async function redisUptimeMs(redis: FleetRedis): Promise<number> {
  try {
    const seconds = /uptime_in_seconds:(\d+)/.exec(await redis.info('server'))?.[1];
    return seconds === undefined ? 0 : Number(seconds) * 1000;
  } catch {
    return 0;
  }
}

function checkActivation(value: unknown): ActivationData {
  try {
    const { sessionId, spec, traceContext } = (value ?? {}) as { readonly sessionId?: unknown; readonly spec?: unknown; readonly traceContext?: unknown };
    checkSessionId(sessionId as string);
    // A trace context that is not W3C's is dropped (as W3C says), never a reason to refuse the session.
    const trace = traceContextOf(traceContext);
    return { sessionId: sessionId as string, spec: checkSessionSpec(spec), ...(trace === undefined ? {} : { traceContext: trace }) };
  } catch (error) {
    throw new UnrecoverableError(asError(error).message);
  }
}

type Why = Extract<WorkerSessionEvent, { type: 'session.deactivated' }>['why'];

/**
 * One activation of a session on this worker: the agent's session (with the conversation loaded
 * from and saved to Redis, fenced by the lease), fed the commands it takes from the session's
 * command stream, its messages appended to the session's log through the fenced gate, the lease
 * renewed each beat. When the agent's session falls asleep it gives the lease back, unless a
 * command came meanwhile (then that command wakes it here).
 */
class Activation implements ActiveSession {
  readonly #host: SessionHost;
  readonly #data: ActivationData;
  readonly #keys: SessionKeys;
  readonly #holder: string;
  /** SESSION_ENV's value for this activation's processes. */
  readonly #marker: string;
  readonly #lastTurn: number;
  /** How long Redis had been up when the lease was taken with a first token (else Infinity). */
  readonly #redisUpMs: number;
  readonly #done: () => void;
  readonly #commands = new Subject<SessionCommand>();
  readonly #idleMs: number;
  #reader: Redis | null = null;
  #subscription: Subscription | null = null;
  #beat: NodeJS.Timeout | undefined;
  /** The wait before the agent starts, while Redis is young. */
  #hold: NodeJS.Timeout | undefined;
  #lastBeat = performance.now();
  /** Taken commands not answered yet (by command id). */
  readonly #unanswered = new Set<string>();
  /** The turn running now, by its number in the log. */
  #running: number | null = null;
  /** Added to the agent session's turn numbers: turns an activation lost, numbered in the log but not in the snapshot. */
  #delta = 0;
  /** The agent's own session id, and the size of the last snapshot saved. */
  #agentSessionId: string | undefined;
  #snapshotBytes = 0;
  /** Takes and releases in order: a release never runs while a command is being taken. */
  #serial: Promise<void> = Promise.resolve();
  /** The lease is given back: the end of the agent's session is the sleep's, not written. */
  #sleeping = false;
  /** The lease is being given back (a release is on its way to Redis). */
  #releasing = false;
  #draining = false;
  /** Nothing more is written: the activation is over or was fenced. */
  #over = false;
  #finished = false;
  #stopping = false;
  /** The agent's session is asleep (between its `session.passivated` and a wake). */
  #asleep = false;
  #processUp = false;
  #processGone: (() => void) | null = null;
  /** The scope the agent's session runs in: the waking caller's trace context, for its processes (and an ACP agent's prompts). */
  readonly #scope: RunScope;

  constructor(host: SessionHost, data: ActivationData, keys: SessionKeys, holder: string, lastTurn: number, redisUpMs: number, done: () => void) {
    this.#host = host;
    this.#data = data;
    this.#keys = keys;
    this.#holder = holder;
    this.#marker = `${data.sessionId}/${holder}`;
    this.#lastTurn = lastTurn;
    this.#redisUpMs = redisUpMs;
    this.#done = done;
    this.#idleMs = data.spec.idleMs ?? FLEET_SESSION_IDLE_MS;
    this.#scope = new RunScope(currentRunScope(), traceEnv(data.traceContext));
  }

  start(): void {
    const host = this.#host;
    host.sessions.set(this.#data.sessionId, this);
    this.#beat = setInterval(() => {
      this.#renew();
    }, host.beatMs);
    let session;
    let graceMs = DEFAULT_GRACE_PERIOD_MS;
    try {
      const options = host.options(this.#data.spec, { [SESSION_ENV]: this.#marker });
      if (typeof options['gracePeriodMs'] === 'number') graceMs = options['gracePeriodMs'];
      session = agentSession(agentByName(this.#data.spec.agent), {
        ...options,
        idleMs: this.#idleMs,
        conversationId: this.#data.sessionId,
        store: this.#store(),
        onStopped: () => {
          this.#processUp = false;
          this.#processGone?.();
        },
      });
    } catch (error) {
      this.#write(terminalFailed('setup', `the worker refused the session: ${asError(error).message}`));
      void this.#end('ended', 'force');
      return;
    }
    // A first token while Redis is young: Redis may have restarted without its data, and an
    // activation from before may still run its agent until it finds its lease gone (within a beat)
    // or unrenewable (within the lease) and its stop sequence ends (the grace period). The agent
    // starts once that is over, so that at most one of the session's agents is alive.
    const holdMs = host.leaseMs + host.beatMs + graceMs + 500 - this.#redisUpMs;
    if (holdMs > 0) {
      this.#hold = setTimeout(() => {
        this.#open(session);
      }, holdMs);
    } else this.#open(session);
  }

  #open(session: OperatorFunction<SessionCommand, SessionMessage>): void {
    if (this.#over) return;
    if (this.#sleeping) {
      // Drained while it waited: no agent was started.
      void this.#end('drained', 'force');
      return;
    }
    const host = this.#host;
    this.#subscription = this.#scope.run(() =>
      this.#commands.pipe(session).subscribe({
        next: (message) => {
          this.#onMessage(message);
        },
        complete: () => {
          void this.#end(this.#draining ? 'drained' : this.#sleeping ? 'slept' : 'ended', 'force');
        },
        error: (error: unknown) => {
          this.#write(terminalFailed('lost', `the session failed on the worker ${host.workerName}: ${asError(error).message}`));
          void this.#end('ended', 'force');
        },
      }),
    );
    void this.#read();
  }

  drain(): void {
    if (this.#draining || this.#over) return;
    this.#draining = true;
    this.#sleepIfIdle();
  }

  stop(): void {
    void this.#stop('stopped');
  }

  /** The conversation in Redis: loaded once (which says the turn numbers to go on from), saved only while the lease is this activation's. */
  #store(): ConversationStore {
    const { redis } = this.#host;
    const keys = this.#keys;
    return {
      load: async () => {
        const text = await redis.get(keys.snapshot);
        const snapshot = text === null ? undefined : parseSnapshot(text, `the snapshot of the fleet session ${this.#data.sessionId}`);
        this.#delta = Math.max(0, this.#lastTurn - (snapshot?.turns ?? 0));
        return snapshot;
      },
      save: async (_key, snapshot) => {
        const json = JSON.stringify(snapshot);
        const saved = await redis.agentRxSessionSave(keys.lease, keys.snapshot, this.#holder, json, SESSION_TTL_SECONDS);
        if (saved === 0) throw new Error(`the worker ${this.#host.workerName} lost the session's lease: not saved`);
        this.#snapshotBytes = Buffer.byteLength(json);
      },
    };
  }

  #onMessage(raw: SessionMessage): void {
    const message = this.#delta > 0 && 'turn' in raw && typeof raw.turn === 'number' ? ({ ...raw, turn: raw.turn + this.#delta } as SessionMessage) : raw;
    switch (message.type) {
      case 'session.passivated':
        this.#asleep = true;
        break;
      case 'session.started':
      case 'session.resumed':
        this.#asleep = false;
        this.#processUp = true;
        this.#agentSessionId = message.sessionId;
        break;
      case 'turn.started':
        this.#running = message.turn;
        if (message.commandId !== undefined) this.#unanswered.delete(message.commandId);
        break;
      case 'turn.completed':
      case 'turn.failed':
        this.#running = null;
        break;
      case 'input.dropped':
        if (message.commandId !== undefined) this.#unanswered.delete(message.commandId);
        break;
      case 'input.accepted':
        if (message.commandId !== undefined && message.as !== 'follow-up' && message.as !== 'turn') this.#unanswered.delete(message.commandId);
        break;
      default:
        break;
    }
    if (isTerminal(message)) {
      // The end of a session that fell asleep here is not the session's: nothing is written.
      if (!this.#sleeping) this.#write(message);
      return;
    }
    this.#write(message);
    if (message.type === 'session.passivated') this.#serialize(() => this.#release());
    else if ((message.type === 'turn.completed' || message.type === 'turn.failed') && this.#draining) this.#sleepIfIdle();
  }

  /** After the agent's session fell asleep: the lease back, unless a command came that it must take. */
  async #release(): Promise<void> {
    if (this.#over || this.#unanswered.size > 0) return;
    // While the lease goes back, a beat or a write finds it gone: that is this sleep, not a fence.
    this.#releasing = true;
    const answer = await this.#host.redis
      .agentRxSessionRelease(this.#keys.lease, this.#keys.commands, this.#keys.applied, this.#holder, '')
      .catch((error: unknown) => {
        this.#host.report(error);
        return 'error';
      });
    this.#releasing = answer === 'released';
    if (answer === 'released') {
      this.#sleeping = true;
      this.#over = true;
      this.#stopReading();
      // Asleep, the agent's session ends without a process.
      this.#commands.complete();
    } else if (answer === 'lost') {
      await this.#stop('fenced');
    }
    // `pending`: a command came; the reader takes it and the session wakes here. An error: the next sleep tries again.
  }

  /** The drain: asleep now when no turn runs and every command is answered (its conversation saved as its process ends). */
  #sleepIfIdle(): void {
    this.#serialize(async () => {
      if (this.#over || this.#running !== null || this.#unanswered.size > 0) return;
      this.#sleeping = true;
      this.#stopReading();
      // The agent ends by itself (its input closed); its session saves the conversation then.
      this.#commands.complete();
      await Promise.resolve();
    });
  }

  #serialize(step: () => Promise<void>): void {
    this.#serial = this.#serial.then(step).catch(this.#host.report);
  }

  async #read(): Promise<void> {
    const { redis, report } = this.#host;
    const reader = redis.duplicate({ maxRetriesPerRequest: null, enableOfflineQueue: true });
    reader.on('error', report);
    this.#reader = reader;
    let after = (await redis.get(this.#keys.applied).catch(() => null)) ?? '0-0';
    while (this.#isReading()) {
      let result: [string, [string, string[]][]][] | null;
      try {
        result = (await reader.xread('COUNT', 16, 'BLOCK', 1000, 'STREAMS', this.#keys.commands, after));
      } catch (error) {
        if (!this.#isReading()) break;
        report(error);
        await new Promise((resolve) => setTimeout(resolve, 250));
        continue;
      }
      for (const [id, fields] of result?.[0]?.[1] ?? []) {
        after = id;
        const taken = new Promise<void>((resolve) => {
          this.#serialize(async () => {
            await this.#take(id, fields);
            resolve();
          });
        });
        await taken;
        if (!this.#isReading()) break;
      }
    }
    reader.disconnect();
  }

  async #take(id: string, fields: readonly string[]): Promise<void> {
    if (this.#over || this.#sleeping) return;
    const command = parseJson(fields[fields.indexOf('c') + 1]);
    const { id: commandId, type } = (typeof command === 'object' && command !== null ? command : {}) as { readonly id?: unknown; readonly type?: unknown };
    const key = typeof commandId === 'string' ? commandId : `entry-${id}`;
    const kind = typeof type === 'string' && ['prompt', 'follow-up', 'steer', 'abort', 'permission'].includes(type) ? type : 'invalid';
    const { redis } = this.#host;
    const answer = await redis.agentRxSessionTake(this.#keys.lease, this.#keys.applied, this.#keys.taken, this.#holder, id, key, kind, SESSION_TTL_SECONDS);
    if (answer !== 'ok') {
      await this.#stop('fenced');
      return;
    }
    if (typeof commandId === 'string') this.#unanswered.add(commandId);
    this.#commands.next(command as SessionCommand);
  }

  #isReading(): boolean {
    return this.#reader !== null;
  }

  #stopReading(): void {
    const reader = this.#reader;
    this.#reader = null;
    reader?.disconnect();
  }

  // Fencing: once the lease may have expired, another activation may start; this one must not run on unseen.
  #renew(): void {
    const { redis, leaseMs, report } = this.#host;
    if (this.#over || this.#releasing) return;
    if (performance.now() - this.#lastBeat >= leaseMs) {
      void this.#stop('unreachable');
      return;
    }
    redis.agentRxSessionRenew(this.#keys.lease, this.#holder, leaseMs).then((answer) => {
      this.#lastBeat = performance.now();
      if (answer === 'lost' && !this.#over && !this.#releasing) void this.#stop('fenced');
    }, report);
  }

  // A message to the log, through the fenced gate: refused once the lease is not this activation's.
  #write(message: SessionMessage): void {
    if (this.#over) return;
    const { redis, report } = this.#host;
    const keys = this.#keys;
    redis.agentRxSessionAppend(keys.lease, keys.log, keys.open, keys.taken, keys.lastTurn, this.#holder, JSON.stringify(message), SESSION_MAX_ENTRIES, SESSION_TTL_SECONDS).then((id) => {
      if (id === null && !this.#over && !this.#releasing) void this.#stop('fenced');
    }, report);
  }

  /** Stops the agent now (the stop sequence), waits until its processes are gone, then ends. */
  async #stop(why: 'fenced' | 'unreachable' | 'stopped'): Promise<void> {
    if (this.#finished || this.#stopping) return;
    this.#stopping = true;
    this.#over = true;
    this.#stopReading();
    const gone = this.#processUp ? new Promise<void>((resolve) => (this.#processGone = resolve)) : Promise.resolve();
    this.#subscription?.unsubscribe();
    await Promise.race([gone, new Promise((resolve) => setTimeout(resolve, 15_000))]);
    await this.#end(why, why === 'stopped' ? 'force' : 'none');
  }

  /**
   * Over: whatever is left of its processes swept, the lease given back (`force`) unless it was
   * lost or given back already, the job settled.
   */
  async #end(why: Why, release: 'force' | 'none'): Promise<void> {
    if (this.#finished) return;
    this.#finished = true;
    this.#over = true;
    clearInterval(this.#beat);
    clearTimeout(this.#hold);
    this.#stopReading();
    this.#subscription?.unsubscribe();
    const { redis, report } = this.#host;
    await sweepMarked(SESSION_ENV, this.#marker, 5);
    if (this.#draining && this.#sleeping && !this.#asleep) {
      // Asleep for the drain: said as a sleep (the agent's session saved the conversation as its process ended).
      const passivated = { type: 'session.passivated', sessionId: this.#agentSessionId ?? this.#data.sessionId, conversationId: this.#data.sessionId, idleMs: this.#idleMs, snapshotBytes: this.#snapshotBytes };
      await redis
        .agentRxSessionAppend(this.#keys.lease, this.#keys.log, this.#keys.open, this.#keys.taken, this.#keys.lastTurn, this.#holder, JSON.stringify(passivated), SESSION_MAX_ENTRIES, SESSION_TTL_SECONDS)
        .catch(report);
    }
    if (release === 'force' && !(this.#sleeping && !this.#draining)) {
      await redis.agentRxSessionRelease(this.#keys.lease, this.#keys.commands, this.#keys.applied, this.#holder, 'force').catch(report);
    }
    this.#host.sessions.delete(this.#data.sessionId);
    this.#host.tell({ type: 'session.deactivated', sessionId: this.#data.sessionId, why });
    this.#done();
  }
}

function parseJson(text: string | undefined): unknown {
  try {
    return JSON.parse(text ?? 'null');
  } catch {
    return null;
  }
}
