import type { ServerResponse } from 'node:http';
import { map, type Observable, type Subscription } from 'rxjs';

export interface ServeSseOptions {
  /** Milliseconds between keep-alive comments, which stop proxies from closing a quiet stream. 0 sends none. Default 15 000. */
  readonly keepAliveMs?: number;
}

/** One server-sent event. */
export interface SseEvent {
  /** The event's data; each of its lines is one `data:` line. */
  readonly data: string;
  /** Its `id:` (the browser's last event id, sent back as `Last-Event-ID` on a reconnect). One line, no NUL. */
  readonly id?: string;
  /** Its `event:` type (default `message`). One line. */
  readonly event?: string;
  /** A `retry:` field: how many milliseconds the browser waits before it reconnects. */
  readonly retryMs?: number;
}

export interface ServeSseEventsOptions extends ServeSseOptions {
  /**
   * Holds the head back until the first event, or this many milliseconds: a source that ends before
   * then is answered `204 No Content`, which tells an EventSource to stop for good (a response that
   * ends with 200 makes it reconnect). Default: the head is sent at once.
   */
  readonly holdHeadMs?: number;
}

/**
 * Streams an Observable to one HTTP response as server-sent events: one event per value, its
 * `data` the value as JSON (JSON never holds a raw line break, so one `data:` line is enough), and
 * an `id` counting from 1. The response ends when the Observable completes (a run completes right
 * after its terminal message) or errors (a run never does; the client then sees the stream end
 * without a terminal message). When the client goes away first (Stop, a closed tab, a lost
 * connection), the Observable is unsubscribed: for a run, that is the stop sequence, which ends
 * the agent's process tree. Nothing is kept after the response has closed.
 *
 * @example
 * createServer((req, res) => serveSse(res, runPi({ prompt: 'hi' })));
 */
export function serveSse<T>(response: ServerResponse, source: Observable<T>, options: ServeSseOptions = {}): void {
  let id = 0;
  serveSseEvents(
    response,
    source.pipe(
      map((value): SseEvent => {
        id += 1;
        return { id: String(id), data: JSON.stringify(value) };
      }),
    ),
    options,
  );
}

/**
 * `serveSse` for events made by the caller (their ids, types, retry): the same head, keep-alives,
 * end and unsubscribe. An event with a line break in its `id` or `event` ends the response.
 */
export function serveSseEvents(response: ServerResponse, source: Observable<SseEvent>, options: ServeSseEventsOptions = {}): void {
  const keepAliveMs = options.keepAliveMs ?? 15_000;
  // A client that left before this was called gets nothing, and nothing is started for it.
  if (response.socket === null || response.socket.destroyed) return;

  let headed = false;
  let keepAlive: NodeJS.Timeout | undefined;
  let holding: NodeJS.Timeout | undefined;
  const head = () => {
    if (headed) return;
    headed = true;
    clearTimeout(holding);
    response.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no', // nginx: do not buffer the stream
    });
    response.flushHeaders();
    if (keepAliveMs > 0) keepAlive = setInterval(() => response.write(': keep-alive\n\n'), keepAliveMs);
  };
  if (options.holdHeadMs === undefined) head();
  else holding = setTimeout(head, options.holdHeadMs);

  let subscription: Subscription | null = null;
  let ended = false;
  // The response closes after the end we wrote, or when the connection went away before it.
  response.once('close', () => {
    clearTimeout(holding);
    clearInterval(keepAlive);
    subscription?.unsubscribe();
  });
  const end = () => {
    if (ended) return;
    ended = true;
    clearTimeout(holding);
    clearInterval(keepAlive);
    if (!headed) {
      headed = true;
      response.writeHead(204, { 'cache-control': 'no-store' });
    }
    response.end();
  };
  subscription = source.subscribe({
    next: (event) => {
      if (ended) return;
      const frame = formatEvent(event);
      if (frame === null) {
        end();
        subscription?.unsubscribe();
        return;
      }
      head();
      // Small frames, so the socket's buffer is not watched; a client that stops reading is a closed one.
      response.write(frame);
    },
    error: end,
    complete: end,
  });
}

/** The text of one event (`null` when its `id` or `event` is not one line). */
export function formatEvent(event: SseEvent): string | null {
  if (event.id !== undefined && /[\r\n\0]/.test(event.id)) return null;
  if (event.event !== undefined && /[\r\n]/.test(event.event)) return null;
  let frame = '';
  if (event.retryMs !== undefined) frame += `retry: ${String(Math.max(0, Math.round(event.retryMs)))}\n`;
  if (event.event !== undefined) frame += `event: ${event.event}\n`;
  if (event.id !== undefined) frame += `id: ${event.id}\n`;
  for (const line of event.data.split(/\r\n|\r|\n/)) frame += `data: ${line}\n`;
  return `${frame}\n`;
}
