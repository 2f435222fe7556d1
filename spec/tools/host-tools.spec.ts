import { describe, expect, it } from '@jest/globals';
import { connect } from 'node:net';
import { Client } from '@modelcontextprotocol/client';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { lastValueFrom, NEVER, Observable, of, Subject, throwError, toArray } from 'rxjs';
import * as z from 'zod';
import { runPi, tool, type CliMessage, type McpHttpServer, type SessionCommand, type SessionMessage } from '../../lib/index.js';
import { callHostTool } from '../../lib/tools/host-tool.js';
import { startHostToolServer } from '../../lib/tools/host-tool-server.js';
import { acpMcpServers, fromAcpMcpServers } from '../../lib/tools/mcp-servers.js';
import { runWithHostTools, sessionWithHostTools, toolsTaken } from '../../lib/tools/with-host-tools.js';
import { terminalFailed } from '../../lib/terminal-failed.js';

const lookup = tool({
  name: 'lookup_order',
  description: 'Looks an order up',
  input: z.object({ orderId: z.string() }),
  run: ({ orderId }) => `order ${orderId}: shipped`,
});

/** Whether something listens on 127.0.0.1:`port`. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => {
      resolve(false);
    });
  });
}

/** Resolves once `condition()` holds (checked every 10 ms); rejects after 10 s. */
async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`never: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** An MCP client of `server` (the official client), with these headers. */
async function clientOf(config: McpHttpServer, headers: Record<string, string> = { ...config.headers }): Promise<Client> {
  const client = new Client({ name: 'spec', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers } }));
  return client;
}

describe('tool()', () => {
  it('refuses a bad name, a missing description, a schema that is not an object', () => {
    const run = () => 'x';
    expect(() => tool({ name: 'has space', description: 'd', input: z.object({}), run })).toThrow(/name must start with a letter/);
    expect(() => tool({ name: '1st', description: 'd', input: z.object({}), run })).toThrow(TypeError);
    expect(() => tool({ name: 'ok', description: ' ', input: z.object({}), run })).toThrow(/needs a description/);
    expect(() => tool({ name: 'ok', description: 'd', input: z.string() as never, run })).toThrow(/object schema/);
  });
});

describe('callHostTool', () => {
  const signal = new AbortController().signal;

  it('calls run with the checked input and gives its answer: a string as text, a value as JSON (an object also structured)', async () => {
    const seen: unknown[] = [];
    const echo = tool({ name: 'echo', description: 'd', input: z.object({ n: z.coerce.number() }), run: (input) => (seen.push(input), { twice: input.n * 2 }) });
    expect(await callHostTool(echo, { n: '21' }, signal)).toEqual({ content: [{ type: 'text', text: '{"twice":42}' }], structuredContent: { twice: 42 } });
    expect(seen).toEqual([{ n: 21 }]);
    expect(await callHostTool(lookup, { orderId: 'A' }, signal)).toEqual({ content: [{ type: 'text', text: 'order A: shipped' }] });
  });

  it('an input that fails the schema is a tool error naming the field; run is not called', async () => {
    let calls = 0;
    const counted = tool({ name: 'counted', description: 'd', input: z.object({ orderId: z.string() }), run: () => (calls += 1) });
    const result = await callHostTool(counted, { orderId: 5 }, signal);
    expect(result.isError).toBe(true);
    expect(result.content[0]?.text).toMatch(/^Invalid input for counted: orderId: /);
    expect(calls).toBe(0);
  });

  it('a throwing run, a rejecting run, an erroring or empty Observable are tool errors with their message', async () => {
    const make = (run: () => unknown) => tool({ name: 'failing', description: 'd', input: z.object({}), run });
    expect(await callHostTool(make(() => { throw new Error('boom'); }), {}, signal)).toEqual({ content: [{ type: 'text', text: 'failing failed: boom' }], isError: true });
    expect(await callHostTool(make(() => Promise.reject(new Error('nope'))), {}, signal)).toMatchObject({ isError: true, content: [{ text: 'failing failed: nope' }] });
    expect(await callHostTool(make(() => throwError(() => new Error('bad'))), {}, signal)).toMatchObject({ isError: true, content: [{ text: 'failing failed: bad' }] });
    expect(await callHostTool(make(() => of()), {}, signal)).toMatchObject({ isError: true, content: [{ text: 'failing failed: it completed without an answer' }] });
  });

  it("an Observable's first value is the answer, and it is unsubscribed then", async () => {
    let unsubscribed = false;
    const first = tool({
      name: 'first',
      description: 'd',
      input: z.object({}),
      run: () =>
        new Observable((subscriber) => {
          subscriber.next('one');
          subscriber.next('two');
          return () => {
            unsubscribed = true;
          };
        }),
    });
    expect(await callHostTool(first, {}, signal)).toEqual({ content: [{ type: 'text', text: 'one' }] });
    expect(unsubscribed).toBe(true);
  });

  it('a pending run ends when the signal fires: its own signal fires, an Observable is unsubscribed, the answer is a tool error', async () => {
    const controller = new AbortController();
    let seen: AbortSignal | undefined;
    let unsubscribed = false;
    const pending = tool({
      name: 'pending',
      description: 'd',
      input: z.object({}),
      run: (_input, context) => {
        seen = context.signal;
        return new Observable(() => () => {
          unsubscribed = true;
        });
      },
    });
    const result = callHostTool(pending, {}, controller.signal);
    controller.abort('the turn was aborted');
    expect(await result).toEqual({ content: [{ type: 'text', text: 'pending was ended: the turn was aborted' }], isError: true });
    expect(seen?.aborted).toBe(true);
    expect(unsubscribed).toBe(true);
  });
});

describe('the host tool server', () => {
  it('serves the tools to an MCP client with its token, on 127.0.0.1', async () => {
    const server = await startHostToolServer([lookup], { trust: true });
    try {
      expect(server.config).toMatchObject({ type: 'http', url: `http://127.0.0.1:${server.port}/mcp`, trust: true });
      const client = await clientOf(server.config);
      const { tools } = await client.listTools();
      expect(tools.map((listed) => listed.name)).toEqual(['lookup_order']);
      expect(tools[0]?.inputSchema).toMatchObject({ type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] });
      expect(await client.callTool({ name: 'lookup_order', arguments: { orderId: 'B-2' } })).toMatchObject({ content: [{ type: 'text', text: 'order B-2: shipped' }] });
      expect(await client.callTool({ name: 'lookup_order', arguments: { orderId: 2 } })).toMatchObject({ isError: true });
      await client.close();
    } finally {
      await server.close();
    }
  });

  it('refuses a request without its token, or with another (401), and the client cannot connect', async () => {
    const server = await startHostToolServer([lookup], { trust: false });
    try {
      const bare = await fetch(server.config.url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' });
      expect(bare.status).toBe(401);
      const wrong = await fetch(server.config.url, { method: 'POST', headers: { authorization: 'Bearer guessed', 'content-type': 'application/json' }, body: '{}' });
      expect(wrong.status).toBe(401);
      await expect(clientOf(server.config, { Authorization: 'Bearer guessed' })).rejects.toThrow();
    } finally {
      await server.close();
    }
  });

  it('close ends pending calls (their signals fire) and closes the port', async () => {
    let seen: AbortSignal | undefined;
    let called!: () => void;
    const started = new Promise<void>((resolve) => (called = resolve));
    const pending = tool({ name: 'pending', description: 'd', input: z.object({}), run: (_input, { signal }) => ((seen = signal), called(), NEVER) });
    const server = await startHostToolServer([pending], { trust: true });
    const client = await clientOf(server.config);
    const call = client.callTool({ name: 'pending', arguments: {} }).catch((error: unknown) => error);
    await started;
    expect(server.pending).toBe(1);
    await server.close();
    expect(seen?.aborted).toBe(true);
    expect(await listening(server.port)).toBe(false);
    await call;
    await client.close().catch(() => undefined);
  });
});

describe('runs and sessions with host tools', () => {
  it('a run starts the server at each subscription and stops it when unsubscribed (pending calls end, the port closes)', async () => {
    const servers: McpHttpServer[] = [];
    let seen: AbortSignal | undefined;
    let called!: () => void;
    const started = new Promise<void>((resolve) => (called = resolve));
    const pending = tool({ name: 'pending', description: 'd', input: z.object({}), run: (_input, { signal }) => ((seen = signal), called(), NEVER) });
    const run = runWithHostTools([pending], true, (server) => {
      servers.push(server);
      return NEVER;
    });
    const subscription = run.subscribe();
    await until(() => servers.length === 1, 'the server started');
    const config = servers[0] as McpHttpServer;
    const port = Number(new URL(config.url).port);
    expect(await listening(port)).toBe(true);
    const client = await clientOf(config);
    const call = client.callTool({ name: 'pending', arguments: {} }).catch((error: unknown) => error);
    await started;
    subscription.unsubscribe();
    expect(seen?.aborted).toBe(true);
    await until(async () => !(await listening(port)), 'the port closed');
    await call;
    await client.close().catch(() => undefined);
  });

  it('a run stops its server at its terminal; two subscriptions get two servers', async () => {
    const ports: number[] = [];
    const run = runWithHostTools([lookup], true, (server) => {
      ports.push(Number(new URL(server.url).port));
      return of<CliMessage>(terminalFailed('exit', 'done'));
    });
    await lastValueFrom(run);
    await lastValueFrom(run);
    expect(new Set(ports).size).toBe(2);
    for (const port of ports) await until(async () => !(await listening(port)), `port ${port} closed`);
  });

  it('a session is given the commands sent while its server starts, in order; an abort command ends pending calls', async () => {
    const received: SessionCommand[] = [];
    let seen: AbortSignal | undefined;
    const pending = tool({ name: 'pending', description: 'd', input: z.object({}), run: (_input, { signal }) => ((seen = signal), NEVER) });
    let config: McpHttpServer | undefined;
    const commands = new Subject<SessionCommand>();
    const done = lastValueFrom(
      commands.pipe(
        sessionWithHostTools([pending], true, (server) => (source) => {
          config = server;
          return new Observable<SessionMessage>((subscriber) =>
            source.subscribe({
              next: (command) => received.push(command),
              complete: () => {
                subscriber.next(terminalFailed('exit', 'ended'));
                subscriber.complete();
              },
            }),
          );
        }),
        toArray(),
      ),
    );
    commands.next({ type: 'prompt', text: 'one' });
    commands.next({ type: 'prompt', text: 'two' });
    await until(() => received.length === 2, 'both commands given');
    expect(received.map((command) => (command.type === 'prompt' ? command.text : command.type))).toEqual(['one', 'two']);
    const client = await clientOf(config as McpHttpServer);
    const call = client.callTool({ name: 'pending', arguments: {} });
    await until(() => seen !== undefined, 'the call pending');
    commands.next({ type: 'abort' });
    expect(await call).toMatchObject({ isError: true, content: [{ text: 'pending was ended: the turn was aborted' }] });
    expect(seen?.aborted).toBe(true);
    commands.complete();
    expect(await done).toEqual([expect.objectContaining({ type: 'terminal.failed' })]);
    await client.close().catch(() => undefined);
  });

  it("a session's pending call ends with its turn (turn.completed or turn.failed)", async () => {
    let seen: AbortSignal | undefined;
    const pending = tool({ name: 'pending', description: 'd', input: z.object({}), run: (_input, { signal }) => ((seen = signal), NEVER) });
    let config: McpHttpServer | undefined;
    const turns = new Subject<SessionMessage>();
    const subscription = new Subject<SessionCommand>()
      .pipe(
        sessionWithHostTools([pending], true, (server) => () => {
          config = server;
          return turns;
        }),
      )
      .subscribe();
    await until(() => config !== undefined, 'the server started');
    const client = await clientOf(config as McpHttpServer);
    const call = client.callTool({ name: 'pending', arguments: {} });
    await until(() => seen !== undefined, 'the call pending');
    turns.next({ type: 'turn.completed', turn: 1 } as SessionMessage);
    expect(await call).toMatchObject({ isError: true, content: [{ text: 'pending was ended: the turn ended' }] });
    expect(seen?.aborted).toBe(true);
    subscription.unsubscribe();
    await client.close().catch(() => undefined);
  });

  it('options: two tools of a name, a server named like the tools one, or an agent that cannot take them are TypeErrors', () => {
    expect(() => runPi({ prompt: 'x', tools: [lookup, lookup] })).toThrow(/two tools named lookup_order/);
    expect(() => runPi({ prompt: 'x', tools: [lookup], mcpServers: { host: { command: 'x' } } })).toThrow(/must not name a server "host"/);
    expect(() => toolsTaken({ displayName: 'Some agent' }, 'runs', { tools: [lookup] })).toThrow(/Some agent runs cannot take host tools/);
    expect(() => toolsTaken({ displayName: 'Some agent', mcp: { runs: true, sessions: false } }, 'sessions', { mcpServers: { a: { command: 'x' } } })).toThrow(/sessions cannot take MCP servers/);
    expect(() => runPi({ prompt: 'x', mcpServers: { 'bad name': { command: 'x' } } })).toThrow(TypeError);
    expect(() => runPi({ prompt: 'x', mcpServers: { a: { type: 'http', url: 'ftp://x' } } })).toThrow(/http or https URL/);
  });

  it('ACP servers convert both ways; an SSE server is named as skipped', () => {
    const servers = { files: { command: 'node', args: ['s.js'], env: { A: '1' } }, api: { type: 'http' as const, url: 'http://127.0.0.1:1/mcp', headers: { H: 'v' } } };
    const acp = acpMcpServers(servers);
    expect(acp).toEqual([
      { name: 'files', command: 'node', args: ['s.js'], env: [{ name: 'A', value: '1' }] },
      { type: 'http', name: 'api', url: 'http://127.0.0.1:1/mcp', headers: [{ name: 'H', value: 'v' }] },
    ]);
    expect(fromAcpMcpServers([...acp, { type: 'sse', name: 'old', url: 'http://x', headers: [] }])).toEqual({ servers, skipped: ['old'] });
  });
});
