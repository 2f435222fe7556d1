import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { request } from 'node:http';
import { AGENT_NAMES, CliMessageSchema, type CliMessage, type StopReport } from '../../lib/index.js';
import { DEFAULT_PROMPT, DEFAULT_TRANSCRIPTS, describeAgent, parseWebArgs, runOptionsFor, USAGE } from '../../examples/web/options.js';
import { startWebServer, type WebServer } from '../../examples/web/server.js';
import { isAlive } from '../helpers/processes.js';
import { startTaggedNode, type TaggedChild } from '../helpers/tagged-child.js';
import { replayAgentsOfThisProcess, treeOf, waitUntil } from './agent-processes.js';
import { OTHER_AGENT_REPLAYS } from './agent-replays.js';
import { requestSse } from './sse-client.js';

const DEFAULT_TRANSCRIPT = DEFAULT_TRANSCRIPTS.pi;
const reports: StopReport[] = [];
let server: WebServer;

beforeAll(async () => {
  server = await startWebServer({
    agent: { kind: 'replay', agent: 'pi', transcript: DEFAULT_TRANSCRIPT, env: { PI_REPLAY_SPEED: '2', PI_REPLAY_STARTUP_MS: '0' } },
    onRunStopped: (report) => reports.push(report),
    log: () => undefined,
  });
});

afterAll(async () => {
  await server.close();
  expect(await replayAgentsOfThisProcess()).toEqual([]);
});

// A plain GET with extra headers: status, content type and body.
function fetchText(path: string, init: { method?: string; headers?: Record<string, string> } = {}, base = server.url) {
  return new Promise<{ status: number; type: string | undefined; body: string }>((resolve, reject) => {
    const req = request(new URL(path, base), { method: init.method ?? 'GET', headers: init.headers ?? {} }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], body });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

function reportFor(pid: number): StopReport | undefined {
  return reports.find((report) => report.pid === pid);
}

describe('examples/web/server.ts', () => {
  it('listens on 127.0.0.1 and serves the page and its script', async () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const page = await fetchText('/');
    expect(page).toMatchObject({ status: 200, type: 'text/html; charset=utf-8' });
    expect(page.body).toContain('replay of a recorded pi run: tool_call_then_text');
    expect(page.body).toContain('Run `echo hello` with bash, then tell me what it printed.</textarea>');
    // The page is told that a recording is played, whatever the prompt.
    expect(page.body).toContain('<main id="app" data-mode="replay" data-recording="tool_call_then_text" data-ask="" data-fleet="">');
    const script = await fetchText('/app.js');
    expect(script).toMatchObject({ status: 200, type: 'text/javascript; charset=utf-8' });
    expect(script.body).toContain('fromAgentEventSource');
    expect(script.body).not.toMatch(/from\s*["']node:/);
  });

  it('tells the page that the real agent runs, with no recording', async () => {
    const real = await startWebServer({ agent: { kind: 'real', agent: 'pi', executable: 'pi' }, log: () => undefined });
    try {
      const page = await fetchText('/', {}, real.url);
      expect(page.body).toContain('<main id="app" data-mode="real" data-recording="" data-ask="" data-fleet="">');
    } finally {
      await real.close();
    }
  });

  it('streams a run as server-sent CliMessages and ends the response after the terminal message', async () => {
    const client = requestSse(new URL('/run?prompt=hello', server.url).href);
    await client.ended;
    const messages = client.events().map((event) => CliMessageSchema.parse(event));
    expect(messages[0]?.type).toBe('session.started');
    expect(messages.at(-1)).toMatchObject({ type: 'terminal.completed', stopReason: 'end_turn' });
    expect(messages.filter((message) => message.type === 'assistant').map((message) => message.text).join('')).toBe(
      'Let me run a tool first.The tool returned: "hello\\n". Done.',
    );
    expect(client.body()).toMatch(/^id: 1\ndata: /);
  });

  it('stops the agent and its process tree when the client goes away mid-run', async () => {
    const client = requestSse(new URL('/run?prompt=hello', server.url).href);
    await client.waitForEvents(2); // the session, then the first text
    const [pid, ...others] = await replayAgentsOfThisProcess();
    expect(others).toEqual([]);
    if (pid === undefined) throw new Error('no replay agent is running');
    const tree = await treeOf(pid);
    client.request.destroy();
    await waitUntil(() => reportFor(pid) !== undefined, `the stop report of pid ${pid}`);
    expect(reportFor(pid)).toMatchObject({ requested: true, confirmed: true, survivors: [] });
    expect(tree.filter(isAlive)).toEqual([]);
    expect(client.events().length).toBeLessThan(10);
  });

  it('refuses what is not a run started from its own page', async () => {
    expect(await fetchText('/run?prompt=%20')).toMatchObject({ status: 400, body: 'the prompt is empty\n' });
    expect((await fetchText('/run?prompt=hi', { headers: { 'Last-Event-ID': '4' } })).status).toBe(204);
    expect((await fetchText('/run?prompt=hi', { headers: { Origin: 'http://evil.example' } })).status).toBe(403);
    expect((await fetchText('/run?prompt=hi', { headers: { 'Sec-Fetch-Site': 'cross-site' } })).status).toBe(403);
    expect((await fetchText('/run?prompt=hi', { headers: { Host: 'evil.example' } })).status).toBe(403);
    expect((await fetchText('/nope')).status).toBe(404);
    expect((await fetchText('/run?prompt=hi', { method: 'POST' })).status).toBe(405);
    expect(await replayAgentsOfThisProcess()).toEqual([]);
  });

  it('stops open runs when it closes, and waits until they are gone', async () => {
    const own = await startWebServer({ agent: { kind: 'replay', agent: 'pi', transcript: 'text', env: { PI_REPLAY_SPEED: '2' } }, log: () => undefined });
    const client = requestSse(new URL('/run?prompt=hello', own.url).href);
    await client.waitForEvents(2);
    const pids = await replayAgentsOfThisProcess();
    expect(pids).toHaveLength(1);
    await own.close();
    expect(pids.filter(isAlive)).toEqual([]);
  });
});

// The Claude Code, Codex and Gemini CLI replays, each through a server of its own (one agent per server).
describe.each(OTHER_AGENT_REPLAYS)('examples/web/server.ts running the $agent replay', (expected) => {
  const ownReports: StopReport[] = [];
  let own: WebServer;
  beforeAll(async () => {
    own = await startWebServer({
      agent: { kind: 'replay', agent: expected.agent, transcript: DEFAULT_TRANSCRIPTS[expected.agent], env: { PI_REPLAY_SPEED: '2', PI_REPLAY_STARTUP_MS: '0' } },
      onRunStopped: (report) => ownReports.push(report),
      log: () => undefined,
    });
  });
  afterAll(async () => {
    await own.close();
    expect(await replayAgentsOfThisProcess()).toEqual([]);
  });

  it('says on the page which agent runs', async () => {
    const page = await fetchText('/', {}, own.url);
    expect(page.status).toBe(200);
    expect(page.body).toContain(`Agent: ${expected.describe} ·`);
  });

  it('streams the run as server-sent CliMessages: the answer, the tool call and its output', async () => {
    const client = requestSse(new URL('/run?prompt=hello', own.url).href);
    await client.ended;
    const messages: CliMessage[] = client.events().map((event) => CliMessageSchema.parse(event));
    expect(messages[0]?.type).toBe('session.started');
    expect(messages.at(-1)).toMatchObject({ type: 'terminal.completed', stopReason: 'end_turn', usage: { totalTokens: expected.totalTokens } });
    expect(messages.filter((message) => message.type === 'assistant').map((message) => message.text).join('')).toBe(expected.texts.join(''));
    const call = messages.find((message) => message.type === 'tool.call');
    expect(call).toMatchObject({ name: expected.tool.name, input: { command: expected.tool.command } });
    expect(messages.find((message) => message.type === 'tool.completed')).toMatchObject({ toolCallId: call?.toolCallId, output: expected.tool.output });
  });

  it('stops the agent and its process tree when the client goes away mid-run', async () => {
    const client = requestSse(new URL('/run?prompt=hello', own.url).href);
    await client.waitForEvents(2); // the session, then the first text
    const [pid, ...others] = await replayAgentsOfThisProcess();
    expect(others).toEqual([]);
    if (pid === undefined) throw new Error('no replay agent is running');
    const tree = await treeOf(pid);
    client.request.destroy();
    await waitUntil(() => ownReports.some((report) => report.pid === pid), `the stop report of pid ${pid}`);
    expect(ownReports.find((report) => report.pid === pid)).toMatchObject({ requested: true, confirmed: true, survivors: [] });
    expect(tree.filter(isAlive)).toEqual([]);
    expect(client.events().map((event) => CliMessageSchema.parse(event).type)).not.toContain('terminal.completed');
  });
});

describe('parseWebArgs', () => {
  it('replays the default transcript on a free port when given nothing', () => {
    const request = parseWebArgs([], {});
    expect(request).toEqual({ kind: 'serve', port: 0, agent: { kind: 'replay', agent: 'pi', transcript: DEFAULT_TRANSCRIPT } });
    if (request.kind !== 'serve') return;
    expect(runOptionsFor(request.agent, DEFAULT_PROMPT, '/x/pi-replay.mjs')).toEqual({
      prompt: DEFAULT_PROMPT,
      executable: process.execPath,
      executableArgs: ['/x/pi-replay.mjs'],
      model: DEFAULT_TRANSCRIPT,
    });
  });

  it('runs the real pi with --real or AGENT_RX_WEB_REAL=1, and reads the port from --port or PORT', () => {
    const request = parseWebArgs(['--real', '--provider', 'anthropic', '--model', 'claude-x', '--port', '8080'], {});
    expect(request).toEqual({ kind: 'serve', port: 8080, agent: { kind: 'real', agent: 'pi', model: 'claude-x', options: { provider: 'anthropic' } } });
    if (request.kind !== 'serve') return;
    expect(runOptionsFor(request.agent, 'hi', '/x/pi-replay.mjs')).toEqual({ prompt: 'hi', provider: 'anthropic', model: 'claude-x' });
    expect(describeAgent(request.agent)).toBe('pi (anthropic/claude-x)');
    expect(parseWebArgs([], { AGENT_RX_WEB_REAL: '1', PORT: '3000' })).toEqual({ kind: 'serve', port: 3000, agent: { kind: 'real', agent: 'pi' } });
  });

  it('runs another pi executable with --real --executable', () => {
    const request = parseWebArgs(['--real', '--executable', '/opt/pi/bin/pi'], {});
    expect(request).toEqual({ kind: 'serve', port: 0, agent: { kind: 'real', agent: 'pi', executable: '/opt/pi/bin/pi' } });
    if (request.kind !== 'serve') return;
    expect(runOptionsFor(request.agent, 'hi', '/x/pi-replay.mjs')).toEqual({ prompt: 'hi', executable: '/opt/pi/bin/pi' });
    expect(describeAgent(request.agent)).toBe('pi at /opt/pi/bin/pi');
  });

  it.each(AGENT_NAMES)('replays the default transcript of --agent %s', (name) => {
    const request = parseWebArgs(['--agent', name], {});
    expect(request).toEqual({ kind: 'serve', port: 0, agent: { kind: 'replay', agent: name, transcript: DEFAULT_TRANSCRIPTS[name] } });
    if (request.kind !== 'serve') return;
    expect(runOptionsFor(request.agent, 'hi', '/x/pi-replay.mjs')).toEqual({
      prompt: 'hi',
      executable: process.execPath,
      executableArgs: ['/x/pi-replay.mjs'],
      model: DEFAULT_TRANSCRIPTS[name],
    });
  });

  it('describes the replay of each agent by its name, with its transcript', () => {
    expect(OTHER_AGENT_REPLAYS.map(({ agent }) => describeAgent({ kind: 'replay', agent, transcript: DEFAULT_TRANSCRIPTS[agent] }))).toEqual(
      OTHER_AGENT_REPLAYS.map(({ describe }) => describe),
    );
    const request = parseWebArgs(['--agent', 'codex', '--transcript', 'codex-reasoning'], {});
    expect(request).toMatchObject({ kind: 'serve', agent: { kind: 'replay', agent: 'codex', transcript: 'codex-reasoning' } });
  });

  it('runs the real Codex with its provider and model, the real Claude Code and Gemini CLI with a model', () => {
    const codex = parseWebArgs(['--agent', 'codex', '--real', '--provider', 'proxy', '--model', 'gpt-x'], {});
    expect(codex).toEqual({ kind: 'serve', port: 0, agent: { kind: 'real', agent: 'codex', model: 'gpt-x', options: { provider: 'proxy' } } });
    if (codex.kind !== 'serve') return;
    expect(runOptionsFor(codex.agent, 'hi', '/x/pi-replay.mjs')).toEqual({ prompt: 'hi', provider: 'proxy', model: 'gpt-x' });
    expect(describeAgent(codex.agent)).toBe('Codex (proxy/gpt-x)');

    const claude = parseWebArgs(['--agent', 'claude', '--model', 'sonnet', '--executable', '/opt/claude'], { AGENT_RX_WEB_REAL: '1' });
    expect(claude).toEqual({ kind: 'serve', port: 0, agent: { kind: 'real', agent: 'claude', model: 'sonnet', executable: '/opt/claude' } });
    if (claude.kind !== 'serve') return;
    expect(runOptionsFor(claude.agent, 'hi', '/x/pi-replay.mjs')).toEqual({ prompt: 'hi', model: 'sonnet', executable: '/opt/claude' });
    expect(describeAgent(claude.agent)).toBe('Claude Code at /opt/claude (sonnet)');

    const gemini = parseWebArgs(['--agent', 'gemini', '--real', '--model', 'gemini-2.5-flash'], {});
    expect(gemini).toEqual({ kind: 'serve', port: 0, agent: { kind: 'real', agent: 'gemini', model: 'gemini-2.5-flash' } });
    if (gemini.kind !== 'serve') return;
    expect(runOptionsFor(gemini.agent, 'hi', '/x/pi-replay.mjs')).toEqual({ prompt: 'hi', model: 'gemini-2.5-flash' });
    expect(describeAgent(gemini.agent)).toBe('Gemini CLI (gemini-2.5-flash)');
  });

  it('refuses an unknown agent, and a provider for Claude Code or Gemini CLI, naming the choices', () => {
    expect(parseWebArgs(['--agent', 'gpt'], {})).toEqual({ kind: 'usage-error', message: `--agent must be one of ${AGENT_NAMES.join(', ')}; got 'gpt'` });
    expect(parseWebArgs(['--agent', 'claude', '--real', '--provider', 'anthropic'], {})).toEqual({
      kind: 'usage-error',
      message: '--provider is not an option of Claude Code (pi and Codex have it)',
    });
    expect(parseWebArgs(['--agent', 'gemini', '--real', '--provider', 'google'], {})).toEqual({
      kind: 'usage-error',
      message: '--provider is not an option of Gemini CLI (pi and Codex have it)',
    });
    expect(parseWebArgs(['--agent', 'codex', '--model', 'x'], {})).toMatchObject({ kind: 'usage-error' });
  });

  it('lists every agent of the table and its default replay in the usage', () => {
    expect(USAGE).toContain(`--agent <${AGENT_NAMES.join('|')}>`);
    expect(USAGE).toContain("the agents' own flags of agent-rx run (--provider, --approval-mode, …) pass to the real agent");
    for (const name of AGENT_NAMES) expect(USAGE).toContain(`${DEFAULT_TRANSCRIPTS[name]} (${name})`);
  });

  it('answers usage errors and help without throwing', () => {
    expect(parseWebArgs(['--port', 'x'], {})).toMatchObject({ kind: 'usage-error' });
    expect(parseWebArgs(['--port', '70000'], {})).toMatchObject({ kind: 'usage-error' });
    expect(parseWebArgs(['--real', '--transcript', 'text'], {})).toMatchObject({ kind: 'usage-error' });
    expect(parseWebArgs(['--model', 'x'], {})).toMatchObject({ kind: 'usage-error' });
    expect(parseWebArgs(['--nope'], {})).toMatchObject({ kind: 'usage-error' });
    expect(parseWebArgs(['--executable', './pi'], {})).toMatchObject({ kind: 'usage-error' });
    expect(parseWebArgs(['-h'], {})).toEqual({ kind: 'help' });
  });
});

// The server as `npm run web` runs it, ended by a signal while a run's agent is in a tool call
// (the fake tool agent, its tool in its own session as pi's bash tool is).
(process.platform === 'linux' ? describe : describe.skip)('examples/web/server.ts stopped by a signal (Linux: /proc scan)', () => {
  const children: TaggedChild[] = [];
  afterEach(() => {
    for (const child of children.splice(0)) child.cleanUp();
  });

  it.each([
    ['SIGTERM', 143],
    ['SIGHUP', 129],
    ['SIGINT', 130],
  ] as const)('on %s during a tool call it stops the run, exits %i, and leaves no process', async (signal, code) => {
    const web = startTaggedNode(['examples/web/server.ts', '--real', '--executable', 'spec/fixtures/fake-agent-tool.mjs'], 'AGENT_RX_WEB_TEST');
    children.push(web);
    const url = await web.waitForLine(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const client = requestSse(new URL('/run?prompt=hello', url).href);
    await client.waitForEvents(4); // session, text, tool call, the tool's pids
    const { toolPid, agentPid } = JSON.parse((client.events()[3] as { output: string }).output) as { toolPid: number; agentPid: number };
    expect([isAlive(agentPid), isAlive(toolPid)]).toEqual([true, true]);
    web.child.kill(signal);
    const exited = await web.exitWithin(15_000);
    const survivors = await web.tag.waitUntilNone(5_000);
    expect({ exited, survivors }).toEqual({ exited: { code, signal: null }, survivors: [] });
    expect(web.stdout()).toContain(`${signal}: stopping open runs first`);
    client.request.destroy();
  });
});
