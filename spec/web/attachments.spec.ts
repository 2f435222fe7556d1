import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { request } from 'node:http';
import { createAttachments, MAX_ATTACHMENT_BODY_BYTES, readWebImage } from '../../examples/web/attachments.js';
import { startWebServer, type WebServer } from '../../examples/web/server.js';
import { testPng } from '../conformance/scenarios.js';

// The images a page attaches to a one-shot run: POST /attachments, named by GET /run. No agent
// runs here (the Chromium specs send them to the real pi).

const png = testPng();

describe('readWebImage', () => {
  it('takes base64 bytes of the type they say, and says what is wrong with anything else', () => {
    expect(readWebImage({ data: png.base64, mimeType: 'image/png' })).toEqual({ data: png.base64, mimeType: 'image/png' });
    expect(readWebImage('x')).toEqual({ problem: 'the image must be { "data": base64, "mimeType": … }' });
    expect(readWebImage({ mimeType: 'image/png' })).toEqual({ problem: 'the image has no data (base64)' });
    expect(readWebImage({ data: png.base64, mimeType: 'image/svg+xml' })).toEqual({ problem: 'the image must be one of image/png, image/jpeg, image/gif, image/webp; got "image/svg+xml"' });
    expect(readWebImage({ data: png.base64, mimeType: 'image/jpeg' })).toEqual({ problem: 'the image is image/png, not "image/jpeg"' });
    expect(readWebImage({ data: btoa('<svg/>'), mimeType: 'image/png' })).toEqual({ problem: 'the image is not a PNG, JPEG, GIF or WebP image' });
    expect(readWebImage({ data: '%%%', mimeType: 'image/png' })).toEqual({ problem: 'the image.data is not base64' });
  });
});

describe('createAttachments', () => {
  const image = { data: png.base64, mimeType: 'image/png' } as const;

  it('gives an image once, by its id', () => {
    const attachments = createAttachments();
    const id = attachments.put(image);
    expect(attachments.take('other')).toBeUndefined();
    expect(attachments.take(id)).toEqual(image);
    expect(attachments.take(id)).toBeUndefined();
  });

  it('keeps an image no longer than ttlMs, and only the newest `max`', () => {
    const expiring = createAttachments({ ttlMs: 0 });
    expect(expiring.take(expiring.put(image))).toBeUndefined();
    const few = createAttachments({ max: 2 });
    const [first, second, third] = [few.put(image), few.put(image), few.put(image)];
    expect(few.take(first)).toBeUndefined();
    expect(few.take(second)).toEqual(image);
    expect(few.take(third)).toEqual(image);
  });
});

describe('POST /attachments', () => {
  let real: WebServer;
  let replay: WebServer;

  beforeAll(async () => {
    // The real agent is named, never started: no run is asked for here.
    real = await startWebServer({ agent: { kind: 'real', agent: 'pi', executable: 'pi' }, log: () => undefined });
    replay = await startWebServer({ agent: { kind: 'replay', agent: 'pi', transcript: 'text' }, log: () => undefined });
  });

  afterAll(async () => {
    await real.close();
    await replay.close();
  });

  function send(base: string, path: string, init: { method?: string; body?: string; headers?: Record<string, string> } = {}) {
    return new Promise<{ status: number; type: string | undefined; body: string }>((resolve, reject) => {
      const req = request(new URL(path, base), { method: init.method ?? 'POST', headers: { 'content-type': 'application/json', ...init.headers } }, (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        res.on('end', () => {
          resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], body });
        });
      });
      req.on('error', reject);
      req.end(init.body);
    });
  }

  it('keeps a checked image for the next run and answers its id', async () => {
    const answer = await send(real.url, '/attachments', { body: JSON.stringify({ data: png.base64, mimeType: 'image/png' }) });
    expect(answer).toMatchObject({ status: 201, type: 'application/json' });
    expect(JSON.parse(answer.body)).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
  });

  it('refuses what is not an image, what is too big, what comes from elsewhere, and a run naming an image it does not hold', async () => {
    expect(await send(real.url, '/attachments', { body: JSON.stringify({ data: btoa('hello'), mimeType: 'image/png' }) })).toMatchObject({ status: 400, body: 'the image is not a PNG, JPEG, GIF or WebP image\n' });
    expect(await send(real.url, '/attachments', { body: '{nope' })).toMatchObject({ status: 400 });
    expect(await send(real.url, '/attachments', { body: JSON.stringify({ data: 'A'.repeat(MAX_ATTACHMENT_BODY_BYTES), mimeType: 'image/png' }) })).toMatchObject({ status: 413 });
    expect(await send(real.url, '/attachments', { body: JSON.stringify({ data: png.base64, mimeType: 'image/png' }), headers: { Origin: 'http://evil.example' } })).toMatchObject({ status: 403 });
    expect(await send(real.url, '/attachments', { method: 'GET' })).toMatchObject({ status: 405 });
    expect(await send(real.url, '/run?prompt=look&image=never-given', { method: 'GET' })).toMatchObject({
      status: 400,
      body: 'the attached image is gone (it is kept for one run, a minute): attach it again\n',
    });
  });

  it('is refused by a replay, which reads no prompt', async () => {
    expect(await send(replay.url, '/attachments', { body: JSON.stringify({ data: png.base64, mimeType: 'image/png' }) })).toEqual({
      status: 400,
      type: 'text/plain; charset=utf-8',
      body: 'a replay plays a recording and reads no prompt, so it takes no image: start the server with --real (or --session)\n',
    });
  });
});
