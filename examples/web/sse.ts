import type { ServerResponse } from 'node:http';
import type { Observable, Subscription } from 'rxjs';

export interface ServeSseOptions {
  /** Milliseconds between keep-alive comments, which stop proxies from closing a quiet stream. 0 sends none. Default 15 000. */
  readonly keepAliveMs?: number;
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
  const keepAliveMs = options.keepAliveMs ?? 15_000;
  // A client that left before this was called gets nothing, and nothing is started for it.
  if (response.socket === null || response.socket.destroyed) return;
  response.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no', // nginx: do not buffer the stream
  });
  response.flushHeaders();

  let id = 0;
  let subscription: Subscription | null = null;
  const keepAlive = keepAliveMs > 0 ? setInterval(() => response.write(': keep-alive\n\n'), keepAliveMs) : undefined;
  // The response closes after the end we wrote, or when the connection went away before it.
  response.once('close', () => {
    clearInterval(keepAlive);
    subscription?.unsubscribe();
  });
  const end = () => {
    clearInterval(keepAlive);
    response.end();
  };
  subscription = source.subscribe({
    next: (value) => {
      id += 1;
      // Small frames, so the socket's buffer is not watched; a client that stops reading is a closed one.
      response.write(`id: ${id}\ndata: ${JSON.stringify(value)}\n\n`);
    },
    error: end,
    complete: end,
  });
}
