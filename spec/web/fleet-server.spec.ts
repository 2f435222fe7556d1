// The web example in fleet mode over real HTTP: a real redis-server, real worker processes
// (spec/fleet/fixtures/worker.ts, the replay agent or the agent stuck in a tool as pi), streams
// dropped and resumed with Last-Event-ID, Stop, a drop without a reconnect, and closing.
import { afterEach, describe, expect, it } from '@jest/globals';
import { request } from 'node:http';
import { lastValueFrom, toArray } from 'rxjs';
import { runPi, type CliMessage } from '../../lib/index.js';
import { sessionKeys, type RunEntry } from '../../lib/fleet.js';
import { testPng } from '../conformance/scenarios.js';
import { DEFAULT_TRANSCRIPTS, fleetSpecFor, parseWebArgs, USAGE, type AgentChoice } from '../../examples/web/options.js';
import { parseEventId, parseRunEvent } from '../../examples/web/resumable.js';
import { startWebServer, type WebServer } from '../../examples/web/server.js';
import type { WebFleetOptions } from '../../examples/web/fleet-runs.js';
import { FLEET_AGENT, fleetWorld, gone, type TestWorker } from '../fleet/fleet-world.js';
import { isAlive } from '../helpers/processes.js';
import { delay } from '../helpers/tagged-child.js';
import { requestSse, type SseRequest } from './sse-client.js';
import { lastIdOf, messagesOf, sseFrames } from './sse-frames.js';

const world = fleetWorld();
const REPLAY: AgentChoice = { kind: 'replay', agent: 'pi', transcript: 'tool_call_then_text' };
const STUCK: AgentChoice = { kind: 'real', agent: 'pi', model: 'fake_tool' };

const servers: WebServer[] = [];
let logs: string[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
  logs = [];
});

async function fleetServer(agent: AgentChoice, fleet: Partial<WebFleetOptions> = {}): Promise<WebServer> {
  const server = await startWebServer({ agent, fleet: { connection: world.redis().url, ...fleet }, log: (line) => logs.push(line) });
  servers.push(server);
  return server;
}

function send(method: 'GET' | 'POST', url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, body });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

const post = (url: string, headers: Record<string, string> = {}) => send('POST', url, headers);

/** The run's id, from the first event of its stream (`event: run`). */
async function runIdOf(client: SseRequest): Promise<string> {
  await client.waitForBody((body) => sseFrames(body).length >= 1);
  const [first] = sseFrames(client.body());
  const run = parseRunEvent(first?.data);
  if (first?.event !== 'run' || run === null) throw new Error(`not a run event: ${client.body()}`);
  expect(first.id).toBe(`${run.runId}/0-0`);
  return run.runId;
}

/** Drops the connection, and gives what the client had: the messages of the complete frames, and the last id. */
function drop(client: SseRequest): { messages: unknown[]; lastId: string } {
  client.request.destroy();
  const frames = sseFrames(client.body());
  const lastId = lastIdOf(frames);
  if (lastId === undefined) throw new Error('no id was received');
  return { messages: messagesOf(frames), lastId };
}

function started(workers: readonly TestWorker[]): string[] {
  return workers.flatMap((worker) => worker.lines().filter((line) => line.event === 'started').map((line) => line.runId ?? ''));
}

/** The same recording run here, with no fleet and no web server in between (where its agent ran left open: the worker's pid is another). */
async function localRun(transcript: string): Promise<CliMessage[]> {
  const messages = await lastValueFrom(runPi({ prompt: 'hello', model: transcript, executable: process.execPath, executableArgs: [FLEET_AGENT], env: { PI_REPLAY_SPEED: '0' } }).pipe(toArray()));
  return messages.map((message) => (message.type === 'session.started' ? { ...message, pid: expect.any(Number) as unknown as number, processGroup: expect.any(Number) as unknown as number } : message));
}

/** The session and some text have come. */
const someMessages = (body: string): boolean => messagesOf(sseFrames(body)).length >= 4;

describe('examples/web/server.ts with a fleet', () => {
  it('resumes a dropped stream where it stopped: the messages of one run, exactly, and one run on the workers', async () => {
    const workers = [await world.startWorker('web-1', { replaySpeed: '1' }), await world.startWorker('web-2', { replaySpeed: '1' })];
    const server = await fleetServer(REPLAY);
    const first = requestSse(new URL('/run?prompt=hello', server.url).href);
    const runId = await runIdOf(first);
    await first.waitForBody(someMessages); // the session and some text
    const before = drop(first);
    expect(before.messages.map((message) => (message as CliMessage).type)).not.toContain('terminal.completed');
    await delay(300); // the run goes on meanwhile
    const second = requestSse(new URL('/run?prompt=hello', server.url).href, { 'Last-Event-ID': before.lastId });
    await second.ended;
    const after = sseFrames(second.body());
    expect(after.some((frame) => frame.event === 'run')).toBe(false);

    const resumed = [...before.messages, ...messagesOf(after)];
    // Exactly the run's stream, each event under the id of its entry, in order, none twice…
    const stream: RunEntry[] = await lastValueFrom(world.dispatcher().follow(runId).pipe(toArray()));
    expect(resumed).toEqual(stream.map((entry) => entry.message));
    const ids = [...sseFrames(first.body()), ...after].filter((frame) => frame.event === undefined).map((frame) => frame.id);
    expect(ids).toEqual(stream.map((entry) => `${runId}/${entry.id}`));
    // …which is what the same recording gives when it runs here.
    expect(resumed).toEqual(await localRun('tool_call_then_text'));
    expect(resumed.at(-1)).toMatchObject({ type: 'terminal.completed' });

    const ended = await Promise.any(workers.map((worker) => worker.waitFor((line) => line.event === 'ended' && line.runId === runId)));
    expect(ended.stopped).toBeNull();
    expect(started(workers)).toEqual([runId]);
    expect(logs).toContain(`run 1: resumed after entry ${parseEventId(before.lastId)?.after ?? ''}`);
  }, 60_000);

  it('resumes a stream that dropped before the first message from the start, and one that dropped after the run ended', async () => {
    const worker = await world.startWorker('web-early', { replaySpeed: '1' });
    const server = await fleetServer(REPLAY);
    const first = requestSse(new URL('/run?prompt=hello', server.url).href);
    const runId = await runIdOf(first);
    const early = drop(first); // the run is still in the queue or starting: only its id was sent
    expect(early).toEqual({ messages: [], lastId: `${runId}/0-0` });
    const whole = requestSse(new URL('/run?prompt=hello', server.url).href, { 'Last-Event-ID': early.lastId });
    await whole.waitForBody(someMessages);
    const middle = drop(whole);
    // Reconnects after the run has ended: its stream is still there (an hour).
    await worker.waitFor((line) => line.event === 'ended' && line.runId === runId);
    const rest = requestSse(new URL('/run?prompt=hello', server.url).href, { 'Last-Event-ID': middle.lastId });
    await rest.ended;
    expect([...middle.messages, ...messagesOf(sseFrames(rest.body()))]).toEqual(await localRun('tool_call_then_text'));
    expect(started([worker])).toEqual([runId]);

    // A stream that had it all, and ids that are not a fleet run's: 204, the EventSource stops.
    const last = lastIdOf(sseFrames(rest.body())) ?? '';
    const nothingLeft = requestSse(new URL('/run?prompt=hello', server.url).href, { 'Last-Event-ID': last });
    expect((await nothingLeft.response).statusCode).toBe(204);
    for (const id of ['4', `${runId}/`, 'a b/1-0', `${runId}/yesterday`]) {
      const refused = requestSse(new URL('/run?prompt=hello', server.url).href, { 'Last-Event-ID': id });
      expect((await refused.response).statusCode).toBe(204);
    }
    expect(started([worker])).toEqual([runId]);
  }, 60_000);

  it('Stop (POST /cancel) stops the agent and its tool on the worker at once, and the stream ends aborted', async () => {
    const worker = await world.startWorker('web-stop');
    const server = await fleetServer(STUCK);
    const client = requestSse(new URL('/run?prompt=hello', server.url).href);
    const runId = await runIdOf(client);
    const { agentPid, toolPid } = await toolPids(client);
    expect([isAlive(agentPid), isAlive(toolPid)]).toEqual([true, true]);
    expect(await post(new URL(`/cancel?run=${runId}`, server.url).href)).toEqual({ status: 204, body: '' });
    expect(await gone([agentPid, toolPid])).toBeLessThan(5_000);
    await client.ended;
    expect(messagesOf(sseFrames(client.body())).at(-1)).toMatchObject({ type: 'terminal.failed', reason: 'aborted' });
    expect((await worker.waitFor((line) => line.event === 'ended' && line.runId === runId)).stopped).toBe('cancel');
    expect(logs).toContain('run 1: cancelled (Stop)');
  }, 60_000);

  it('keeps a run whose stream dropped for the grace period, and cancels it when no reconnect came', async () => {
    const worker = await world.startWorker('web-grace');
    const server = await fleetServer(STUCK, { reconnectGraceMs: 1500 });
    const client = requestSse(new URL('/run?prompt=hello', server.url).href);
    const runId = await runIdOf(client);
    const { agentPid, toolPid } = await toolPids(client);
    const droppedAt = performance.now();
    drop(client);
    await delay(700);
    expect([isAlive(agentPid), isAlive(toolPid)]).toEqual([true, true]);
    expect(worker.lines().filter((line) => line.event === 'ended')).toEqual([]);
    await gone([agentPid, toolPid], 15_000);
    expect(performance.now() - droppedAt).toBeGreaterThanOrEqual(1500);
    expect((await worker.waitFor((line) => line.event === 'ended' && line.runId === runId)).stopped).toBe('cancel');
    expect(logs).toContain('run 1: cancelled (no reconnect within 1500 ms)');
  }, 60_000);

  it('does not cancel a run whose stream came back within the grace period', async () => {
    const worker = await world.startWorker('web-back');
    const server = await fleetServer(STUCK, { reconnectGraceMs: 800 });
    const client = requestSse(new URL('/run?prompt=hello', server.url).href);
    const runId = await runIdOf(client);
    const { agentPid, toolPid } = await toolPids(client);
    const { lastId } = drop(client);
    await delay(300);
    const back = requestSse(new URL('/run?prompt=hello', server.url).href, { 'Last-Event-ID': lastId });
    await back.response;
    await delay(1500); // well past the grace
    expect([isAlive(agentPid), isAlive(toolPid)]).toEqual([true, true]);
    expect(worker.lines().filter((line) => line.event === 'ended')).toEqual([]);
    // The reconnected stream is the one that gets the end.
    expect((await post(new URL(`/cancel?run=${runId}`, server.url).href)).status).toBe(204);
    await back.ended;
    expect(messagesOf(sseFrames(back.body()))).toEqual([expect.objectContaining({ type: 'terminal.failed', reason: 'aborted' })]);
    await gone([agentPid, toolPid]);
  }, 60_000);

  it('cancels its runs when it closes', async () => {
    const worker = await world.startWorker('web-close');
    const server = await fleetServer(STUCK);
    const client = requestSse(new URL('/run?prompt=hello', server.url).href);
    const runId = await runIdOf(client);
    const { agentPid, toolPid } = await toolPids(client);
    await server.close();
    await gone([agentPid, toolPid]);
    expect((await worker.waitFor((line) => line.event === 'ended' && line.runId === runId)).stopped).toBe('cancel');
  }, 60_000);

  it('refuses a cancel that is not a POST from its page with a run id, and says on the page that runs are on the fleet', async () => {
    const server = await fleetServer(REPLAY);
    const cancel = new URL('/cancel?run=some-run', server.url).href;
    expect((await post(cancel, { Origin: 'http://evil.example' })).status).toBe(403);
    expect((await post(cancel, { 'Sec-Fetch-Site': 'cross-site' })).status).toBe(403);
    expect((await post(new URL('/cancel', server.url).href)).status).toBe(400);
    expect((await post(new URL('/cancel?run=a%20b', server.url).href)).status).toBe(400);
    expect((await requestSse(cancel).response).statusCode).toBe(405);
    expect((await post(new URL('/run?prompt=hi', server.url).href)).status).toBe(405);
    expect((await requestSse(new URL('/run?prompt=%20', server.url).href).response).statusCode).toBe(400);
    expect((await requestSse(new URL('/run?prompt=hi', server.url).href, { Origin: 'http://evil.example' }).response).statusCode).toBe(403);
    const page = await send('GET', server.url);
    expect(page.body).toContain("Agent: replay of a recorded pi run: tool_call_then_text (offline; --real runs pi), on the fleet&#39;s workers (a stream that drops resumes) ·");
  });
});

describe('examples/web/server.ts in session mode on a fleet', () => {
  const REAL_PI: AgentChoice = { kind: 'real', agent: 'pi' };
  const sessionServer = async (): Promise<WebServer> => {
    const server = await startWebServer({ agent: REAL_PI, session: true, fleet: { connection: world.redis().url }, log: (line) => logs.push(line) });
    servers.push(server);
    return server;
  };

  it('streams a conversation’s log from its start with <id>/<entry> ids, and after the entry a reconnect names; refuses ids not its own', async () => {
    const server = await sessionServer();
    // Two entries of the session's log, as a worker's activation writes them.
    const client = world.redis().client();
    const log = sessionKeys('agentrx', 'chat-7').log;
    const first = await client.xadd(log, '*', 'm', JSON.stringify({ type: 'session.started', sessionId: 'agent-1' }));
    await client.xadd(log, '*', 'm', JSON.stringify({ type: 'agent.warning', message: 'second entry' }));
    client.disconnect();

    const from = requestSse(new URL('/session?id=chat-7', server.url).href);
    await from.waitForBody((body) => sseFrames(body).length >= 3);
    const frames = sseFrames(from.body());
    expect(frames[0]).toMatchObject({ event: 'session', id: 'chat-7/0-0' });
    expect(JSON.parse(frames[0]?.data ?? '')).toMatchObject({ id: 'chat-7', graceMs: 10_000 });
    expect(frames[1]?.id).toBe(`chat-7/${String(first)}`);
    expect(messagesOf(frames)).toEqual([expect.objectContaining({ type: 'session.started' }), expect.objectContaining({ type: 'agent.warning' })]);
    from.request.destroy();

    const resumed = requestSse(new URL('/session?id=chat-7', server.url).href, { 'Last-Event-ID': `chat-7/${String(first)}` });
    await resumed.waitForBody((body) => sseFrames(body).length >= 1);
    expect(messagesOf(sseFrames(resumed.body()))).toEqual([expect.objectContaining({ type: 'agent.warning', message: 'second entry' })]);
    resumed.request.destroy();
    expect(logs).toContain(`session chat-7: resumed after entry ${String(first)}`);

    const fresh = requestSse(new URL('/session', server.url).href);
    await fresh.waitForBody((body) => sseFrames(body).length >= 1);
    expect(JSON.parse(sseFrames(fresh.body())[0]?.data ?? '')).toMatchObject({ id: expect.stringMatching(/^[\w-]+$/) as unknown });
    fresh.request.destroy();

    const status = async (path: string, headers: Record<string, string> = {}): Promise<number | undefined> => (await requestSse(new URL(path, server.url).href, headers).response).statusCode;
    expect(await status('/session', { 'Last-Event-ID': 'not-ours' })).toBe(204);
    expect(await status('/session', { 'Last-Event-ID': 'a:b/1-0' })).toBe(204);
    expect(await status('/session?id=chat-7', { 'Last-Event-ID': 'chat-8/1-0' })).toBe(204);
    expect(await status('/session?id=a%20b')).toBe(400);
    expect(await status('/session?id=chat-7', { Origin: 'http://evil.example' })).toBe(403);
    expect((await post(new URL('/session/a%20b', server.url).href)).status).toBe(404);
    expect((await post(new URL('/session/chat-7/nope', server.url).href)).status).toBe(404);
    expect((await post(new URL('/session/chat-7/end', server.url).href)).status).toBe(202);
    const page = await send('GET', server.url);
    expect(page.body).toContain('data-mode="session" data-recording="" data-ask="" data-fleet="session"');
  });
});

describe('the fleet options of the web example', () => {
  it('takes the Redis URL from --fleet or AGENT_RX_FLEET', () => {
    expect(parseWebArgs(['--fleet', 'redis://127.0.0.1:6379'], {})).toEqual({
      kind: 'serve',
      port: 0,
      agent: { kind: 'replay', agent: 'pi', transcript: DEFAULT_TRANSCRIPTS.pi },
      fleet: 'redis://127.0.0.1:6379',
    });
    expect(parseWebArgs(['--agent', 'codex', '--real', '--model', 'gpt-x'], { AGENT_RX_FLEET: 'unix:///run/redis.sock' })).toEqual({
      kind: 'serve',
      port: 0,
      agent: { kind: 'real', agent: 'codex', model: 'gpt-x' },
      fleet: 'unix:///run/redis.sock',
    });
    expect(parseWebArgs([], { AGENT_RX_FLEET: '' })).toEqual({ kind: 'serve', port: 0, agent: { kind: 'replay', agent: 'pi', transcript: DEFAULT_TRANSCRIPTS.pi } });
    expect(parseWebArgs(['--fleet', 'localhost:6379'], {})).toMatchObject({ kind: 'usage-error', message: expect.stringContaining('--fleet must be a redis://') });
    expect(parseWebArgs(['--fleet', ''], {})).toMatchObject({ kind: 'usage-error' });
    expect(parseWebArgs(['--fleet', 'redis://r', '--real', '--executable', '/opt/pi'], {})).toEqual({
      kind: 'usage-error',
      message: '--executable is for runs on this machine: with --fleet, the workers decide what runs',
    });
    expect(USAGE).toContain('--fleet <redis-url>');
  });

  it("asks the workers for the agent, the prompt, the model (a replay's transcript) and the provider, nothing that runs it", () => {
    expect(fleetSpecFor({ kind: 'replay', agent: 'pi', transcript: 'text', env: { PI_REPLAY_SPEED: '2' } }, 'hi')).toEqual({ agent: 'pi', options: { prompt: 'hi', model: 'text' } });
    expect(fleetSpecFor({ kind: 'real', agent: 'pi', options: { provider: 'anthropic' }, model: 'm', executable: '/opt/pi' }, 'hi')).toEqual({
      agent: 'pi',
      options: { prompt: 'hi', model: 'm', provider: 'anthropic' },
    });
    expect(fleetSpecFor({ kind: 'real', agent: 'codex', options: { provider: 'proxy' } }, 'hi')).toEqual({ agent: 'codex', options: { prompt: 'hi', provider: 'proxy' } });
    expect(fleetSpecFor({ kind: 'real', agent: 'claude', model: 'sonnet' }, 'hi')).toEqual({ agent: 'claude', options: { prompt: 'hi', model: 'sonnet' } });
    expect(fleetSpecFor({ kind: 'replay', agent: 'gemini', transcript: 'gemini-tool' }, 'hi')).toEqual({ agent: 'gemini', options: { prompt: 'hi', model: 'gemini-tool' } });
    // An attached image travels in the spec, as base64 data with its type.
    const image = { type: 'image', data: testPng().base64, mimeType: 'image/png' } as const;
    expect(fleetSpecFor({ kind: 'real', agent: 'claude' }, ['look', image])).toEqual({ agent: 'claude', options: { prompt: ['look', image] } });
  });
});

/** The pids the stuck agent tells in its tool.update. */
async function toolPids(client: SseRequest): Promise<{ agentPid: number; toolPid: number }> {
  await client.waitForBody((body) => messagesOf(sseFrames(body)).some((message) => (message as CliMessage).type === 'tool.update'));
  const update = messagesOf(sseFrames(client.body())).find((message) => (message as CliMessage).type === 'tool.update') as { output: string };
  return JSON.parse(update.output) as { agentPid: number; toolPid: number };
}
