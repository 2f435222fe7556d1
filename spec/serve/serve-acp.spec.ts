import { afterEach, describe, expect, it } from '@jest/globals';
import * as acp from '@agentclientprotocol/sdk';
import { PassThrough, Readable, Writable } from 'node:stream';
import { serveAcp, stopAllRuns, type AcpServer } from '../../lib/index.js';
import { eventually } from '../conformance/suite.js';
import { fixtureSession } from '../helpers/fixture-session.js';
import { isAlive } from '../helpers/processes.js';
import { createProcessTag, describeProcesses } from '../helpers/tagged-processes.js';

// serveAcp in this process, its client the ACP SDK's over a pair of in-memory streams, its sessions
// on the tiny fixture agent (a real child process each): what the bridge answers when.

const TAG = createProcessTag('AGENT_RX_SERVE_ACP');

interface Served {
  readonly server: AcpServer;
  readonly agent: acp.ClientContext;
  readonly updates: acp.SessionNotification[];
  readonly end: () => void;
}

const served: Served[] = [];

function serve(command?: string): Served {
  const toServer = new PassThrough();
  const toClient = new PassThrough();
  const server = serveAcp(() => fixtureSession(() => undefined, { tag: TAG, ...(command === undefined ? {} : { command }) }), { input: toServer, output: toClient });
  const updates: acp.SessionNotification[] = [];
  const connection = acp
    .client({ name: 'spec' })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      updates.push(params);
    })
    .connect(acp.ndJsonStream(Writable.toWeb(toServer) as WritableStream<Uint8Array>, Readable.toWeb(toClient) as ReadableStream<Uint8Array>));
  const made = { server, agent: connection.agent, updates, end: () => toServer.end() };
  served.push(made);
  return made;
}

async function open(agent: acp.ClientContext): Promise<string> {
  await agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
  return (await agent.request(acp.methods.agent.session.new, { cwd: process.cwd(), mcpServers: [] })).sessionId;
}

const prompt = (agent: acp.ClientContext, sessionId: string, text: string): Promise<acp.PromptResponse> =>
  agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text }] });

afterEach(async () => {
  for (const { server, end } of served.splice(0)) {
    end();
    await server.closed;
  }
  await stopAllRuns();
  expect(describeProcesses(await TAG.waitUntilNone(5000))).toBe('none');
});

describe('serveAcp', () => {
  it('answers initialize with its extension methods, and session/new with the session id once the agent announced it', async () => {
    const { agent } = serve();
    const init = await agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
    expect(init).toMatchObject({ protocolVersion: acp.PROTOCOL_VERSION, agentCapabilities: { loadSession: false, _meta: { 'agent-rx': { steer: '_agent-rx/steer', followUp: '_agent-rx/follow-up' } } } });
    const { sessionId } = await agent.request(acp.methods.agent.session.new, { cwd: process.cwd(), mcpServers: [] });
    expect(sessionId).toMatch(/^fixture-\d+$/);
  });

  it('answers session/new with an error when the agent cannot start', async () => {
    const { agent } = serve('/nonexistent/agent-rx-agent');
    await agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
    await expect(agent.request(acp.methods.agent.session.new, { cwd: process.cwd(), mcpServers: [] })).rejects.toThrow(/could not be started/);
  });

  it('answers a prompt at its turn\'s end, after its updates; two sessions are two processes', async () => {
    const { agent, updates } = serve();
    const [a, b] = [await open(agent), await open(agent)];
    expect(a).not.toBe(b);
    expect(await prompt(agent, a, 'echo:hello')).toEqual({ stopReason: 'end_turn' });
    expect(await prompt(agent, b, 'echo:there')).toEqual({ stopReason: 'end_turn' });
    expect(updates.map(({ sessionId, update }) => [sessionId, update.sessionUpdate === 'agent_message_chunk' && update.content.type === 'text' ? update.content.text : update.sessionUpdate])).toEqual([
      [a, 'hello|'],
      [b, 'there|'],
    ]);
  });

  it('answers a prompt whose turn failed with a JSON-RPC error carrying the failure\'s message', async () => {
    const { agent } = serve();
    const sessionId = await open(agent);
    await expect(prompt(agent, sessionId, 'crash')).rejects.toMatchObject({ message: 'fixture exited with code 3: boom', data: { reason: 'exit' } });
  });

  it('on session/cancel, answers the running prompt and the ones queued behind it with cancelled; the session goes on', async () => {
    const { agent, updates } = serve();
    const sessionId = await open(agent);
    const running = prompt(agent, sessionId, 'hang');
    const queued = prompt(agent, sessionId, 'echo:later');
    // The turn runs once its first update came.
    await eventually(() => updates.length > 0);
    await agent.notify(acp.methods.agent.session.cancel, { sessionId });
    expect(await running).toEqual({ stopReason: 'cancelled' });
    expect(await queued).toEqual({ stopReason: 'cancelled' });
    expect(await prompt(agent, sessionId, 'echo:again')).toEqual({ stopReason: 'end_turn' });
  });

  it('refuses a prompt without text, and a session it does not know', async () => {
    const { agent } = serve();
    const sessionId = await open(agent);
    await expect(agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'image', data: '', mimeType: 'image/png' }] })).rejects.toThrow(/no text/);
    await expect(prompt(agent, 'no-such-session', 'echo:x')).rejects.toMatchObject({ code: -32002 });
  });

  it('stops every session when the connection closes: closed settles, no agent process is left', async () => {
    const { agent, server, end } = serve();
    const sessionId = await open(agent);
    void prompt(agent, sessionId, 'tool').catch(() => undefined);
    const sleep = await TAG.waitFor('sleep');
    end();
    await server.closed;
    expect(describeProcesses(await TAG.waitUntilNone(5000))).toBe('none');
    expect(isAlive(sleep)).toBe(false);
  });
});
