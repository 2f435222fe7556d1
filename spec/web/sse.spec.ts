import { afterEach, describe, expect, it } from '@jest/globals';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Observable, Subject } from 'rxjs';
import { serveSse } from '../../examples/web/sse.js';
import { requestSse } from './sse-client.js';

let server: Server | null = null;

afterEach(async () => {
  server?.closeAllConnections();
  server?.close();
  if (server !== null) await once(server, 'close');
  server = null;
});

// A server whose every request is served `source()` with serveSse.
async function serving<T>(source: () => Observable<T>, keepAliveMs = 0): Promise<string> {
  server = createServer((_request, response) => {
    serveSse(response, source(), { keepAliveMs });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

describe('serveSse', () => {
  it('sends each value as one numbered event of JSON and ends the response on completion', async () => {
    const subject = new Subject<unknown>();
    const client = requestSse(await serving(() => subject));
    const response = await client.response;
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(response.headers['cache-control']).toBe('no-cache, no-transform');
    subject.next({ type: 'assistant', text: 'line one\nline two\u2028' });
    subject.next({ type: 'terminal.completed', stopReason: 'end_turn' });
    subject.complete();
    await client.ended;
    expect(client.body()).toBe(
      'id: 1\ndata: {"type":"assistant","text":"line one\\nline two\u2028"}\n\nid: 2\ndata: {"type":"terminal.completed","stopReason":"end_turn"}\n\n',
    );
  });

  it('unsubscribes when the client goes away', async () => {
    let unsubscribed!: () => void;
    const gone = new Promise<void>((resolve) => (unsubscribed = resolve));
    const source = () =>
      new Observable<number>((subscriber) => {
        subscriber.next(1);
        return unsubscribed;
      });
    const client = requestSse(await serving(source));
    await client.waitForEvents(1);
    client.request.destroy();
    await gone;
  });

  it('ends the response when the source errors', async () => {
    const client = requestSse(await serving(() => new Observable<number>((subscriber) => {
      subscriber.next(1);
      subscriber.error(new Error('boom'));
    })));
    await client.ended;
    expect(client.events()).toEqual([1]);
  });

  it('sends keep-alive comments while the source is quiet', async () => {
    const subject = new Subject<number>();
    const client = requestSse(await serving(() => subject, 20));
    await client.waitForBody((body) => body.split(': keep-alive\n\n').length > 2);
    subject.complete();
    await client.ended;
    expect(client.body()).toMatch(/^(: keep-alive\n\n){2,}$/);
  });
});
