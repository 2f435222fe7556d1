// Resumable streams (fleet mode of the web example), both sides of the wire: the SSE id scheme the
// server writes and reads back, and the page's wrapper that lets its EventSource reconnect. No
// Node and no DOM here: server.ts and page.ts both import it.
//
// The scheme: every event of a fleet run's stream has `id: <runId>/<entry id>`, the entry id being
// the one of the run's Redis stream entry (`<ms>-<seq>`, what `dispatcher.follow` takes as `after`).
// The first event of a new stream is `event: run` with `id: <runId>/0-0` and data
// `{"runId":…,"graceMs":…}`: it sets the EventSource's last event id before any message came (a
// drop before the first message then resumes from the start, instead of starting a second run),
// and tells the page which run to cancel on Stop. A named event, so `fromAgentEventSource`, which
// reads `message` events only, does not see it. An EventSource that reconnects sends the last id as
// `Last-Event-ID`, and the server answers with `follow(runId, { after: entry id })`: exactly the
// rest of the run.
//
// A fleet session's stream (fleet-sessions.ts) has the same ids, its session id in place of the
// run's and its log's entry ids (`followSession`'s `after`); its first event is `event: session`
// with data `{"id":…,"graceMs":…}`.
import type { EventLike, EventSourceLike } from '../../lib/browser.js';

/** The type of the first event of a fleet run's resumable stream. */
export const RUN_EVENT = 'run';

/** The data of the `run` event. */
export interface RunEventData {
  readonly runId: string;
  /** How long the server waits for a dropped stream to come back before it cancels the run. */
  readonly graceMs: number;
}

/** The entry id before a run's first entry: `follow` from it gives the whole run. */
export const START_ENTRY_ID = '0-0';

const RUN_ID = /^[\w.:-]{1,200}$/;
const EVENT_ID = /^([\w.:-]{1,200})\/(\d{1,20}-\d{1,20})$/;

/** Whether `text` is a run id the fleet takes (1 to 200 letters, digits, `_ . : -`). */
export function isRunId(text: string): boolean {
  return RUN_ID.test(text);
}

const SESSION_ID = /^[\w.-]{1,200}$/;

/** Whether `text` is a fleet session id (1 to 200 letters, digits, `_ . -`). */
export function isSessionId(text: string): boolean {
  return SESSION_ID.test(text);
}

/** The SSE `id` of a run's entry. */
export function eventId(runId: string, entryId: string): string {
  return `${runId}/${entryId}`;
}

/** A `Last-Event-ID` read back: the run, and the entry after which to resume; `null` when it is not one of ours. */
export function parseEventId(text: string): { readonly runId: string; readonly after: string } | null {
  const match = EVENT_ID.exec(text);
  if (match === null) return null;
  const [, runId = '', after = ''] = match;
  return { runId, after };
}

/** The `run` event's data, or `null` when it is not one. */
export function parseRunEvent(data: unknown): RunEventData | null {
  if (typeof data !== 'string') return null;
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const { runId, graceMs } = value as { runId?: unknown; graceMs?: unknown };
  if (typeof runId !== 'string' || !isRunId(runId) || typeof graceMs !== 'number' || !(graceMs >= 0)) return null;
  return { runId, graceMs };
}

export interface ResumingOptions {
  /** Told the run once its `run` event came: the page cancels it by that id on Stop. */
  readonly onRun?: (run: RunEventData) => void;
  /** How long to wait for a reconnect before giving up. Default: the stream's `graceMs` (for a run, after that the server has cancelled it). */
  readonly giveUpMs?: number;
  /**
   * The named event that says the stream is resumable, with a `graceMs` in its data. Default `run`
   * (a fleet run's stream); a fleet session's stream says it with its `session` event.
   */
  readonly event?: string;
}

/** The `graceMs` of a resumable stream's first event (any JSON object with one), or `null`. */
export function parseGraceMs(data: unknown): number | null {
  if (typeof data !== 'string') return null;
  try {
    const value: unknown = JSON.parse(data);
    const graceMs = typeof value === 'object' && value !== null ? (value as { graceMs?: unknown }).graceMs : undefined;
    return typeof graceMs === 'number' && graceMs >= 0 ? graceMs : null;
  } catch {
    return null;
  }
}

const CLOSED = 2;

/**
 * Wraps an EventSource for `fromAgentEventSource` (or `fromSessionEventSource`) so that a resumable stream survives a drop.
 * `fromAgentEventSource` ends its run on the first `error` event (it never reconnects, since a
 * plain stream would start the run again). A browser's EventSource fires `error` when the
 * connection drops and then reconnects by itself (readyState 0): once the stream has said it is
 * resumable (its `run` event, or the `event` option's), those `error`s are held back, and the reconnect is left to the
 * browser; the server resumes after the last id. An `error` is let through when the browser gave
 * up (readyState 2: the server answered 204, an HTTP error, or not an event stream), when the
 * stream is not a resumable one (no `run` event: exactly today's behaviour), or when no reconnect
 * opened within `giveUpMs` (then the source is closed first).
 */
export function resumingEventSource(source: EventSourceLike, options: ResumingOptions = {}): EventSourceLike {
  return new ResumingEventSource(source, options);
}

type Listener = (event: EventLike) => void;

class ResumingEventSource implements EventSourceLike {
  readonly #source: EventSourceLike;
  readonly #options: ResumingOptions;
  readonly #errorListeners = new Map<Listener, Listener>();
  readonly #event: string;
  /** The stream's `graceMs`, once it said it is resumable. */
  #graceMs: number | null = null;
  #giveUp: ReturnType<typeof setTimeout> | null = null;

  constructor(source: EventSourceLike, options: ResumingOptions) {
    this.#source = source;
    this.#options = options;
    this.#event = options.event ?? RUN_EVENT;
    source.addEventListener(this.#event, this.#onFirst);
    source.addEventListener('open', this.#onOpen);
  }

  get readyState(): number {
    return this.#source.readyState;
  }

  get url(): string {
    return this.#source.url ?? 'the EventSource';
  }

  addEventListener(type: string, listener: Listener): void {
    if (type !== 'error') {
      this.#source.addEventListener(type, listener);
      return;
    }
    if (this.#errorListeners.has(listener)) return;
    const filtered: Listener = (event) => {
      if (this.#passes()) listener(event);
    };
    this.#errorListeners.set(listener, filtered);
    this.#source.addEventListener('error', filtered);
  }

  removeEventListener(type: string, listener: Listener): void {
    if (type !== 'error') {
      this.#source.removeEventListener(type, listener);
      return;
    }
    const filtered = this.#errorListeners.get(listener);
    if (filtered === undefined) return;
    this.#errorListeners.delete(listener);
    this.#source.removeEventListener('error', filtered);
  }

  close(): void {
    this.#stopWaiting();
    this.#source.removeEventListener(this.#event, this.#onFirst);
    this.#source.removeEventListener('open', this.#onOpen);
    this.#source.close();
  }

  readonly #onFirst = (event: EventLike): void => {
    if (this.#graceMs !== null) return;
    if (this.#event === RUN_EVENT) {
      const run = parseRunEvent(event.data);
      if (run === null) return;
      this.#graceMs = run.graceMs;
      this.#options.onRun?.(run);
    } else this.#graceMs = parseGraceMs(event.data);
  };

  readonly #onOpen = (): void => {
    this.#stopWaiting();
  };

  // Whether an `error` event reaches the listeners now; a held one starts the wait for the reconnect.
  #passes(): boolean {
    const graceMs = this.#graceMs;
    if (graceMs === null || this.#source.readyState === CLOSED) return true;
    this.#giveUp ??= setTimeout(() => {
      this.#giveUp = null;
      this.#source.close();
      for (const listener of [...this.#errorListeners.keys()]) listener({});
    }, this.#options.giveUpMs ?? graceMs);
    return false;
  }

  #stopWaiting(): void {
    if (this.#giveUp !== null) clearTimeout(this.#giveUp);
    this.#giveUp = null;
  }
}
