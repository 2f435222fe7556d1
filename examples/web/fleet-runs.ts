// Fleet mode of the web example: each run goes to agent-rx/fleet workers (BullMQ on Redis), and its
// stream resumes after a drop. See resumable.ts for the id scheme.
//
// Who holds a run: the server that started it keeps `dispatcher.run(spec, { runId })` subscribed
// for the run's life (not the response's): that subscription is what enqueued it, and what the
// dispatcher cancels when the server closes. Responses never read it; each one reads the run's
// stream with `dispatcher.follow(runId, { after })`, whose entries carry the ids the events need:
// the first response from the start, a reconnect after the entry its Last-Event-ID names.
//
// When a run is cancelled:
// - Stop on the page: it closes its EventSource and POSTs /cancel?run=<id>: cancelled at once.
// - The tab closed or reloaded: the page sends the same cancel as a beacon (pagehide): at once.
// - A stream that drops without either (a network change, a proxy restart, a laptop lid, a
//   crashed tab): the connection alone cannot tell a drop that will reconnect from a client that is
//   gone, and cancelling at once would throw the agent's work away on every blip. So the run goes
//   on, and waits `reconnectGraceMs` (default 10 s) for a request that resumes it; when none came,
//   it is cancelled, so that an abandoned run does not go on for nothing. The stream's first event
//   carries `retry: 1000`, so a browser that can reconnect does so within about a second.
// - The server closes: its runs are cancelled (the dispatcher cancels the runs it started).
// A run this server did not start (another instance behind the same balancer started it) is
// resumed and cancelled by id all the same, but its grace timer is the starting server's.
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { concat, defer, EMPTY, from, map, of, switchMap, type Subscription } from 'rxjs';
import type { FleetConnection, RunDispatcher, RunEntry, RunSpec } from '../../lib/fleet.js';
import { isTerminal, type CliMessage } from '../../lib/index.js';
import { DEFAULT_RECONNECT_GRACE_MS, describePrompt, type WebPrompt } from './options.js';
import { eventId, parseEventId, RUN_EVENT, START_ENTRY_ID, type RunEventData } from './resumable.js';
import { serveSseEvents, type SseEvent } from './sse.js';

export interface WebFleetOptions {
  /** Where Redis is: a `redis://`, `rediss://` or `unix://` URL, or ioredis options. */
  readonly connection: FleetConnection;
  /** The BullMQ queue of the workers. Default `agent-rx`. */
  readonly queue?: string;
  /** The prefix of agent-rx's keys. Default `agentrx`. */
  readonly prefix?: string;
  /** How long a run whose stream dropped waits for a reconnect before it is cancelled. Default 10 000 ms. */
  readonly reconnectGraceMs?: number;
  /** How long the browser waits before it reconnects (SSE `retry:`). Default 1000 ms. */
  readonly retryMs?: number;
}

export interface FleetRuns {
  /** A new run of `prompt` (its text, and an attached image), streamed to `response`; `false` (nothing started) when the spec is refused, with why. */
  start(response: ServerResponse, prompt: WebPrompt): { readonly started: true } | { readonly started: false; readonly why: string };
  /** Answers a reconnect: `false` when `lastEventId` is not one of ours (the caller answers 204). */
  resume(response: ServerResponse, lastEventId: string): boolean;
  /** Cancels a run (Stop): settles once the cancel is in Redis. */
  cancel(runId: string, why: string): Promise<void>;
  /** Cancels this server's open runs and closes the dispatcher. */
  close(): Promise<void>;
}

/** A run this server started, from its enqueue to its terminal. */
interface OwnedRun {
  readonly runId: string;
  readonly number: number;
  /** Settles at the run's first message: from then on, Redis knows it (a `follow` before may find nothing). */
  readonly known: Promise<void>;
  /** The terminal the dispatcher gave it (it may be one its stream does not hold: the queue was unreachable). */
  terminal: CliMessage | null;
  over: boolean;
  subscription: Subscription | null;
  /** Open responses streaming it. */
  readers: number;
  grace: NodeJS.Timeout | null;
}

export interface FleetRunsSettings {
  readonly fleet: WebFleetOptions;
  readonly spec: (prompt: WebPrompt) => RunSpec;
  readonly log: (line: string) => void;
  readonly keepAliveMs?: number;
}

/** Loads agent-rx/fleet (bullmq, ioredis: only in fleet mode) and connects to Redis. */
export async function createFleetRuns(settings: FleetRunsSettings): Promise<FleetRuns> {
  return new Runs(await connectFleet(settings.fleet, settings.log), settings);
}

/** A dispatcher on the fleet's Redis, agent-rx/fleet loaded now (bullmq, ioredis: only in fleet mode); Redis errors logged once each. */
export async function connectFleet(options: WebFleetOptions, log: (line: string) => void): Promise<RunDispatcher> {
  let fleet: typeof import('../../lib/fleet.js');
  try {
    fleet = await import('../../lib/fleet.js');
  } catch (error) {
    throw new Error(`fleet mode needs the packages bullmq and ioredis (npm install bullmq ioredis): ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  let lastError = '';
  return fleet.createRunDispatcher({
    connection: options.connection,
    ...(options.queue === undefined ? {} : { queue: options.queue }),
    ...(options.prefix === undefined ? {} : { prefix: options.prefix }),
    onError: (error) => {
      // Redis down is told once, not every retry.
      if (error.message === lastError) return;
      lastError = error.message;
      log(`fleet: ${error.message}`);
    },
  });
}

class Runs implements FleetRuns {
  readonly #dispatcher: RunDispatcher;
  readonly #settings: FleetRunsSettings;
  readonly #graceMs: number;
  readonly #retryMs: number;
  readonly #owned = new Map<string, OwnedRun>();
  readonly #cancelling = new Set<Promise<void>>();
  #runs = 0;
  #closed = false;

  constructor(dispatcher: RunDispatcher, settings: FleetRunsSettings) {
    this.#dispatcher = dispatcher;
    this.#settings = settings;
    this.#graceMs = settings.fleet.reconnectGraceMs ?? DEFAULT_RECONNECT_GRACE_MS;
    this.#retryMs = settings.fleet.retryMs ?? 1000;
  }

  start(response: ServerResponse, prompt: WebPrompt): { readonly started: true } | { readonly started: false; readonly why: string } {
    // A client that left already gets nothing, and nothing is started for it.
    if (response.socket === null || response.socket.destroyed) return { started: true };
    const runId = randomUUID();
    let source;
    try {
      source = this.#dispatcher.run(this.#settings.spec(prompt), { runId });
    } catch (error) {
      return { started: false, why: error instanceof Error ? error.message : String(error) };
    }
    this.#runs += 1;
    let markKnown!: () => void;
    const run: OwnedRun = {
      runId,
      number: this.#runs,
      known: new Promise<void>((resolve) => (markKnown = resolve)),
      terminal: null,
      over: false,
      subscription: null,
      readers: 0,
      grace: null,
    };
    this.#owned.set(runId, run);
    const startedAt = performance.now();
    this.#settings.log(`run ${run.number}: queued for the fleet as ${runId} (${describePrompt(prompt)})`);
    run.subscription = source.subscribe({
      next: (message) => {
        markKnown();
        if (!isTerminal(message)) return;
        run.terminal = message;
        const why = message.type === 'terminal.failed' ? ` (${message.reason}: ${message.message})` : '';
        this.#settings.log(`run ${run.number}: ${message.type}${why} after ${((performance.now() - startedAt) / 1000).toFixed(1)} s`);
      },
      complete: () => {
        markKnown();
        run.over = true;
        this.#stopGrace(run);
        this.#owned.delete(runId);
      },
    });
    const first: RunEventData = { runId, graceMs: this.#graceMs };
    this.#serve(response, runId, START_ENTRY_ID, { event: RUN_EVENT, id: eventId(runId, START_ENTRY_ID), retryMs: this.#retryMs, data: JSON.stringify(first) });
    return { started: true };
  }

  resume(response: ServerResponse, lastEventId: string): boolean {
    const resumed = parseEventId(lastEventId);
    if (resumed === null) return false;
    const run = this.#owned.get(resumed.runId);
    this.#settings.log(`${run === undefined ? `run ${resumed.runId}` : `run ${run.number}`}: resumed after entry ${resumed.after}`);
    this.#serve(response, resumed.runId, resumed.after, null);
    return true;
  }

  async cancel(runId: string, why: string): Promise<void> {
    const run = this.#owned.get(runId);
    this.#settings.log(`${run === undefined ? `run ${runId}` : `run ${run.number}`}: cancelled (${why})`);
    const cancelling = this.#dispatcher.cancel(runId);
    this.#cancelling.add(cancelling);
    try {
      await cancelling;
    } finally {
      this.#cancelling.delete(cancelling);
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const run of this.#owned.values()) this.#stopGrace(run);
    await Promise.allSettled([...this.#cancelling]);
    // Cancels the runs it started and still streams (they end `stopped`), and closes its connections.
    await this.#dispatcher.close();
  }

  // One response: `first` (a new stream's run event), then the run's entries after `after`.
  #serve(response: ServerResponse, runId: string, after: string, first: SseEvent | null): void {
    if (response.socket === null || response.socket.destroyed) return;
    const run = this.#owned.get(runId);
    let ended = false;
    const entries = defer(() => from(run?.known ?? Promise.resolve())).pipe(
      switchMap(() => this.#dispatcher.follow(runId, { after })),
      map((entry) => {
        if (isTerminal(entry.message)) ended = true;
        return this.#event(runId, entry, run);
      }),
    );
    if (run !== undefined) this.#joined(run, response, () => ended);
    serveSseEvents(response, concat(first === null ? EMPTY : of(first), entries), {
      ...(this.#settings.keepAliveMs === undefined ? {} : { keepAliveMs: this.#settings.keepAliveMs }),
      // A resume with nothing left to send (it had it all) is answered 204, not a stream that ends
      // at once: that would make the browser reconnect again and again.
      ...(first === null ? { holdHeadMs: 1000 } : {}),
    });
  }

  #event(runId: string, entry: RunEntry, run: OwnedRun | undefined): SseEvent {
    // An entry without an id is a terminal the reader made (the run is unknown, or Redis was
    // unreachable): the run's own, when the dispatcher gave it one, says better what happened.
    if (entry.id === '') return { data: JSON.stringify(run?.terminal ?? entry.message) };
    return { id: eventId(runId, entry.id), data: JSON.stringify(entry.message) };
  }

  // Counts the response as a reader of the run until it closes; the last one to leave early starts the grace.
  #joined(run: OwnedRun, response: ServerResponse, sentTerminal: () => boolean): void {
    run.readers += 1;
    this.#stopGrace(run);
    response.once('close', () => {
      run.readers -= 1;
      if (run.readers > 0 || run.over || this.#closed || sentTerminal()) return;
      this.#settings.log(`run ${run.number}: the stream dropped; the run waits ${String(this.#graceMs)} ms for it to resume`);
      run.grace = setTimeout(() => {
        run.grace = null;
        if (run.readers > 0 || run.over || this.#closed) return;
        this.cancel(run.runId, `no reconnect within ${String(this.#graceMs)} ms`).catch((error: unknown) => {
          this.#settings.log(`run ${run.number}: the cancel failed: ${error instanceof Error ? error.message : String(error)}`);
        });
      }, this.#graceMs);
    });
  }

  #stopGrace(run: OwnedRun): void {
    if (run.grace !== null) clearTimeout(run.grace);
    run.grace = null;
  }
}
