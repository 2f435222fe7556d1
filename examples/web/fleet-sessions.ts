// Session mode on a fleet (`--session --fleet <redis-url>`): the conversation is a fleet session
// (agent-rx/fleet's `dispatcher.session`), addressed by an id the page keeps for its tab. Its agent
// runs on some worker, falls asleep there when idle and wakes on any worker from the snapshot in
// Redis; its messages are the session's log in Redis. So the conversation outlives the page (a
// reload shows it again and goes on), the stream (a drop resumes after the last event), the worker
// (a killed or restarted worker's session wakes on another) and this server (another one behind the
// same balancer serves it the same way).
//
//   GET  /session              an SSE stream of a new conversation: its first event is
//                              `event: session` with data `{"id":…,"graceMs":…}`, then every
//                              SessionMessage of its log, each with `id: <session id>/<entry id>`.
//   GET  /session?id=<id>      the conversation `id` from its start (a reloaded page shows it all),
//                              or, with Last-Event-ID (the browser's reconnect), after that entry.
//   POST /session/<id>         one command, as in session mode on one machine (sessions.ts): 202.
//   POST /session/<id>/end     this page is done with it: its waiting commands are still answered,
//                              and the conversation falls asleep when idle (its log and snapshot stay
//                              in Redis until they expire). 202.
//
// Commands go through one attachment per conversation on this server (`dispatcher.session`), made
// by the first command and kept while a page streams the conversation from here; the streams read
// the log with `followSession`. Nothing here holds an agent: closing the server only stops reading.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { concat, EMPTY, map, of, Subject } from 'rxjs';
import type { RunDispatcher, SessionEntry, SessionSpec } from '../../lib/fleet.js';
import { isTerminal, type SessionCommand } from '../../lib/index.js';
import { connectFleet, type WebFleetOptions } from './fleet-runs.js';
import { DEFAULT_RECONNECT_GRACE_MS } from './options.js';
import { eventId, isSessionId, parseEventId, START_ENTRY_ID } from './resumable.js';
import { readCommand, reply, SESSION_EVENT } from './sessions.js';
import { serveSseEvents, type SseEvent } from './sse.js';

/** The data of a fleet session stream's first event. */
export interface FleetSessionEventData {
  /** The conversation's id: the page keeps it, and opens `/session?id=<id>` after a reload. */
  readonly id: string;
  /** How long the page waits for a dropped stream to come back before it says the stream is lost. */
  readonly graceMs: number;
}

export interface FleetSessions {
  /** GET /session: a new conversation, or `id`'s from its start, or after `lastEventId` (a reconnect). */
  open(response: ServerResponse, id: string | null, lastEventId: string | null): void;
  /** POST /session/<id> and POST /session/<id>/end. */
  post(request: IncomingMessage, response: ServerResponse, id: string, action: 'command' | 'end'): void;
  /** Stops reading (the conversations go on, and fall asleep when idle) and closes the connections. */
  close(): Promise<void>;
}

export interface FleetSessionsSettings {
  readonly fleet: WebFleetOptions;
  /** The spec of every conversation: its agent and its options; the workers decide what runs. */
  readonly spec: SessionSpec;
  readonly log: (line: string) => void;
  readonly keepAliveMs?: number;
}

/** Loads agent-rx/fleet and connects to Redis. */
export async function createFleetSessions(settings: FleetSessionsSettings): Promise<FleetSessions> {
  return new Conversations(await connectFleet(settings.fleet, settings.log), settings);
}

/** One conversation's commands on this server. */
interface Attachment {
  readonly commands: Subject<SessionCommand>;
}

class Conversations implements FleetSessions {
  readonly #dispatcher: RunDispatcher;
  readonly #settings: FleetSessionsSettings;
  readonly #graceMs: number;
  readonly #retryMs: number;
  readonly #attachments = new Map<string, Attachment>();
  /** Open streams per conversation from this server. */
  readonly #readers = new Map<string, number>();

  constructor(dispatcher: RunDispatcher, settings: FleetSessionsSettings) {
    this.#dispatcher = dispatcher;
    this.#settings = settings;
    this.#graceMs = settings.fleet.reconnectGraceMs ?? DEFAULT_RECONNECT_GRACE_MS;
    this.#retryMs = settings.fleet.retryMs ?? 1000;
  }

  open(response: ServerResponse, id: string | null, lastEventId: string | null): void {
    // A client that left already gets nothing (and is not counted as a reader).
    if (response.socket === null || response.socket.destroyed) return;
    const resumed = lastEventId === null ? null : parseEventId(lastEventId);
    if (lastEventId !== null && (resumed === null || !isSessionId(resumed.runId) || (id !== null && resumed.runId !== id))) {
      reply(response, 204, '');
      return;
    }
    if (id !== null && !isSessionId(id)) {
      reply(response, 400, 'a session id is 1 to 200 letters, digits, and _ . -\n');
      return;
    }
    const sessionId = resumed?.runId ?? id ?? randomUUID();
    const after = resumed?.after ?? START_ENTRY_ID;
    const { log } = this.#settings;
    if (resumed !== null) log(`session ${sessionId}: resumed after entry ${after}`);
    else log(id === null ? `session ${sessionId}: new` : `session ${sessionId}: opened again, from its start`);
    const data: FleetSessionEventData = { id: sessionId, graceMs: this.#graceMs };
    const first: SseEvent = { event: SESSION_EVENT, id: eventId(sessionId, START_ENTRY_ID), retryMs: this.#retryMs, data: JSON.stringify(data) };
    const entries = this.#dispatcher.followSession(sessionId, { after }).pipe(map((entry) => this.#event(sessionId, entry)));
    this.#joined(sessionId, response);
    serveSseEvents(response, concat(resumed === null ? of(first) : EMPTY, entries), this.#settings.keepAliveMs === undefined ? {} : { keepAliveMs: this.#settings.keepAliveMs });
  }

  post(request: IncomingMessage, response: ServerResponse, id: string, action: 'command' | 'end'): void {
    if (!isSessionId(id)) {
      request.resume();
      reply(response, 404, 'no such session\n');
      return;
    }
    if (action === 'end') {
      request.resume();
      this.#detach(id);
      this.#settings.log(`session ${id}: ended by its page (it falls asleep when idle)`);
      reply(response, 202, 'this page is done with the conversation: it falls asleep when idle\n');
      return;
    }
    void readCommand(request).then((read) => {
      if ('status' in read) reply(response, read.status, read.text);
      else {
        this.#attach(id).commands.next(read.command);
        reply(response, 202, 'sent: the answer comes in the stream\n');
      }
    });
  }

  async close(): Promise<void> {
    for (const id of [...this.#attachments.keys()]) this.#detach(id);
    await this.#dispatcher.close();
  }

  #event(sessionId: string, entry: SessionEntry): SseEvent {
    if (isTerminal(entry.message)) this.#settings.log(`session ${sessionId}: ${entry.message.type}`);
    // An entry without an id is one the reader made (the dispatcher closed): it cannot be resumed after.
    return entry.id === '' ? { data: JSON.stringify(entry.message) } : { id: eventId(sessionId, entry.id), data: JSON.stringify(entry.message) };
  }

  // The conversation's attachment on this server, made by its first command.
  #attach(id: string): Attachment {
    const existing = this.#attachments.get(id);
    if (existing !== undefined) return existing;
    const attachment: Attachment = { commands: new Subject<SessionCommand>() };
    this.#attachments.set(id, attachment);
    const { log } = this.#settings;
    attachment.commands.pipe(this.#dispatcher.session(id, this.#settings.spec)).subscribe({
      next: (message) => {
        if (message.type === 'turn.started') log(`session ${id}: turn ${String(message.turn)} started`);
        else if (message.type === 'turn.completed' || message.type === 'turn.failed') log(`session ${id}: ${message.type} (turn ${String(message.turn)})`);
        else if (message.type === 'session.passivated') log(`session ${id}: asleep (idle ${String(message.idleMs)} ms)`);
        else if (message.type === 'session.resumed') log(`session ${id}: woken in ${String(message.resumeMs ?? '?')} ms`);
      },
      complete: () => {
        if (this.#attachments.get(id) === attachment) this.#attachments.delete(id);
      },
    });
    return attachment;
  }

  // Its commands complete: the attachment ends once each waiting one is answered.
  #detach(id: string): void {
    const attachment = this.#attachments.get(id);
    if (attachment === undefined) return;
    this.#attachments.delete(id);
    attachment.commands.complete();
  }

  // Counts the response as a reader; when the last one of a conversation closes, its attachment is let go.
  #joined(id: string, response: ServerResponse): void {
    this.#readers.set(id, (this.#readers.get(id) ?? 0) + 1);
    response.once('close', () => {
      const left = (this.#readers.get(id) ?? 1) - 1;
      if (left > 0) this.#readers.set(id, left);
      else {
        this.#readers.delete(id);
        this.#detach(id);
      }
    });
  }
}
