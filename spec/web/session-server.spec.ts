import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SessionMessageSchema, type SessionMessage, type StopReport } from '../../lib/index.js';
import { parseWebArgs } from '../../examples/web/options.js';
import { startWebServer, type WebServer } from '../../examples/web/server.js';
import { parseCommand, partsProblem } from '../../examples/web/sessions.js';
import { testPng } from '../conformance/scenarios.js';
import { scenarioMarker, TOUCH_TOOL_COMMAND } from '../conformance/fake-model-server.js';
import { OPENAI_PROVIDER } from '../conformance/pi-env.js';
import { piWorld } from '../conformance/pi-world.js';
import { isAlive } from '../helpers/processes.js';
import { piAgentsOfThisProcess, treeOf, waitUntil } from './agent-processes.js';
import { requestSse, type SseRequest } from './sse-client.js';

/** examples/web/server.ts in session mode, on the real pi and the fake model server (127.0.0.1). */

const PI = fileURLToPath(new URL('../../node_modules/.bin/pi', import.meta.url));
const world = piWorld();
const reports: StopReport[] = [];
let server: WebServer;

beforeAll(async () => {
  server = await startWebServer({
    agent: { kind: 'real', agent: 'pi', executable: PI, options: { provider: OPENAI_PROVIDER }, model: 'recall', env: world.env.env, cwd: world.env.cwd },
    session: true,
    onSessionStopped: (report) => reports.push(report),
    log: () => undefined,
  });
}, 30_000);

afterAll(async () => {
  await server.close();
  expect(await piAgentsOfThisProcess()).toEqual([]);
});

// A request with a body (or none): status and body.
function send(path: string, init: { method?: string; body?: string; headers?: Record<string, string> } = {}) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request(new URL(path, server.url), { method: init.method ?? 'POST', headers: { 'content-type': 'application/json', ...init.headers } }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, body });
      });
    });
    req.on('error', reject);
    req.end(init.body);
  });
}

/** A session's stream: its id (the first event), its messages, and its one agent process. */
async function openSession(path = '/session'): Promise<{ client: SseRequest; id: string; messages: () => SessionMessage[]; pid: number }> {
  const before = new Set(await piAgentsOfThisProcess());
  const client = requestSse(new URL(path, server.url).href);
  await client.waitForEvents(1);
  const [first] = client.events() as [{ id: string }];
  let pid: number | undefined;
  await waitUntil(async () => {
    pid = (await piAgentsOfThisProcess()).find((candidate) => !before.has(candidate));
    return pid !== undefined;
  }, 'the session agent process');
  return { client, id: first.id, messages: () => client.events().slice(1).map((event) => SessionMessageSchema.parse(event)), pid: pid as number };
}

const command = (id: string, body: unknown) => send(`/session/${id}`, { body: JSON.stringify(body) });
const textOf = (messages: readonly SessionMessage[]) => messages.map((message) => (message.type === 'assistant' ? message.text : '')).join('');
const turnEnds = (messages: readonly SessionMessage[]) => messages.filter((message) => message.type === 'turn.completed' || message.type === 'turn.failed');

describe('examples/web/server.ts in session mode', () => {
  it('tells the page it is in session mode', async () => {
    const page = await send('/', { method: 'GET' });
    expect(page.body).toContain('<main id="app" data-mode="session" data-recording="" data-ask="available" data-fleet="">');
    expect(page.body).toContain('one session: one process for the conversation');
  });

  it('answers two prompts in one agent process that remembers the first, and ends it on POST /session/<id>/end', async () => {
    const { client, id, messages, pid } = await openSession();
    expect(client.body().startsWith(`event: session\nid: ${id}/0\ndata: {"id":"${id}"}\n\n`)).toBe(true);
    expect(await command(id, { type: 'prompt', text: 'first', id: 'a' })).toEqual({ status: 202, body: 'sent: the answer comes in the stream\n' });
    await client.waitForBody(() => turnEnds(messages()).length === 1);
    expect(await command(id, { type: 'prompt', text: 'second', id: 'b' })).toMatchObject({ status: 202 });
    await client.waitForBody(() => turnEnds(messages()).length === 2);
    const all = messages();
    expect(all.filter((message) => message.type === 'turn.started')).toMatchObject([
      { turn: 1, prompt: 'first', commandId: 'a' },
      { turn: 2, prompt: 'second', commandId: 'b' },
    ]);
    expect(turnEnds(all).map((message) => message.type)).toEqual(['turn.completed', 'turn.completed']);
    expect(textOf(all)).toContain('User texts in context: 2 ("first" | "second").');
    expect(await piAgentsOfThisProcess()).toContain(pid); // the same process, still there
    expect(await send(`/session/${id}/end`)).toMatchObject({ status: 202 });
    await client.ended;
    expect(messages().at(-1)).toMatchObject({ type: 'terminal.completed' });
    await waitUntil(() => !isAlive(pid), `pid ${pid} to exit`);
    await waitUntil(() => reports.some((report) => report.pid === pid), `the stop report of pid ${pid}`);
    expect(reports.find((report) => report.pid === pid)).toMatchObject({ requested: false });
    expect((await command(id, { type: 'prompt', text: 'too late' })).status).toBe(404);
  }, 60_000);

  it('aborts the running turn on an abort command, keeps the process, and answers the next prompt in it', async () => {
    const { client, id, messages, pid } = await openSession();
    await command(id, { type: 'prompt', text: `${scenarioMarker('sleep_tool')}sleep` });
    await client.waitForBody(() => messages().some((message) => message.type === 'tool.call'));
    expect(await command(id, { type: 'abort' })).toMatchObject({ status: 202 });
    await client.waitForBody(() => turnEnds(messages()).length === 1);
    expect(turnEnds(messages())).toMatchObject([{ type: 'turn.failed', turn: 1, reason: 'aborted' }]);
    expect(isAlive(pid)).toBe(true);
    await command(id, { type: 'prompt', text: 'after the abort' });
    await client.waitForBody(() => turnEnds(messages()).length === 2);
    expect(turnEnds(messages())[1]).toMatchObject({ type: 'turn.completed', turn: 2 });
    expect(textOf(messages())).toContain('"after the abort"');
    expect(await piAgentsOfThisProcess()).toContain(pid);
    client.request.destroy();
    await waitUntil(() => !isAlive(pid), `pid ${pid} to be stopped`);
  }, 60_000);

  it('stops the agent and its process tree when the stream drops mid-turn', async () => {
    const { client, id, messages, pid } = await openSession();
    await command(id, { type: 'prompt', text: `${scenarioMarker('sleep_tool')}sleep` });
    await client.waitForBody(() => messages().some((message) => message.type === 'tool.call'));
    let tree: number[] = [];
    await waitUntil(async () => (tree = await treeOf(pid)).length > 1, 'the sleep tool under pi'); // pi, its bash and sleep
    client.request.destroy();
    await waitUntil(() => reports.some((report) => report.pid === pid), `the stop report of pid ${pid}`);
    expect(reports.find((report) => report.pid === pid)).toMatchObject({ requested: true, confirmed: true, survivors: [] });
    expect(tree.filter(isAlive)).toEqual([]);
    expect((await command(id, { type: 'abort' })).status).toBe(404);
  }, 60_000);

  it('refuses what is not a command of one of its sessions, from its own page', async () => {
    const { client, id, pid } = await openSession();
    expect(await command(id, { type: 'prompt', text: '  ' })).toMatchObject({ status: 400 });
    expect(await send(`/session/${id}`, { body: '{not json' })).toMatchObject({ status: 400 });
    expect(await command(id, { type: 'shout', text: 'hi' })).toMatchObject({ status: 400 });
    expect(await send(`/session/${id}`, { body: JSON.stringify({ type: 'prompt', text: 'x'.repeat(70_000) }) })).toMatchObject({ status: 413 });
    // A page sends images as bytes: a path would be read from the server's disk.
    expect(await command(id, { type: 'prompt', text: 'look', parts: [{ type: 'image', path: '/etc/hostname' }] })).toEqual({
      status: 400,
      body: "parts[0]: a page sends images as base64 data with their mimeType; a path is not read from the server's disk\n",
    });
    expect(await command(id, { type: 'prompt', text: 'read', parts: [{ type: 'file', path: '/etc/passwd' }] })).toMatchObject({ status: 400 });
    expect(await command(id, { type: 'prompt', text: 'look', parts: [{ type: 'image', data: btoa('not an image'), mimeType: 'image/png' }] })).toEqual({
      status: 400,
      body: 'parts[0] is not a PNG, JPEG, GIF or WebP image\n',
    });
    expect((await command('nope', { type: 'abort' })).status).toBe(404);
    expect((await send(`/session/${id}`, { method: 'GET' })).status).toBe(405);
    expect((await send('/session')).status).toBe(405);
    expect((await send(`/session/${id}/more/path`)).status).toBe(404);
    expect((await send(`/session/${id}`, { body: '{"type":"abort"}', headers: { Origin: 'http://evil.example' } })).status).toBe(403);
    expect((await send(`/session/${id}/end`, { headers: { 'Sec-Fetch-Site': 'cross-site' } })).status).toBe(403);
    expect((await send('/session', { method: 'GET', headers: { Host: 'evil.example' } })).status).toBe(403);
    expect((await send('/session', { method: 'GET', headers: { 'Last-Event-ID': `${id}/3` } })).status).toBe(204);
    expect(isAlive(pid)).toBe(true); // none of that touched the session
    client.request.destroy();
    await waitUntil(() => !isAlive(pid), `pid ${pid} to be stopped`);
  }, 60_000);

  it('stops open sessions when it closes, and waits until their processes are gone', async () => {
    const own = await startWebServer({
      agent: { kind: 'real', agent: 'pi', executable: PI, options: { provider: OPENAI_PROVIDER }, model: 'recall', env: world.env.env, cwd: world.env.cwd },
      session: true,
      log: () => undefined,
    });
    const before = new Set(await piAgentsOfThisProcess());
    const client = requestSse(new URL('/session', own.url).href);
    await client.waitForEvents(1);
    let pids: number[] = [];
    await waitUntil(async () => (pids = (await piAgentsOfThisProcess()).filter((pid) => !before.has(pid))).length === 1, 'the session agent process');
    await own.close();
    expect(pids.filter(isAlive)).toEqual([]);
  }, 60_000);

  it('opens a session that asks before each tool on GET /session?permission=ask; a permission command answers the request', async () => {
    const touched = join(world.env.cwd, 'touched-by-agent.txt');
    rmSync(touched, { force: true });
    const { client, id, messages, pid } = await openSession('/session?permission=ask');
    await command(id, { type: 'prompt', text: `${scenarioMarker('touch_tool')}touch a file` });
    await client.waitForBody(() => messages().some((message) => message.type === 'permission.requested'));
    const request = messages().find((message) => message.type === 'permission.requested');
    expect(request).toMatchObject({ tool: 'bash', kind: 'execute', title: TOUCH_TOOL_COMMAND, options: ['allow', 'deny'] });
    const requestId = request?.type === 'permission.requested' ? request.requestId : '';
    expect(await command(id, { type: 'permission', requestId, decision: 'deny', id: 'p1' })).toEqual({ status: 202, body: 'sent: the answer comes in the stream\n' });
    await client.waitForBody(() => turnEnds(messages()).length === 1);
    expect(messages().filter((message) => message.type === 'permission.resolved')).toEqual([{ type: 'permission.resolved', requestId, decision: 'deny', by: 'caller' }]);
    expect(turnEnds(messages())).toMatchObject([{ type: 'turn.completed', turn: 1 }]);
    expect(existsSync(touched)).toBe(false);
    // A second answer to a settled request is taken by the server, and dropped by the session.
    expect(await command(id, { type: 'permission', requestId, decision: 'allow', id: 'p2' })).toMatchObject({ status: 202 });
    await client.waitForBody(() => messages().some((message) => message.type === 'input.dropped' && message.commandId === 'p2'));
    expect(messages().find((message) => message.type === 'input.dropped' && message.commandId === 'p2')).toMatchObject({ kind: 'permission', reason: 'no-request', requestId });
    expect(existsSync(touched)).toBe(false);
    client.request.destroy();
    await waitUntil(() => !isAlive(pid), `pid ${pid} to be stopped`);
  }, 60_000);

  it('a session without ?permission does not ask (the default): pi runs the tool', async () => {
    const touched = join(world.env.cwd, 'touched-by-agent.txt');
    rmSync(touched, { force: true });
    const { client, id, messages, pid } = await openSession();
    await command(id, { type: 'prompt', text: `${scenarioMarker('touch_tool')}touch a file` });
    await client.waitForBody(() => turnEnds(messages()).length === 1);
    expect(messages().some((message) => message.type.startsWith('permission.'))).toBe(false);
    expect(existsSync(touched)).toBe(true);
    rmSync(touched, { force: true });
    client.request.destroy();
    await waitUntil(() => !isAlive(pid), `pid ${pid} to be stopped`);
  }, 60_000);

  it('refuses a permission other than ask, and asking where the agent cannot ask (a replay)', async () => {
    expect(await send('/session?permission=allow-all', { method: 'GET' })).toEqual({ status: 400, body: 'permission is ask, or none\n' });
    const replay = await startWebServer({ session: true, agent: { kind: 'replay', agent: 'pi', transcript: 'tool_call_then_text' }, log: () => undefined });
    try {
      const get = (path: string) => fetch(new URL(path, replay.url));
      expect(await (await get('/')).text()).toContain('data-ask="" data-fleet="">');
      const refused = await get('/session?permission=ask');
      expect(refused.status).toBe(400);
      expect(await refused.text()).toBe('a replay cannot ask before its tools (it plays what pi did): start the server with --real --session\n');
    } finally {
      await replay.close();
    }
  });

  it('refuses session mode for a replay of an agent other than pi, or a replay on a fleet', async () => {
    await expect(startWebServer({ session: true, agent: { kind: 'replay', agent: 'claude', transcript: 'claude-tool-partial' }, log: () => undefined })).rejects.toThrow(
      'session mode replays pi only (its RPC replay agent): Claude Code needs the real agent',
    );
    await expect(startWebServer({ session: true, agent: { kind: 'replay', agent: 'pi', transcript: 'text' }, fleet: { connection: 'redis://127.0.0.1:1' }, log: () => undefined })).rejects.toThrow(
      'a fleet session needs the real agent',
    );
  });
});

describe('parseWebArgs --session', () => {
  it('keeps one process of the real agent, or offline of pi’s RPC replay agent, or a fleet session of the real agent; not for another agent’s replay or a replay on a fleet', () => {
    expect(parseWebArgs(['--real', '--session'], {})).toEqual({ kind: 'serve', port: 0, agent: { kind: 'real', agent: 'pi' }, session: true });
    expect(parseWebArgs(['--session'], {})).toEqual({ kind: 'serve', port: 0, agent: { kind: 'replay', agent: 'pi', transcript: 'tool_call_then_text' }, session: true });
    expect(parseWebArgs(['--session', '--transcript', 'text'], {})).toEqual({ kind: 'serve', port: 0, agent: { kind: 'replay', agent: 'pi', transcript: 'text' }, session: true });
    expect(parseWebArgs(['--session', '--agent', 'codex'], {})).toMatchObject({ kind: 'usage-error', message: '--session replays pi only (examples/replay-agent/pi-rpc-replay.mjs); for Codex, add --real' });
    expect(parseWebArgs(['--session', '--fleet', 'redis://127.0.0.1:6379'], {})).toMatchObject({ kind: 'usage-error', message: expect.stringContaining('--session with --fleet needs --real') });
    expect(parseWebArgs(['--agent', 'gemini', '--real', '--session', '--fleet', 'redis://127.0.0.1:6379'], {})).toMatchObject({ kind: 'usage-error', message: expect.stringContaining("Gemini CLI's cannot") });
    expect(parseWebArgs(['--agent', 'qwen', '--real', '--session', '--fleet', 'redis://127.0.0.1:6379'], {})).toMatchObject({ kind: 'serve', session: true });
    expect(parseWebArgs(['--real', '--session', '--fleet', 'redis://127.0.0.1:6379'], {})).toEqual({ kind: 'serve', port: 0, agent: { kind: 'real', agent: 'pi' }, session: true, fleet: 'redis://127.0.0.1:6379' });
  });
});

describe('parseCommand', () => {
  it('takes a prompt, follow-up, steer, abort or permission, and nothing else', () => {
    expect(parseCommand('{"type":"permission","requestId":"r1","decision":"deny","id":"p1"}')).toEqual({ type: 'permission', requestId: 'r1', decision: 'deny', id: 'p1' });
    expect(parseCommand('{"type":"permission","requestId":"r1","decision":"allow-always"}')).toEqual({ type: 'permission', requestId: 'r1', decision: 'allow-always' });
    expect(parseCommand('{"type":"permission","requestId":"r1","decision":"maybe"}')).toBeNull();
    expect(parseCommand('{"type":"permission","requestId":"","decision":"allow"}')).toBeNull();
    expect(parseCommand('{"type":"permission","decision":"allow"}')).toBeNull();
    expect(parseCommand('{"type":"prompt","text":"hi","id":"c1"}')).toEqual({ type: 'prompt', text: 'hi', id: 'c1' });
    expect(parseCommand('{"type":"steer","text":"faster"}')).toEqual({ type: 'steer', text: 'faster' });
    expect(parseCommand('{"type":"follow-up","text":"then"}')).toEqual({ type: 'follow-up', text: 'then' });
    expect(parseCommand('{"type":"abort"}')).toEqual({ type: 'abort' });
    expect(parseCommand('{"type":"prompt","text":" \\n"}')).toBeNull();
    expect(parseCommand('{"type":"end"}')).toBeNull();
    expect(parseCommand('[]')).toBeNull();
    expect(parseCommand('')).toBeNull();
  });
});

describe('partsProblem', () => {
  it('takes text and images as base64 data of the type they say; refuses a path, a file, bytes that are not an image or not of that type', () => {
    const png = testPng();
    expect(partsProblem({ type: 'prompt', text: 'hi', parts: [{ type: 'text', text: 'more' }, { type: 'image', data: png.base64, mimeType: 'image/png' }] })).toBeNull();
    expect(partsProblem({ type: 'abort' })).toBeNull();
    expect(partsProblem({ type: 'follow-up', text: 'hi', parts: [{ type: 'image', path: 'shot.png' }] })).toMatch(/^parts\[0\]: a page sends images as base64 data/);
    expect(partsProblem({ type: 'steer', text: 'hi', parts: [{ type: 'text', text: 'x' }, { type: 'file', path: 'notes.md' }] })).toMatch(/^parts\[1\]: /);
    expect(partsProblem({ type: 'prompt', text: 'hi', parts: [{ type: 'image', data: png.bytes, mimeType: 'image/png' }] })).toBe('parts[0].data must be base64');
    expect(partsProblem({ type: 'prompt', text: 'hi', parts: [{ type: 'image', data: png.base64, mimeType: 'image/gif' }] })).toBe('parts[0] is image/png, not "image/gif"');
  });
});
