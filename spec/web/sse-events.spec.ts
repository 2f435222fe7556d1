import { afterEach, describe, expect, it } from '@jest/globals';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EMPTY, NEVER, of, Subject, type Observable } from 'rxjs';
import { formatEvent, serveSseEvents, type SseEvent } from '../../examples/web/sse.js';
import { requestSse } from './sse-client.js';

let server: Server | null = null;

afterEach(async () => {
  server?.closeAllConnections();
  server?.close();
  if (server !== null) await once(server, 'close');
  server = null;
});

async function serving(source: () => Observable<SseEvent>, holdHeadMs?: number): Promise<string> {
  server = createServer((_request, response) => {
    serveSseEvents(response, source(), { keepAliveMs: 0, ...(holdHeadMs === undefined ? {} : { holdHeadMs }) });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${String((server.address() as AddressInfo).port)}/`;
}

describe('serveSseEvents', () => {
  it('writes the retry, type, id and data of each event', async () => {
    const client = requestSse(await serving(() => of({ event: 'run', id: 'r/0-0', retryMs: 1000, data: '{"runId":"r"}' }, { id: 'r/1-0', data: '{"a":1}' }, { data: 'two\nlines' })));
    await client.ended;
    expect(client.body()).toBe('retry: 1000\nevent: run\nid: r/0-0\ndata: {"runId":"r"}\n\nid: r/1-0\ndata: {"a":1}\n\ndata: two\ndata: lines\n\n');
  });

  it('with holdHeadMs, answers 204 to a source that ends before any event (an EventSource stops for good)', async () => {
    const empty = requestSse(await serving(() => EMPTY, 1000));
    expect((await empty.response).statusCode).toBe(204);
    await empty.ended;
    expect(empty.body()).toBe('');
  });

  it('with holdHeadMs, sends the head with the first event', async () => {
    const subject = new Subject<SseEvent>();
    const later = requestSse(await serving(() => subject, 1000));
    await delay(50);
    subject.next({ id: '1', data: 'x' });
    expect((await later.response).statusCode).toBe(200);
    await later.waitForBody((body) => body !== '');
    subject.complete();
    await later.ended;
    expect(later.body()).toBe('id: 1\ndata: x\n\n');
  });

  it('with holdHeadMs, sends the head when nothing came within it', async () => {
    const quiet = requestSse(await serving(() => NEVER, 50));
    const response = await quiet.response;
    expect([response.statusCode, response.headers['content-type']]).toEqual([200, 'text/event-stream; charset=utf-8']);
    quiet.request.destroy();
  });

  it('refuses a line break in an id or a type', () => {
    expect(formatEvent({ id: 'a\nb', data: 'x' })).toBeNull();
    expect(formatEvent({ event: 'a\rb', data: 'x' })).toBeNull();
    expect(formatEvent({ id: 'a\0b', data: 'x' })).toBeNull();
  });
});

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
