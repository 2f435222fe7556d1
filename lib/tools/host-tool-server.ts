// The local MCP server that serves a run's host tools to its agent: streamable HTTP on 127.0.0.1,
// a port of its own and a token only the run's agent is given, stopped with the run.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { errorMessage } from '../process/error-message.js';
import { callHostTool, toolInputSchema, type HostTool } from './host-tool.js';
import type { McpHttpServer } from './mcp-servers.js';

/** A request body above this is refused (413): a tool's input is small. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

/** A running host tool server. */
export interface HostToolServer {
  /** The server as one of the run's MCP servers: its URL and the header with its token. */
  readonly config: McpHttpServer;
  /** Its port on 127.0.0.1. */
  readonly port: number;
  /** How many calls are being answered now. */
  readonly pending: number;
  /** Ends the calls being answered (their `run`s' signals fire with `reason`); later calls are answered as usual. */
  endCalls(reason: string): void;
  /** Ends the calls being answered and closes the port. Idempotent. */
  close(): Promise<void>;
}

/** What the server is told of the run. */
export interface HostToolServerOptions {
  /** `trust` of its {@link McpHttpServer} entry: the agent may call the tools without asking (the run has no `permission`). */
  readonly trust: boolean;
}

/**
 * Starts an MCP server (the official MCP TypeScript SDK) for `tools` on 127.0.0.1, on a port the
 * system picks. Every request must carry `Authorization: Bearer <token>`, a 256-bit token made here
 * (401 otherwise), which only the run's agent is given (in a file or variable of its own, never in
 * its arguments).
 */
export async function startHostToolServer(tools: readonly HostTool<unknown>[], options: HostToolServerOptions): Promise<HostToolServer> {
  const token = randomBytes(32).toString('base64url');
  const expected = Buffer.from(`Bearer ${token}`);
  const calls = new Set<AbortController>();
  const endCalls = (reason: string): void => {
    for (const call of [...calls]) call.abort(reason);
  };
  const handler = createMcpHandler(
    () => {
      const server = new McpServer({ name: 'agent-rx host tools', version: '1' });
      for (const hostTool of tools) {
        server.registerTool(hostTool.name, { description: hostTool.description, inputSchema: passThrough(hostTool) }, async (args, context) => {
          const call = new AbortController();
          calls.add(call);
          const signal = AbortSignal.any([call.signal, context.mcpReq.signal]);
          try {
            const result = await callHostTool(hostTool, args, signal);
            return { ...result, content: [...result.content] };
          } finally {
            calls.delete(call);
          }
        });
      }
      return server;
    },
    { onerror: () => undefined },
  );

  const http = createServer((request, response) => {
    const authorization = Buffer.from(request.headers.authorization ?? '');
    if (authorization.length !== expected.length || !timingSafeEqual(authorization, expected)) {
      response.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}');
      return;
    }
    void serve(request, response, handler.fetch).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500, { 'content-type': 'text/plain' });
      response.end(errorMessage(error));
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(0, '127.0.0.1', () => {
      http.off('error', reject);
      resolve();
    });
  });
  const { port } = http.address() as AddressInfo;
  let closed: Promise<void> | undefined;
  return {
    config: { type: 'http', url: `http://127.0.0.1:${port}/mcp`, headers: { Authorization: `Bearer ${token}` }, trust: options.trust },
    port,
    get pending() {
      return calls.size;
    },
    endCalls,
    close() {
      closed ??= new Promise<void>((resolve) => {
        endCalls('the run ended');
        http.close(() => { resolve(); });
        http.closeAllConnections();
        void handler.close().catch(() => undefined);
      });
      return closed;
    },
  };
}

/**
 * The tool's schema as the SDK takes it (a Standard Schema with its JSON Schema), accepting any
 * input: `callHostTool` checks it with the tool's own schema, so that an input it refuses is a tool
 * error in the library's words and `run` is never called with it.
 */
function passThrough(hostTool: HostTool<unknown>) {
  const jsonSchema = toolInputSchema(hostTool.input);
  return {
    '~standard': {
      version: 1 as const,
      vendor: 'agent-rx',
      validate: (value: unknown) => ({ value: value as Record<string, unknown> }),
      jsonSchema: { input: () => jsonSchema, output: () => jsonSchema },
    },
  };
}

/** Serves one Node request with a fetch-shaped handler. */
async function serve(request: IncomingMessage, response: ServerResponse, fetch: (request: Request) => Promise<Response>): Promise<void> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) {
      response.writeHead(413).end();
      request.destroy();
      return;
    }
    chunks.push(chunk);
  }
  const gone = new AbortController();
  response.once('close', () => {
    if (!response.writableFinished) gone.abort('the client went away');
  });
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (typeof value === 'string') headers.set(name, value);
    else if (Array.isArray(value)) for (const item of value) headers.append(name, item);
  }
  const method = request.method ?? 'GET';
  const answer = await fetch(
    new Request(`http://127.0.0.1${request.url ?? '/'}`, {
      method,
      headers,
      signal: gone.signal,
      ...(method === 'GET' || method === 'HEAD' ? {} : { body: Buffer.concat(chunks) }),
    }),
  );
  response.writeHead(answer.status, Object.fromEntries(answer.headers));
  if (answer.body === null) {
    response.end();
    return;
  }
  const reader: ReadableStreamDefaultReader<Uint8Array> = answer.body.getReader() as ReadableStreamDefaultReader<Uint8Array>;
  gone.signal.addEventListener('abort', () => void reader.cancel().catch(() => undefined), { once: true });
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    response.write(value);
  }
  response.end();
}
