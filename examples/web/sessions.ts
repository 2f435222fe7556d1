// Session mode of the web example: one agent process for a whole conversation.
//
//   GET  /session              an SSE stream that starts a session (one agent process). Its first
//                              event is `event: session` with data `{"id":…}`, then every
//                              SessionMessage of the session as `data:` JSON; it ends after the
//                              session's terminal message.
//   GET  /session?permission=ask
//                              the same, for a session whose agent asks before each tool: every
//                              request is `permission.requested` in the stream, and waits for a
//                              `permission` command (or its deadline, the turn's end). Only where
//                              the agent can ask (a real agent whose sessions take `permission`).
//   POST /session/<id>         one command, a SessionCommand as JSON (prompt, follow-up, steer,
//                              abort, permission): 202, and the answer comes in the stream
//                              (input.accepted or input.dropped, then the turn; for a permission,
//                              permission.resolved). A prompt's `parts` may hold text and images
//                              as base64 `data` with their `mimeType` (an image the agent cannot
//                              take is `input.dropped`, `unsupported`), never a path or a file:
//                              nothing of the server's disk goes to a model for a page.
//   POST /session/<id>/end     ends the session after its running turn: the agent's input is
//                              closed, it exits, and the stream ends with the session's terminal.
//
// The session lives as long as its stream: a closed tab or a dropped stream unsubscribes it, which
// is the stop sequence (as for a one-shot run): the agent's process tree is stopped. A reconnect
// cannot pick it up again (the server answers 204).
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { concat, defer, finalize, map, of, Subject, tap, type Observable } from 'rxjs';
import { isTerminal, SessionCommandSchema, type SessionCommand, type SessionMessage, type StopReport } from '../../lib/index.js';
import { MAX_ATTACHMENT_BODY_BYTES, readWebImage } from './attachments.js';
import { serveSseEvents, type SseEvent } from './sse.js';

/** The type of the first event of a session's stream. */
export const SESSION_EVENT = 'session';

/** The most text a command takes, in bytes (its JSON without its images' data). */
export const MAX_COMMAND_BYTES = 64 * 1024;

/** The largest command body taken, in bytes: its text, and one image of at most MAX_IMAGE_BYTES in base64. */
export const MAX_COMMAND_BODY_BYTES = MAX_COMMAND_BYTES + MAX_ATTACHMENT_BODY_BYTES;

/** The sessions of one server. */
export interface WebSessions {
  /** Starts a session and streams it to `response`; `ask`: its agent asks before each tool. */
  open(response: ServerResponse, choices?: WebSessionChoices): void;
  /** Handles POST /session/<id> and POST /session/<id>/end. */
  post(request: IncomingMessage, response: ServerResponse, id: string, action: 'command' | 'end'): void;
  /** Stops every session (the stop sequence) and waits until their processes are gone. */
  close(): Promise<void>;
}

/** What the page chose for one session. */
export interface WebSessionChoices {
  /** The agent asks before each tool (the session's `permission: 'ask'`); the page answers. */
  readonly ask: boolean;
}

export interface WebSessionsOptions {
  /** The session of one conversation, its process's `onStopped` and the page's choices given. */
  readonly session: (onStopped: (report: StopReport) => void, choices: WebSessionChoices) => (commands: Observable<SessionCommand>) => Observable<SessionMessage>;
  /** The agent's name, for the logs. */
  readonly agentName: string;
  readonly log: (line: string) => void;
  /** Called when a session's process is gone, with its report. */
  readonly onStopped?: (report: StopReport, id: string) => void;
}

export function createWebSessions(options: WebSessionsOptions): WebSessions {
  const { log } = options;
  const sessions = new Map<string, { readonly commands: Subject<SessionCommand>; readonly response: ServerResponse }>();
  const stopping = new Set<Promise<void>>();

  const open = (response: ServerResponse, choices: WebSessionChoices = { ask: false }): void => {
    const id = randomUUID();
    const commands = new Subject<SessionCommand>();
    let count = 0;
    const messages$ = defer(() => {
      let settle!: () => void;
      const settled = new Promise<void>((resolve) => (settle = resolve));
      stopping.add(settled);
      sessions.set(id, { commands, response });
      const startedAt = performance.now();
      log(`session ${id}: ${options.agentName} started${choices.ask ? ' (it asks before each tool)' : ''}`);
      const onStopped = (report: StopReport): void => {
        stopping.delete(settled);
        settle();
        if (report.requested) log(`session ${id}: stopped; pid ${String(report.pid)} gone (${report.confirmed ? 'confirmed' : `survivors: ${report.survivors.join(', ')}`})`);
        options.onStopped?.(report, id);
      };
      return commands.pipe(options.session(onStopped, choices)).pipe(
        tap((message) => {
          if (message.type === 'permission.requested') log(`session ${id}: ${message.tool} asks (${message.kind}): ${oneLine(message.title)}`);
          if (message.type === 'permission.resolved') log(`session ${id}: ${message.decision} by ${message.by}`);
          if (message.type === 'turn.started') log(`session ${id}: turn ${message.turn} started`);
          if (message.type === 'turn.completed' || message.type === 'turn.failed') log(`session ${id}: ${message.type} (turn ${message.turn})`);
          if (isTerminal(message)) log(`session ${id}: ${message.type} after ${((performance.now() - startedAt) / 1000).toFixed(1)} s`);
        }),
        finalize(() => sessions.delete(id)),
      );
    });
    const first: SseEvent = { event: SESSION_EVENT, id: `${id}/0`, data: JSON.stringify({ id }) };
    serveSseEvents(
      response,
      concat(
        of(first),
        messages$.pipe(
          map((message): SseEvent => {
            count += 1;
            return { id: `${id}/${String(count)}`, data: JSON.stringify(message) };
          }),
        ),
      ),
    );
  };

  const post = (request: IncomingMessage, response: ServerResponse, id: string, action: 'command' | 'end'): void => {
    const session = sessions.get(id);
    if (session === undefined) {
      request.resume();
      reply(response, 404, 'no such session (it ended, or its stream closed)\n');
      return;
    }
    if (action === 'end') {
      request.resume();
      session.commands.complete();
      reply(response, 202, 'the session ends after its running turn\n');
      return;
    }
    void readCommand(request).then((read) => {
      if ('status' in read) {
        reply(response, read.status, read.text);
        return;
      }
      // The session may have ended while the body was read.
      const still = sessions.get(id);
      if (still === undefined) reply(response, 404, 'no such session (it ended, or its stream closed)\n');
      else {
        still.commands.next(read.command);
        reply(response, 202, 'sent: the answer comes in the stream\n');
      }
    });
  };

  return {
    open,
    post,
    close: async () => {
      // Their streams close with the server's connections; this stops them even if a stream is held.
      for (const { response } of sessions.values()) response.destroy();
      await Promise.all([...stopping]);
    },
  };
}

/** The command of a POST's body, checked (its size, its type, its images), or the answer that refuses it. */
export async function readCommand(request: IncomingMessage): Promise<{ readonly command: SessionCommand } | { readonly status: number; readonly text: string }> {
  let body: string | null;
  try {
    body = await readBody(request, MAX_COMMAND_BODY_BYTES);
  } catch {
    return { status: 400, text: 'the body could not be read\n' };
  }
  if (body === null || textBytes(body) > MAX_COMMAND_BYTES) return { status: 413, text: `a command is at most ${String(MAX_COMMAND_BYTES)} bytes, and one image\n` };
  const command = parseCommand(body);
  if (command === null) return { status: 400, text: 'the body is not a session command (prompt, follow-up, steer, abort or permission, as JSON)\n' };
  const problem = partsProblem(command);
  return problem === null ? { command } : { status: 400, text: `${problem}\n` };
}

/**
 * A command read from a request body, or `null` when it is not one (or a blank prompt): a prompt,
 * follow-up, steer, abort, or the answer to a permission request
 * (`{ "type": "permission", "requestId": …, "decision": "allow" | "allow-always" | "deny" | "deny-always" }`).
 */
export function parseCommand(body: string): SessionCommand | null {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return null;
  }
  const parsed = SessionCommandSchema.safeParse(value);
  if (!parsed.success) return null;
  if ((parsed.data.type === 'prompt' || parsed.data.type === 'follow-up' || parsed.data.type === 'steer') && parsed.data.text.trim() === '') return null;
  return parsed.data;
}

/**
 * Why a command's `parts` cannot be taken from a page, or `null`: each part is text, or an image
 * as base64 `data` with its `mimeType` (checked: the bytes are of that type, at most
 * MAX_IMAGE_BYTES). A path (an image's, a file's) would be read from the server's disk: refused.
 */
export function partsProblem(command: SessionCommand): string | null {
  if (command.type !== 'prompt' && command.type !== 'follow-up' && command.type !== 'steer') return null;
  for (const [index, part] of (command.parts ?? []).entries()) {
    const where = `parts[${String(index)}]`;
    if (part.type === 'text') continue;
    if (part.type === 'file' || 'path' in part) return `${where}: a page sends images as base64 data with their mimeType; a path is not read from the server's disk`;
    if (typeof part.data !== 'string') return `${where}.data must be base64`;
    const image = readWebImage(part, where);
    if ('problem' in image) return image.problem;
  }
  return null;
}

// The bytes of a command's JSON without its images' data: what MAX_COMMAND_BYTES bounds.
function textBytes(body: string): number {
  return Buffer.byteLength(body.replace(/"data"\s*:\s*"[A-Za-z0-9+/=\s\\]*"/g, '"data":""'));
}

// A title for a log line: one line, at most 120 characters.
function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 120 ? `${line.slice(0, 120)}…` : line;
}

// The body as text, or `null` when it is longer than `limit` bytes.
export function readBody(request: IncomingMessage, limit: number): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) over = true;
      else chunks.push(chunk);
    });
    request.on('end', () => {
      resolve(over ? null : Buffer.concat(chunks).toString('utf8'));
    });
    request.on('error', reject);
  });
}

export function reply(response: ServerResponse, status: number, body: string): void {
  if (response.headersSent) return;
  response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
  response.end(body);
}
