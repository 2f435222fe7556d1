import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { SessionMessageSchema, type SessionMessage, type StopReport } from '../../lib/index.js';
import { parseWebArgs } from '../../examples/web/options.js';
import { startWebServer, type WebServer } from '../../examples/web/server.js';
import { parseCommand } from '../../examples/web/sessions.js';
import { scenarioMarker } from '../conformance/fake-model-server.js';
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
async function openSession(): Promise<{ client: SseRequest; id: string; messages: () => SessionMessage[]; pid: number }> {
  const before = new Set(await piAgentsOfThisProcess());
  const client = requestSse(new URL('/session', server.url).href);
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
    expect(page.body).toContain('<main id="app" data-mode="session" data-recording="">');
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

  it('refuses session mode for a replay of an agent other than pi, or a fleet', async () => {
    await expect(startWebServer({ session: true, agent: { kind: 'replay', agent: 'claude', transcript: 'claude-tool-partial' }, log: () => undefined })).rejects.toThrow(
      'session mode replays pi only (its RPC replay agent): Claude Code needs the real agent',
    );
    await expect(startWebServer({ session: true, agent: { kind: 'real', agent: 'pi' }, fleet: { connection: 'redis://127.0.0.1:1' }, log: () => undefined })).rejects.toThrow(
      'it does not go with a fleet',
    );
  });
});

describe('parseWebArgs --session', () => {
  it('keeps one process of the real agent, or offline of pi’s RPC replay agent; not for another agent’s replay or a fleet', () => {
    expect(parseWebArgs(['--real', '--session'], {})).toEqual({ kind: 'serve', port: 0, agent: { kind: 'real', agent: 'pi' }, session: true });
    expect(parseWebArgs(['--session'], {})).toEqual({ kind: 'serve', port: 0, agent: { kind: 'replay', agent: 'pi', transcript: 'tool_call_then_text' }, session: true });
    expect(parseWebArgs(['--session', '--transcript', 'text'], {})).toEqual({ kind: 'serve', port: 0, agent: { kind: 'replay', agent: 'pi', transcript: 'text' }, session: true });
    expect(parseWebArgs(['--session', '--agent', 'codex'], {})).toMatchObject({ kind: 'usage-error', message: '--session replays pi only (examples/replay-agent/pi-rpc-replay.mjs); for Codex, add --real' });
    expect(parseWebArgs(['--session', '--fleet', 'redis://127.0.0.1:6379'], {})).toMatchObject({ kind: 'usage-error', message: expect.stringContaining('does not go with --fleet') });
    expect(parseWebArgs(['--real', '--session', '--fleet', 'redis://127.0.0.1:6379'], {})).toMatchObject({ kind: 'usage-error', message: expect.stringContaining('does not go with --fleet') });
  });
});

describe('parseCommand', () => {
  it('takes a prompt, follow-up, steer or abort, and nothing else', () => {
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
