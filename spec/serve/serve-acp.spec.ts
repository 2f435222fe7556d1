import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import * as acp from '@agentclientprotocol/sdk';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable, Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { Observable, type OperatorFunction } from 'rxjs';
import { serveAcp, stopAllRuns, type AcpServer, type AcpSessionFactory, type AcpSessionRequest, type PermissionDecision, type PermissionResolver, type SessionCommand, type SessionMessage } from '../../lib/index.js';
import { fileBlock } from '../../lib/operators/prompt-parts.js';
import { acpPermissionRequest, acpPromptFields, permissionDecision, type ServeAcpOptions } from '../../lib/serve/serve-acp.js';
import { testPng } from '../conformance/scenarios.js';
import { eventually } from '../conformance/suite.js';
import { fixtureProtocol, fixtureSession } from '../helpers/fixture-session.js';
import { isAlive } from '../helpers/processes.js';
import { createProcessTag, describeProcesses } from '../helpers/tagged-processes.js';

// serveAcp in this process, its client the ACP SDK's over a pair of in-memory streams, its sessions
// on the tiny fixture agent (a real child process each): what the bridge answers when.

const TAG = createProcessTag('AGENT_RX_SERVE_ACP');

interface Served {
  readonly server: AcpServer;
  readonly agent: acp.ClientContext;
  readonly updates: acp.SessionNotification[];
  /** What the server wrote, in order: each message's method (`session/update:tool_call`), or `answer`. */
  readonly wire: string[];
  readonly end: () => void;
}

const served: Served[] = [];

/** How the client answers `session/request_permission` (`signal`: aborted when the server withdraws the request). */
type PermissionAnswerer = (request: acp.RequestPermissionRequest, signal: AbortSignal) => acp.RequestPermissionResponse | Promise<acp.RequestPermissionResponse>;

function serve(command?: string, factory?: AcpSessionFactory, answer?: PermissionAnswerer, options: Omit<ServeAcpOptions, 'input' | 'output'> = {}): Served {
  const toServer = new PassThrough();
  const toClient = new PassThrough();
  const server = serveAcp(factory ?? (() => fixtureSession(() => undefined, { tag: TAG, ...(command === undefined ? {} : { command }) })), { ...options, input: toServer, output: toClient });
  const updates: acp.SessionNotification[] = [];
  const wire: string[] = [];
  let partial = '';
  toClient.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString('utf8')).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      const message = JSON.parse(line) as { method?: string; params?: { update?: { sessionUpdate?: string } } };
      wire.push(message.method === undefined ? 'answer' : [message.method, message.params?.update?.sessionUpdate].filter((part) => part !== undefined).join(':'));
    }
  });
  const app = acp.client({ name: 'spec' }).onNotification(acp.methods.client.session.update, ({ params }) => {
    updates.push(params);
  });
  if (answer !== undefined) app.onRequest(acp.methods.client.session.requestPermission, ({ params, signal }) => answer(params, signal));
  const connection = app.connect(acp.ndJsonStream(Writable.toWeb(toServer) as WritableStream<Uint8Array>, Readable.toWeb(toClient) as ReadableStream<Uint8Array>));
  const made = { server, agent: connection.agent, updates, wire, end: () => toServer.end() };
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

/**
 * A session of the specs' own that asks before a tool: each prompt is a turn that calls `bash`
 * (`touch x`) and asks (`req-<turn>`); the decision ends the turn with `<decision> by <who>`. The
 * prompt `deadline` is settled by the session itself (denied by the deadline) after `deadlineMs`.
 * A permission command for a request not pending is dropped (`no-request`), as sessions do.
 */
function askingSession(received: SessionCommand[], deadlineMs = 50): OperatorFunction<SessionCommand, SessionMessage> {
  return (commands) =>
    new Observable<SessionMessage>((subscriber) => {
      let turn = 0;
      let pending: string | undefined;
      const settle = (decision: PermissionDecision, by: PermissionResolver): void => {
        const requestId = pending;
        if (requestId === undefined) return;
        pending = undefined;
        subscriber.next({ type: 'permission.resolved', requestId, decision, by });
        subscriber.next({ type: 'assistant', text: `${decision} by ${by}` });
        subscriber.next({ type: 'turn.completed', turn, stopReason: 'end_turn' });
      };
      subscriber.next({ type: 'session.started', sessionId: 'asking-1' });
      const subscription = commands.subscribe((command) => {
        received.push(command);
        if (command.type === 'prompt') {
          turn += 1;
          pending = `req-${String(turn)}`;
          subscriber.next({ type: 'turn.started', turn, prompt: command.text, commandId: command.id });
          subscriber.next({ type: 'tool.call', toolCallId: `call-${String(turn)}`, name: 'bash', input: { command: 'touch x' }, kind: 'execute', summary: 'touch x' });
          subscriber.next({ type: 'permission.requested', requestId: pending, toolCallId: `call-${String(turn)}`, tool: 'bash', kind: 'execute', title: 'touch x', input: { command: 'touch x' }, options: ['allow', 'allow-always', 'deny'] });
          if (command.text === 'deadline') setTimeout(() => { settle('deny', 'deadline'); }, deadlineMs);
        } else if (command.type === 'permission') {
          if (command.requestId === pending) settle(command.decision, 'caller');
          else subscriber.next({ type: 'input.dropped', kind: 'permission', reason: 'no-request', message: `no pending permission request ${command.requestId}`, requestId: command.requestId, ...(command.id === undefined ? {} : { commandId: command.id }) });
        }
      });
      return () => { subscription.unsubscribe(); };
    });
}

const selected = (optionId: string): acp.RequestPermissionResponse => ({ outcome: { outcome: 'selected', optionId } });
const optionOf = (request: acp.RequestPermissionRequest, kind: acp.PermissionOptionKind): string => request.options.find((option) => option.kind === kind)?.optionId ?? 'none';

describe("serveAcp: the editor's trace context", () => {
  const editorSession = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', tracestate: 'editor=1' };
  const editorPrompt = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01' };
  // The fixture agent says what the session gives each turn as its trace (an ACP agent gets it in its prompt's _meta).
  const tellTrace: typeof fixtureProtocol = {
    ...fixtureProtocol,
    act: (state, ask) => (ask.type === 'start' ? { outputs: [{ type: 'write', line: { op: 'start', text: `echo:${ask.trace?.traceparent ?? 'none'}` } }] } : fixtureProtocol.act(state, ask)),
  };

  it("gives session/new's to the factory and to the agent process, and each prompt's to its turn; a prompt without one runs in the session's", async () => {
    const requests: AcpSessionRequest[] = [];
    const { agent, updates } = serve(undefined, (request) => {
      requests.push(request);
      return fixtureSession(() => undefined, { tag: TAG, protocol: tellTrace });
    });
    await agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
    const { sessionId } = await agent.request(acp.methods.agent.session.new, { cwd: process.cwd(), mcpServers: [], _meta: editorSession });
    expect(requests[0]?.traceContext).toEqual(editorSession);
    const environ = readFileSync(`/proc/${sessionId.replace('fixture-', '')}/environ`, 'latin1').split('\0');
    expect(environ).toEqual(expect.arrayContaining([`TRACEPARENT=${editorSession.traceparent}`, `TRACESTATE=${editorSession.tracestate}`]));
    await agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'one' }], _meta: editorPrompt });
    await prompt(agent, sessionId, 'two');
    // Not W3C's: ignored, as W3C says, and the turn runs in the session's trace.
    await agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'three' }], _meta: { traceparent: 'not-a-traceparent' } });
    expect(updates.map(({ update }) => (update.sessionUpdate === 'agent_message_chunk' && update.content.type === 'text' ? update.content.text : update.sessionUpdate))).toEqual([
      `${editorPrompt.traceparent}|`,
      `${editorSession.traceparent}|`,
      `${editorSession.traceparent}|`,
    ]);
  });

  it('gives nothing where the editor sends none', async () => {
    const requests: AcpSessionRequest[] = [];
    const { agent, updates } = serve(undefined, (request) => {
      requests.push(request);
      return fixtureSession(() => undefined, { tag: TAG, protocol: tellTrace });
    });
    const sessionId = await open(agent);
    expect(requests[0]).not.toHaveProperty('traceContext');
    await prompt(agent, sessionId, 'one');
    expect(updates.map(({ update }) => (update.sessionUpdate === 'agent_message_chunk' && update.content.type === 'text' ? update.content.text : ''))).toEqual(['none|']);
  });
});

describe('serveAcp: permission requests, asked of the editor', () => {
  it('maps a request to session/request_permission: the tool call, and one option per decision the agent accepts', () => {
    expect(
      acpPermissionRequest('s-1', { type: 'permission.requested', requestId: 'r-1', toolCallId: 'call-1', tool: 'bash', kind: 'execute', title: 'touch x', input: { command: 'touch x' }, options: ['allow', 'allow-always', 'deny', 'deny-always'] }),
    ).toEqual({
      sessionId: 's-1',
      toolCall: { toolCallId: 'call-1', title: 'bash: touch x', kind: 'execute', rawInput: { command: 'touch x' } },
      options: [
        { optionId: 'allow', name: 'Allow', kind: 'allow_once' },
        { optionId: 'allow-always', name: 'Always allow', kind: 'allow_always' },
        { optionId: 'deny', name: 'Deny', kind: 'reject_once' },
        { optionId: 'deny-always', name: 'Always deny', kind: 'reject_always' },
      ],
    });
    // No call named: the request's own id; a title that only repeats the tool's name is the name.
    expect(acpPermissionRequest('s-1', { type: 'permission.requested', requestId: 'r-2', tool: 'mcp_search', kind: 'other', title: 'mcp_search', input: null, options: ['allow', 'deny'] })).toEqual({
      sessionId: 's-1',
      toolCall: { toolCallId: 'r-2', title: 'mcp_search', kind: 'other', rawInput: null },
      options: [
        { optionId: 'allow', name: 'Allow', kind: 'allow_once' },
        { optionId: 'deny', name: 'Deny', kind: 'reject_once' },
      ],
    });
  });

  it.each<[string, acp.RequestPermissionResponse, PermissionDecision]>([
    ['allow', selected('allow'), 'allow'],
    ['allow-always', selected('allow-always'), 'allow-always'],
    ['deny', selected('deny'), 'deny'],
    ['an option the request did not offer', selected('deny-always'), 'deny'],
    ['an option of no one', selected('yes please'), 'deny'],
    ['cancelled', { outcome: { outcome: 'cancelled' } }, 'deny'],
  ])("maps the editor's answer %s to a decision", (_name, response, decision) => {
    expect(permissionDecision({ options: ['allow', 'allow-always', 'deny'] }, response)).toBe(decision);
  });

  it.each<[string, acp.PermissionOptionKind | 'cancelled' | 'error', string]>([
    ['reject_once', 'reject_once', 'deny by caller'],
    ['allow_once', 'allow_once', 'allow by caller'],
    ['allow_always', 'allow_always', 'allow-always by caller'],
    ['cancelled', 'cancelled', 'deny by caller'],
    ['an error', 'error', 'deny by caller'],
  ])("asks the editor after the tool call's update; its answer %s is the session's permission command", async (_name, answer, said) => {
    const received: SessionCommand[] = [];
    const asked: acp.RequestPermissionRequest[] = [];
    const { agent, updates, wire } = serve(undefined, () => askingSession(received), (request) => {
      asked.push(request);
      if (answer === 'error') throw new Error('the editor broke');
      return answer === 'cancelled' ? { outcome: { outcome: 'cancelled' } } : selected(optionOf(request, answer));
    });
    const sessionId = await open(agent);
    expect(await prompt(agent, sessionId, 'touch')).toEqual({ stopReason: 'end_turn' });
    expect(asked).toEqual([
      {
        sessionId,
        toolCall: { toolCallId: 'call-1', title: 'bash: touch x', kind: 'execute', rawInput: { command: 'touch x' } },
        options: [
          { optionId: 'allow', name: 'Allow', kind: 'allow_once' },
          { optionId: 'allow-always', name: 'Always allow', kind: 'allow_always' },
          { optionId: 'deny', name: 'Deny', kind: 'reject_once' },
        ],
      },
    ]);
    expect(received.filter((command) => command.type === 'permission')).toEqual([{ type: 'permission', requestId: 'req-1', decision: said.split(' ')[0] }]);
    expect(updates.map(({ update }) => update.sessionUpdate)).toEqual(['tool_call', 'agent_message_chunk']);
    expect(updates.at(-1)?.update).toMatchObject({ content: { text: said } });
    expect(wire.slice(-4)).toEqual(['session/update:tool_call', 'session/request_permission', 'session/update:agent_message_chunk', 'answer']);
  });

  it('withdraws a request the session settled first ($/cancel_request); the late answer is dropped, the session goes on', async () => {
    const received: SessionCommand[] = [];
    let withdrawn = 0;
    const { agent, updates } = serve(undefined, () => askingSession(received), async (request, signal) => {
      if (request.toolCall.toolCallId !== 'call-1') return selected(optionOf(request, 'allow_once'));
      // An editor that answers anyway, once the server withdrew the request.
      if (!signal.aborted) await new Promise((resolve) => { signal.addEventListener('abort', resolve, { once: true }); });
      withdrawn += 1;
      return selected(optionOf(request, 'allow_once'));
    });
    const sessionId = await open(agent);
    expect(await prompt(agent, sessionId, 'deadline')).toEqual({ stopReason: 'end_turn' });
    await eventually(() => withdrawn === 1);
    expect(updates.at(-1)?.update).toMatchObject({ content: { text: 'deny by deadline' } });
    // The next turn asks again, and its answer is the only permission command the session had.
    expect(await prompt(agent, sessionId, 'touch')).toEqual({ stopReason: 'end_turn' });
    expect(updates.at(-1)?.update).toMatchObject({ content: { text: 'allow by caller' } });
    expect(received.filter((command) => command.type === 'permission')).toEqual([{ type: 'permission', requestId: 'req-2', decision: 'allow' }]);
  });

  it('a late answer that reaches the session is dropped there (no-request) and fails nothing', async () => {
    const received: SessionCommand[] = [];
    const answered: acp.RequestPermissionResponse[] = [];
    let release = (): void => undefined;
    const late = new Promise<void>((resolve) => {
      release = resolve;
    });
    // A session that settles its first request without saying so: the server still waits for the editor.
    const session: AcpSessionFactory = () => (commands) =>
      new Observable<SessionMessage>((subscriber) => {
        const inner = askingSession(received)(commands).subscribe({
          next: (message) => {
            if (message.type === 'permission.requested' && message.requestId === 'req-1') {
              subscriber.next(message);
              subscriber.next({ type: 'turn.completed', turn: 1, stopReason: 'end_turn' });
              return;
            }
            subscriber.next(message);
          },
        });
        return () => { inner.unsubscribe(); };
      });
    const { agent } = serve(undefined, session, async (request) => {
      if (request.toolCall.toolCallId === 'call-1') await late;
      const response = selected(optionOf(request, 'allow_once'));
      answered.push(response);
      return response;
    });
    const sessionId = await open(agent);
    expect(await prompt(agent, sessionId, 'forgotten')).toEqual({ stopReason: 'end_turn' });
    release();
    await eventually(() => received.some((command) => command.type === 'permission'));
    expect(await prompt(agent, sessionId, 'touch')).toEqual({ stopReason: 'end_turn' });
    expect(received.filter((command) => command.type === 'permission')).toEqual([
      { type: 'permission', requestId: 'req-1', decision: 'allow' },
      { type: 'permission', requestId: 'req-2', decision: 'allow' },
    ]);
  });
});

const png = testPng();
const text = (value: string): acp.ContentBlock => ({ type: 'text', text: value });

describe('serveAcp: what an editor prompt holds becomes the command\'s text and parts', () => {
  it.each<[string, acp.ContentBlock[], ReturnType<typeof acpPromptFields>]>([
    ['one text block', [text('hello')], { text: 'hello' }],
    ['text blocks in a row, joined; blank ones left out', [text('one'), text('  '), text('two')], { text: 'one\n\ntwo' }],
    ['an image: its base64 data and type', [text('what is this?'), { type: 'image', data: png.base64, mimeType: 'image/png' }], { text: 'what is this?', parts: [{ type: 'image', data: png.base64, mimeType: 'image/png' }] }],
    ['an image before the text: the text first', [{ type: 'image', data: png.base64, mimeType: 'image/png' }, text('what is this?')], { text: 'what is this?', parts: [{ type: 'image', data: png.base64, mimeType: 'image/png' }] }],
    [
      'a file link between texts: a file part with its path (decoded), in order',
      [text('look at'), { type: 'resource_link', uri: 'file:///work/my%20notes.md', name: 'my notes.md' }, text('and fix it')],
      { text: 'look at', parts: [{ type: 'file', path: '/work/my notes.md' }, { type: 'text', text: 'and fix it' }] },
    ],
    [
      'a link to an image file (by its type, or its extension): an image part',
      [text('see'), { type: 'resource_link', uri: 'file:///work/shot.PNG', name: 'shot' }, { type: 'resource_link', uri: 'file:///work/raw', name: 'raw', mimeType: 'image/webp' }],
      { text: 'see', parts: [{ type: 'image', path: '/work/shot.PNG' }, { type: 'image', path: '/work/raw' }] },
    ],
    [
      "an embedded file: a <file> block of its text, the path from its URI (or the URI itself)",
      [text('review'), { type: 'resource', resource: { uri: 'file:///work/a.ts', text: 'export {};\n' } }, { type: 'resource', resource: { uri: 'untitled:Untitled-1', text: 'draft' } }],
      { text: 'review', parts: [{ type: 'text', text: fileBlock('/work/a.ts', 'export {};\n') }, { type: 'text', text: fileBlock('untitled:Untitled-1', 'draft') }] },
    ],
    ['an embedded file alone: it is the text', [{ type: 'resource', resource: { uri: 'file:///work/a.ts', text: 'x' } }], { text: fileBlock('/work/a.ts', 'x') }],
    [
      'an embedded image (a blob of an image type): an image part',
      [text('this'), { type: 'resource', resource: { uri: 'file:///work/p.png', blob: png.base64, mimeType: 'image/png' } }],
      { text: 'this', parts: [{ type: 'image', data: png.base64, mimeType: 'image/png' }] },
    ],
  ])('%s', (_name, blocks, fields) => {
    expect(acpPromptFields(blocks)).toEqual(fields);
  });

  it.each<[string, acp.ContentBlock[], RegExp]>([
    ['audio', [text('listen'), { type: 'audio', data: 'AAAA', mimeType: 'audio/wav' }], /^Invalid params: prompt\[1\] is an audio block: agent-rx gives agents text, images/],
    ['a link that is not a file', [text('read'), { type: 'resource_link', uri: 'https://example.com/a', name: 'a' }], /prompt\[1\] is a resource_link that is not a file:\/\/ URI \(https:\/\/example.com\/a\)/],
    ['binary data that is not an image', [text('read'), { type: 'resource', resource: { uri: 'file:///a.pdf', blob: 'JVBERi0=', mimeType: 'application/pdf' } }], /prompt\[1\] is a resource of binary data \(application\/pdf\) that is not an image/],
    ['an image of a type no model takes', [text('see'), { type: 'image', data: 'Qk0=', mimeType: 'image/bmp' }], /prompt\[1\] is an image of type image\/bmp/],
    ['no text at all', [{ type: 'image', data: png.base64, mimeType: 'image/png' }], /the prompt has no text/],
  ])('refuses %s with invalid params, naming the block', (_name, blocks, message) => {
    let thrown: unknown;
    try {
      acpPromptFields(blocks);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(acp.RequestError);
    expect(thrown).toMatchObject({ code: -32602, message: expect.stringMatching(message) as unknown });
  });

  it('says in initialize whether the sessions take images (the option), and that embedded resources are taken', async () => {
    for (const images of [undefined, false, true]) {
      const { agent } = serve(undefined, undefined, undefined, images === undefined ? {} : { images });
      const init = await agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
      expect(init.agentCapabilities?.promptCapabilities).toEqual({ image: images === true, audio: false, embeddedContext: true });
    }
  });

  it("gives the session the editor's prompt as one command, its parts in order; a prompt it refuses never reaches the session", async () => {
    const received: SessionCommand[] = [];
    const session: AcpSessionFactory = () => (commands) =>
      new Observable<SessionMessage>((subscriber) => {
        subscriber.next({ type: 'session.started', sessionId: 'parts-1' });
        let turn = 0;
        const subscription = commands.subscribe((command) => {
          received.push(command);
          if (command.type !== 'prompt') return;
          turn += 1;
          subscriber.next({ type: 'turn.started', turn, prompt: command.text, commandId: command.id });
          subscriber.next({ type: 'turn.completed', turn, stopReason: 'end_turn' });
        });
        return () => { subscription.unsubscribe(); };
      });
    const { agent } = serve(undefined, session);
    const sessionId = await open(agent);
    const blocks: acp.ContentBlock[] = [
      text('compare'),
      { type: 'image', data: png.base64, mimeType: 'image/png' },
      { type: 'resource', resource: { uri: 'file:///work/a.md', text: '# A' } },
      { type: 'resource_link', uri: 'file:///work/b.md', name: 'b.md' },
    ];
    expect(await agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: blocks })).toEqual({ stopReason: 'end_turn' });
    expect(received).toEqual([
      {
        type: 'prompt',
        text: 'compare',
        parts: [{ type: 'image', data: png.base64, mimeType: 'image/png' }, { type: 'text', text: fileBlock('/work/a.md', '# A') }, { type: 'file', path: '/work/b.md' }],
        id: expect.any(String) as unknown,
      },
    ]);
    await expect(agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [text('hear this'), { type: 'audio', data: 'AAAA', mimeType: 'audio/wav' }] })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('prompt[1] is an audio block') as unknown,
    });
    expect(received).toHaveLength(1);
  });
});

describe('serveAcp: images and files reach the agent through the session (the fixture agent)', () => {
  const folder = mkdtempSync(join(tmpdir(), 'agent-rx-acp-parts-'));
  const notes = join(folder, 'notes.txt');
  writeFileSync(notes, 'the notes say ZEBRA-7731\n');

  afterAll(() => {
    rmSync(folder, { recursive: true, force: true });
  });

  /** The fixture's protocol, taking images: each turn's content goes to the agent as one `echo:` text that says it. */
  const takesImages = {
    ...fixtureProtocol,
    prompts: { image: true, file: true },
    act: (state: { ready: boolean }, ask: Parameters<typeof fixtureProtocol.act>[1]) => {
      if (ask.type !== 'start' || ask.input.content === undefined) return fixtureProtocol.act(state, ask);
      const said = ask.input.content.map((part) => (part.type === 'image' ? `[${part.mimeType} ${part.data}]` : part.type === 'file' ? `[file ${part.path}: ${part.text.trim()}]` : part.text));
      return { outputs: [{ type: 'write' as const, line: { op: 'start', text: `echo:${said.join(' ')}` } }] };
    },
  };

  it("an agent that takes images gets the image's bytes and the linked file's text", async () => {
    const { agent, updates } = serve(undefined, () => fixtureSession(() => undefined, { tag: TAG, protocol: takesImages }), undefined, { images: true });
    const sessionId = await open(agent);
    const prompt: acp.ContentBlock[] = [text('look'), { type: 'image', data: png.base64, mimeType: 'image/png' }, { type: 'resource_link', uri: pathToFileURL(notes).href, name: 'notes.txt' }];
    expect(await agent.request(acp.methods.agent.session.prompt, { sessionId, prompt })).toEqual({ stopReason: 'end_turn' });
    const said = updates.map(({ update }) => (update.sessionUpdate === 'agent_message_chunk' && update.content.type === 'text' ? update.content.text : '')).join('');
    expect(said).toBe(`look [image/png ${png.base64}] [file ${notes}: the notes say ZEBRA-7731]|`);
  });

  it("an agent that takes no image: the prompt is answered with the session's refusal (unsupported), and the session goes on", async () => {
    const { agent } = serve();
    const sessionId = await open(agent);
    await expect(agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [text('echo:look'), { type: 'image', data: png.base64, mimeType: 'image/png' }] })).rejects.toMatchObject({
      message: expect.stringContaining('cannot take an image') as unknown,
      data: { reason: 'unsupported' },
    });
    expect(await prompt(agent, sessionId, 'echo:still here')).toEqual({ stopReason: 'end_turn' });
  });
});

describe("serveAcp: the editor's MCP servers", () => {
  const stdio: acp.McpServer = { name: 'files', command: process.execPath, args: ['files-mcp.mjs'], env: [{ name: 'ROOT', value: '/srv' }] };
  const http: acp.McpServer = { type: 'http', name: 'docs site', url: 'http://127.0.0.1:8931/mcp', headers: [{ name: 'Authorization', value: 'Bearer t' }] };
  const sse: acp.McpServer = { type: 'sse', name: 'old', url: 'http://127.0.0.1:8932/sse', headers: [] };

  it('says in initialize whether the sessions take MCP servers over HTTP (the option); never SSE', async () => {
    for (const mcpHttp of [true, false, undefined]) {
      const { agent } = serve(undefined, undefined, undefined, mcpHttp === undefined ? {} : { mcpHttp });
      const init = await agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
      expect(init.agentCapabilities?.mcpCapabilities).toEqual({ http: mcpHttp === true, sse: false });
    }
  });

  it('gives the session the servers by name (stdio and http); an SSE server is left out, and the editor told (a notice, and _meta)', async () => {
    const requests: AcpSessionRequest[] = [];
    const { agent, updates } = serve(undefined, (request) => {
      requests.push(request);
      return fixtureSession(() => undefined, { tag: TAG });
    }, undefined, { mcpHttp: true });
    await agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
    const answer = await agent.request(acp.methods.agent.session.new, { cwd: process.cwd(), mcpServers: [stdio, http, sse] });
    expect(requests).toHaveLength(1);
    expect(requests[0]?.mcpServers).toEqual({
      files: { command: process.execPath, args: ['files-mcp.mjs'], env: { ROOT: '/srv' } },
      docs_site: { type: 'http', url: 'http://127.0.0.1:8931/mcp', headers: { Authorization: 'Bearer t' } },
    });
    expect(requests[0]?.acpMcpServers).toEqual([stdio, http, sse]);
    expect(requests[0]?.skippedMcpServers).toEqual(['old']);
    expect(answer._meta).toEqual({ 'agent-rx': { skippedMcpServers: ['old'] } });
    await eventually(() => updates.length > 0);
    expect(updates).toEqual([
      { sessionId: answer.sessionId, update: { sessionUpdate: 'notice', severity: 'warning', title: 'MCP servers over SSE are not supported: left out: old', description: 'Give them as stdio or http (streamable HTTP) servers.' } },
    ]);
    // None given: none asked for, and no notice.
    const second = await agent.request(acp.methods.agent.session.new, { cwd: process.cwd(), mcpServers: [] });
    expect(requests[1]?.mcpServers).toEqual({});
    expect(second._meta).toBeUndefined();
  });
});
