import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { get, request, type ClientRequest, type IncomingMessage } from 'node:http';
import { conversationOptionsFor, DEFAULT_IDLE_MS, DEFAULT_TRANSCRIPT, parseNestArgs, REPLAY_SCRIPT, RPC_REPLAY_SCRIPT, runOptionsFor, sessionOptionsFor } from '../../examples/nest/options.js';
import { CliMessageSchema, SessionMessageSchema, type CliMessage, type SessionMessage } from '../../lib/index.js';
import { readProcessTable } from '../../lib/process/process-table.js';
import { isAlive } from '../helpers/processes.js';
import { startTaggedNode, type TaggedChild } from '../helpers/tagged-child.js';
import { waitUntil } from '../web/agent-processes.js';
import { startFakeModelServer, type FakeModelServer } from '../conformance/fake-model-server.js';
import { createPiEnv, OPENAI_PROVIDER, type PiEnv } from '../conformance/pi-env.js';

const PI_BIN = fileURLToPath(new URL('../../node_modules/.bin', import.meta.url));

/**
 * examples/nest/main.ts as a real child process on 127.0.0.1, over real HTTP, with the bundled
 * replay agents (`pi-replay.mjs` for runs, `pi-rpc-replay.mjs` for sessions) slowed down so that a
 * run is still going when a test acts on it.
 */

const SLOW = { PI_REPLAY_SPEED: '3', PI_REPLAY_STARTUP_MS: '0', NO_COLOR: '1' };
const ANSWER = 'Let me run a tool first.The tool returned: "hello\\n". Done.';
const children: TaggedChild[] = [];

// Starts the app on a free port and resolves with it and its base URL (…/api/agent/).
async function startApp(env: Readonly<Record<string, string>> = SLOW, args: readonly string[] = []): Promise<{ app: TaggedChild; base: string }> {
  const app = startTaggedNode(['examples/nest/main.ts', '--port', '0', ...args], 'AGENT_RX_NEST_TEST', env);
  children.push(app);
  const base = await app.waitForLine(/^http:\/\/127\.0\.0\.1:\d+\/api\/agent\/$/, 30_000);
  return { app, base };
}

/** One GET read as server-sent events. */
interface Stream {
  readonly request: ClientRequest;
  readonly response: Promise<IncomingMessage>;
  readonly body: () => string;
  /** The complete events so far: their fields. */
  readonly frames: () => Record<string, string>[];
  /** Resolves once the events so far satisfy `check`; rejects if the response ends first. */
  readonly waitFor: (check: (frames: Record<string, string>[]) => boolean) => Promise<void>;
  /** Resolves when the server has ended the response. */
  readonly ended: Promise<void>;
}

function openStream(url: string, headers: Readonly<Record<string, string>> = {}): Stream {
  let body = '';
  const wakers = new Set<() => void>();
  let over = false;
  let endStream!: () => void;
  const ended = new Promise<void>((resolve) => (endStream = resolve));
  void ended.then(() => (over = true));
  let req!: ClientRequest;
  const response = new Promise<IncomingMessage>((resolve, reject) => {
    req = get(url, { headers }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
        for (const wake of wakers) wake();
      });
      res.on('end', endStream);
      res.on('close', endStream);
      resolve(res);
    });
    req.on('error', (error) => {
      endStream();
      reject(error);
    });
  });
  const frames = () =>
    body
      .split('\n\n')
      .slice(0, -1)
      .map((frame) => Object.fromEntries(frame.split('\n').flatMap((line) => (/^[a-z]+: /.test(line) ? [[line.slice(0, line.indexOf(': ')), line.slice(line.indexOf(': ') + 2)]] : []))))
      .filter((fields) => Object.keys(fields).length > 0);
  const waitFor = async (check: (frames: Record<string, string>[]) => boolean) => {
    while (!check(frames())) {
      if (over) throw new Error(`the stream ended before the awaited event; body:\n${body}`);
      await new Promise<void>((resolve) => {
        const wake = () => {
          wakers.delete(wake);
          resolve();
        };
        wakers.add(wake);
        void ended.then(wake);
      });
    }
  };
  return { request: req, response, body: () => body, frames, waitFor, ended };
}

const runMessages = (frames: readonly Record<string, string>[]): CliMessage[] => frames.map((frame) => CliMessageSchema.parse(JSON.parse(frame['data'] ?? '')));
const sessionMessages = (frames: readonly Record<string, string>[]): SessionMessage[] =>
  frames.map((frame) => SessionMessageSchema.parse(JSON.parse(frame['data'] ?? '')));
const has = (predicate: (message: SessionMessage) => boolean) => (frames: Record<string, string>[]) => sessionMessages(frames).some(predicate);

// A request with an optional JSON body: its status and body.
function send(method: string, url: string, json?: unknown): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers: json === undefined ? {} : { 'content-type': 'application/json' } }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, body });
      });
    });
    req.on('error', reject);
    req.end(json === undefined ? undefined : JSON.stringify(json));
  });
}

/** The live children of `parent` whose command line runs `script`. */
async function agentsOf(parent: number, script: string): Promise<number[]> {
  const { entries } = await readProcessTable();
  return entries.filter((entry) => entry.ppid === parent && !entry.zombie && commandLine(entry.pid).includes(script)).map((entry) => entry.pid);
}

// The one agent of `parent` running `script`, once it is there.
async function theAgentOf(parent: number, script: string): Promise<number> {
  let found: number[] = [];
  await waitUntil(async () => (found = await agentsOf(parent, script)).length > 0, `an agent running ${script}`);
  expect(found).toHaveLength(1);
  return found[0] ?? 0;
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${String(pid)}/cmdline`, 'latin1').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

afterAll(() => {
  for (const child of children) child.cleanUp();
});

describe('parseNestArgs', () => {
  it('serves the replay of the default transcript on any free port when given nothing', () => {
    const request = parseNestArgs([], {});
    expect(request).toEqual({ kind: 'serve', port: 0, pi: { kind: 'replay', transcript: DEFAULT_TRANSCRIPT } });
    if (request.kind !== 'serve') return;
    expect(runOptionsFor(request.pi, 'hi')).toEqual({ prompt: 'hi', executable: process.execPath, executableArgs: [REPLAY_SCRIPT], model: DEFAULT_TRANSCRIPT });
    expect(sessionOptionsFor(request.pi)).toEqual({ executable: process.execPath, executableArgs: [RPC_REPLAY_SCRIPT], model: DEFAULT_TRANSCRIPT });
  });

  it('takes the port from --port, else PORT, and refuses one that is not a port', () => {
    expect(parseNestArgs(['--port', '3000'], { PORT: '4000' })).toMatchObject({ kind: 'serve', port: 3000 });
    expect(parseNestArgs([], { PORT: '4000' })).toMatchObject({ kind: 'serve', port: 4000 });
    expect(parseNestArgs(['--port', '70000'], {})).toMatchObject({ kind: 'usage-error' });
    expect(parseNestArgs(['--port', 'x'], {})).toMatchObject({ kind: 'usage-error' });
  });

  it('runs the real pi with --real, and refuses flags that do not go with the choice', () => {
    const real = parseNestArgs(['--real', '--provider', 'anthropic', '--model', 'claude-x'], {});
    expect(real).toEqual({ kind: 'serve', port: 0, pi: { kind: 'real', provider: 'anthropic', model: 'claude-x' } });
    if (real.kind !== 'serve') return;
    expect(runOptionsFor(real.pi, 'hi')).toEqual({ prompt: 'hi', provider: 'anthropic', model: 'claude-x' });
    expect(parseNestArgs(['--model', 'claude-x'], {})).toMatchObject({ kind: 'usage-error' });
    expect(parseNestArgs(['--real', '--transcript', 'text'], {})).toMatchObject({ kind: 'usage-error' });
    expect(parseNestArgs(['--transcript', 'text'], {})).toMatchObject({ kind: 'serve', pi: { kind: 'replay', transcript: 'text' } });
    expect(parseNestArgs(['--transcript', 'no-such-run'], {})).toMatchObject({ kind: 'usage-error' });
    expect(parseNestArgs(['--transcript', 'codex-tool'], {})).toMatchObject({ kind: 'usage-error' });
    expect(parseNestArgs(['--nope'], {})).toMatchObject({ kind: 'usage-error' });
    expect(parseNestArgs(['-h'], {})).toEqual({ kind: 'help' });
  });

  it('keeps conversations with --real --conversations <dir> (idleMs a minute, or --idle-ms); not for a replay', () => {
    const kept = parseNestArgs(['--real', '--conversations', 'chats', '--idle-ms', '5000'], {});
    expect(kept).toEqual({ kind: 'serve', port: 0, pi: { kind: 'real', conversations: 'chats', idleMs: 5000 } });
    if (kept.kind !== 'serve') return;
    expect(conversationOptionsFor(kept.pi, 'chat-1')).toMatchObject({ idleMs: 5000, conversationId: 'chat-1', store: expect.objectContaining({ load: expect.any(Function), save: expect.any(Function) }) as unknown });
    const plain = parseNestArgs(['--real', '--conversations', 'chats'], {});
    expect(plain.kind === 'serve' ? conversationOptionsFor(plain.pi, 'x') : null).toMatchObject({ idleMs: DEFAULT_IDLE_MS, conversationId: 'x' });
    expect(conversationOptionsFor({ kind: 'real' }, 'x')).toEqual({});
    expect(conversationOptionsFor({ kind: 'replay', transcript: 'text' }, 'x')).toEqual({});
    expect(parseNestArgs(['--conversations', 'chats'], {})).toMatchObject({ kind: 'usage-error', message: expect.stringContaining('add --real') });
    expect(parseNestArgs(['--real', '--idle-ms', '5000'], {})).toMatchObject({ kind: 'usage-error', message: '--idle-ms goes with --conversations' });
    expect(parseNestArgs(['--real', '--conversations', 'c', '--idle-ms', '0'], {})).toMatchObject({ kind: 'usage-error' });
    expect(parseNestArgs(['--real', '--conversations', 'c', '--idle-ms', '1e3'], {})).toMatchObject({ kind: 'usage-error' });
    expect(parseNestArgs(['--real', '--conversations', ''], {})).toMatchObject({ kind: 'usage-error' });
  });
});

describe('examples/nest/main.ts', () => {
  let app: TaggedChild;
  let base: string;

  beforeAll(async () => {
    ({ app, base } = await startApp());
  }, 40_000);

  it('streams a run as server-sent events: CliMessages, each with an id, ending with one terminal', async () => {
    const stream = openStream(`${base}run?prompt=hello`);
    const response = await stream.response;
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/event-stream/);
    await stream.ended;
    const frames = stream.frames();
    expect(frames.map((frame) => frame['id'])).toEqual(frames.map((_frame, index) => String(index + 1)));
    const messages = runMessages(frames);
    expect(messages[0]?.type).toBe('session.started');
    expect(messages.filter((message) => message.type.startsWith('terminal.'))).toHaveLength(1);
    expect(messages.at(-1)).toMatchObject({ type: 'terminal.completed', stopReason: 'end_turn' });
    expect(messages.map((message) => (message.type === 'assistant' ? message.text : '')).join('')).toBe(ANSWER);
    expect(await agentsOf(app.child.pid ?? 0, 'pi-replay.mjs')).toEqual([]);
  }, 60_000);

  it('answers 400 to an empty prompt and 204 to a reconnecting EventSource, starting no agent', async () => {
    expect(await send('GET', `${base}run?prompt=%20`)).toMatchObject({ status: 400, body: expect.stringContaining('the prompt is empty') });
    const reconnect = openStream(`${base}run?prompt=hello`, { 'last-event-id': '3' });
    expect((await reconnect.response).statusCode).toBe(204);
    await reconnect.ended;
    expect(await agentsOf(app.child.pid ?? 0, 'pi-replay.mjs')).toEqual([]);
  });

  it('stops the agent when the client disconnects mid-run', async () => {
    const stream = openStream(`${base}run?prompt=hello`);
    await stream.waitFor((frames) => frames.length >= 2); // the session, then the first text
    const agent = await theAgentOf(app.child.pid ?? 0, 'pi-replay.mjs');
    expect(isAlive(agent)).toBe(true);
    stream.request.destroy();
    await waitUntil(() => !isAlive(agent), `agent ${String(agent)} to be gone`);
    expect(runMessages(stream.frames()).some((message) => message.type.startsWith('terminal.'))).toBe(false);
    // The app goes on serving.
    expect((await send('GET', `${base}run?prompt=`)).status).toBe(400);
  }, 60_000);

  it('runs a session: two turns on one agent process, an abort that ends the running turn, and DELETE that ends it', async () => {
    const id = `s-${String(process.pid)}`;
    const stream = openStream(`${base}session/${id}`);
    await stream.waitFor(has((message) => message.type === 'session.started'));
    expect((await send('GET', `${base}session/${id}`)).status).toBe(409);
    expect((await send('POST', `${base}session/nobody/prompt`, { text: 'hello' })).status).toBe(404);
    expect((await send('POST', `${base}session/${id}/prompt`, { text: ' ' })).status).toBe(400);

    expect((await send('POST', `${base}session/${id}/prompt`, { text: 'first' })).status).toBe(202);
    await stream.waitFor(has((message) => message.type === 'turn.completed' && message.turn === 1));
    const agent = await theAgentOf(app.child.pid ?? 0, 'pi-rpc-replay.mjs');

    expect((await send('POST', `${base}session/${id}/prompt`, { text: 'second' })).status).toBe(202);
    await stream.waitFor((frames) => {
      const messages = sessionMessages(frames);
      const second = messages.findIndex((message) => message.type === 'turn.started' && message.turn === 2);
      return second !== -1 && messages.slice(second).some((message) => message.type === 'assistant');
    });
    expect(await agentsOf(app.child.pid ?? 0, 'pi-rpc-replay.mjs')).toEqual([agent]);
    expect((await send('POST', `${base}session/${id}/abort`)).status).toBe(202);
    await stream.waitFor(has((message) => message.type === 'turn.failed' && message.turn === 2));
    expect(isAlive(agent)).toBe(true);

    expect((await send('DELETE', `${base}session/${id}`)).status).toBe(202);
    await stream.ended;
    const messages = sessionMessages(stream.frames());
    const turnEnds = messages.filter((message) => message.type === 'turn.completed' || message.type === 'turn.failed');
    expect(turnEnds).toEqual([
      expect.objectContaining({ type: 'turn.completed', turn: 1, stopReason: 'end_turn' }),
      expect.objectContaining({ type: 'turn.failed', turn: 2, reason: 'aborted' }),
    ]);
    expect(messages.filter((message) => message.type.startsWith('terminal.'))).toEqual([messages.at(-1)]);
    expect(messages.at(-1)?.type).toBe('terminal.completed');
    await waitUntil(() => !isAlive(agent), `agent ${String(agent)} to be gone`);
    expect((await send('POST', `${base}session/${id}/prompt`, { text: 'too late' })).status).toBe(404);
  }, 90_000);
});

describe('examples/nest/main.ts on SIGTERM', () => {
  it('ends every open run and session with terminal.failed (stopped), then exits with no agent left', async () => {
    const { app, base } = await startApp({ ...SLOW, PI_REPLAY_SPEED: '5' });
    const parent = app.child.pid ?? 0;
    const run = openStream(`${base}run?prompt=hello`);
    const session = openStream(`${base}session/shutdown`);
    await session.waitFor(has((message) => message.type === 'session.started'));
    expect((await send('POST', `${base}session/shutdown/prompt`, { text: 'hello' })).status).toBe(202);
    await run.waitFor(has((message) => message.type === 'assistant'));
    await session.waitFor(has((message) => message.type === 'assistant'));
    const agents = [await theAgentOf(parent, 'pi-replay.mjs'), await theAgentOf(parent, 'pi-rpc-replay.mjs')];

    app.child.kill('SIGTERM');
    await Promise.all([run.ended, session.ended]);
    const ran = runMessages(run.frames());
    expect(ran.filter((message) => message.type.startsWith('terminal.'))).toEqual([ran.at(-1)]);
    expect(ran.at(-1)).toMatchObject({ type: 'terminal.failed', reason: 'stopped' });
    const sessionEnd = sessionMessages(session.frames()).slice(-2);
    expect(sessionEnd).toEqual([
      expect.objectContaining({ type: 'turn.failed', turn: 1 }),
      expect.objectContaining({ type: 'terminal.failed', reason: 'stopped' }),
    ]);

    const exited = await app.exitWithin(20_000);
    const survivors = await app.tag.waitUntilNone(5_000);
    expect({ exited, survivors }).toEqual({ exited: { code: null, signal: 'SIGTERM' }, survivors: [] });
    expect(agents.filter(isAlive)).toEqual([]);
  }, 90_000);
});

describe('examples/nest/main.ts with --conversations (the real pi, the recall scenario)', () => {
  let model: FakeModelServer | undefined;
  const homes: PiEnv[] = [];
  let folder = '';

  beforeAll(async () => {
    model = await startFakeModelServer();
    folder = mkdtempSync(join(tmpdir(), 'agent-rx-nest-conversations-'));
  });

  afterAll(async () => {
    await model?.close();
    for (const home of homes.splice(0)) await home.cleanup();
    rmSync(folder, { recursive: true, force: true });
  });

  // The app with the real pi (from this checkout) in a home of its own, keeping conversations in `folder`.
  async function realApp(): Promise<{ app: TaggedChild; base: string }> {
    if (model === undefined) throw new Error('the model server did not start');
    const home = await createPiEnv({ baseUrl: model.baseUrl });
    homes.push(home);
    return startApp({ ...home.env, NO_COLOR: '1', PATH: `${PI_BIN}:${process.env['PATH'] ?? ''}` }, ['--real', '--provider', OPENAI_PROVIDER, '--model', 'recall', '--conversations', folder]);
  }

  // One prompt in the session `id`'s stream: the answer of its turn.
  async function ask(stream: Stream, base: string, id: string, text: string): Promise<string> {
    const from = sessionMessages(stream.frames()).length;
    expect((await send('POST', `${base}session/${id}/prompt`, { text })).status).toBe(202);
    await stream.waitFor((frames) => sessionMessages(frames).slice(from).some((message) => message.type === 'turn.completed' || message.type === 'turn.failed'));
    const turn = sessionMessages(stream.frames()).slice(from);
    expect(turn.find((message) => message.type === 'turn.completed' || message.type === 'turn.failed')?.type).toBe('turn.completed');
    return turn.map((message) => (message.type === 'assistant' ? message.text : '')).join('');
  }

  it('a session opened again under its id after a restart of the app (another pi home) goes on with its conversation', async () => {
    const first = await realApp();
    const before = openStream(`${first.base}session/chat-1`);
    expect(await ask(before, first.base, 'chat-1', 'first question')).toContain('User texts in context: 1 ("first question")');
    first.app.child.kill('SIGTERM');
    await before.ended;
    expect(await first.app.exitWithin(20_000)).toEqual({ code: null, signal: 'SIGTERM' });
    expect(readdirSync(folder)).toEqual(['chat-1.json']);

    const second = await realApp();
    const after = openStream(`${second.base}session/chat-1`);
    expect(await ask(after, second.base, 'chat-1', 'second question')).toContain('User texts in context: 2 ("first question" | "second question")');
    expect(sessionMessages(after.frames()).filter((message) => message.type === 'session.resumed')).toHaveLength(1);
    expect((await send('DELETE', `${second.base}session/chat-1`)).status).toBe(202);
    await after.ended;
    expect(sessionMessages(after.frames()).at(-1)?.type).toBe('terminal.completed');
    second.app.child.kill('SIGTERM');
    expect(await second.app.exitWithin(20_000)).toEqual({ code: null, signal: 'SIGTERM' });
  }, 120_000);
});

