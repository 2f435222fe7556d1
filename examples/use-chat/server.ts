// `npm run use-chat`: a React page with the AI SDK's useChat, answered by a coding agent through
// agent-rx/ai-sdk. node:http only: GET / is the page, GET /app.js its script (page.tsx with React
// and @ai-sdk/react, bundled with esbuild at startup), POST /api/chat the run that answers:
// chatRun (the new turn, resuming the agent session the earlier answer names) served with
// pipeUIMessageStream. Stop on the page aborts the request: the response closes, the run is
// unsubscribed, and the agent's process tree is stopped.
// Offline (the default) the agent is pi's replay agent playing a recorded run (it reads no
// prompt); `--real` runs the pi on your PATH with its own settings.
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { UIMessage } from 'ai';
import { build } from 'esbuild';
import { chatRun, pipeUIMessageStream, type AgentRxModelOptions } from '../../lib/ai-sdk.js';
import { stopAllRuns, type AgentName } from '../../lib/index.js';
import { DEFAULT_TRANSCRIPTS } from '../replay-agent/recordings.js';

const HERE = fileURLToPath(new URL('.', import.meta.url));
const REPLAY_SCRIPT = fileURLToPath(new URL('../replay-agent/pi-replay.mjs', import.meta.url));
const HOST = '127.0.0.1';
/** The largest request body read (the whole conversation, with its attached images). */
const MAX_BODY_BYTES = 16 * 1024 * 1024;

export interface ChatServerOptions {
  /** Port on 127.0.0.1; 0 (the default) picks a free one. */
  readonly port?: number;
  /** The agent that answers, and its run options. Default: pi's replay agent playing a recorded run. */
  readonly agent?: { readonly name: AgentName; readonly options: Readonly<Record<string, unknown>> };
}

export interface ChatServer {
  readonly url: string;
  /** Stops accepting, ends open answers (which stops their agents) and waits until their processes are gone. */
  close(): Promise<void>;
}

/** The replay of a recorded pi run: offline, no key, no agent needed (it plays its recording whatever is asked). */
export const REPLAY_AGENT = { name: 'pi', options: { executable: process.execPath, executableArgs: [REPLAY_SCRIPT], model: DEFAULT_TRANSCRIPTS.pi } } as const;

export async function startChatServer(options: ChatServerOptions = {}): Promise<ChatServer> {
  const agent = options.agent ?? REPLAY_AGENT;
  // The options are the agent's, checked when each run is made (a TypeError names a wrong one).
  const agentOptions = agent.options as AgentRxModelOptions<AgentName>;
  const [page, script] = await Promise.all([readFile(`${HERE}index.html`, 'utf8'), bundlePage()]);
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', `http://${HOST}`);
    if (request.method === 'GET' && url.pathname === '/') reply(response, 200, page, 'text/html; charset=utf-8');
    else if (request.method === 'GET' && url.pathname === '/app.js') reply(response, 200, script, 'text/javascript; charset=utf-8');
    else if (request.method === 'POST' && url.pathname === '/api/chat') {
      // Same-origin requests only: a page elsewhere must not start agents here.
      if (fromThisPage(request)) void answer(request, response);
      else reply(response, 403, 'only this page may start a run\n');
    }
    else reply(response, 404, 'not found\n');
  });
  const answer = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    let messages: UIMessage[];
    try {
      messages = (JSON.parse(await readBody(request)) as { messages: UIMessage[] }).messages;
    } catch (error) {
      reply(response, 400, `${(error as Error).message}\n`);
      return;
    }
    try {
      // The page's Stop closes the response: pipeUIMessageStream then unsubscribes, which stops the agent.
      await pipeUIMessageStream(chatRun(agent.name, agentOptions, messages), response);
    } catch (error) {
      // A request the agent cannot take (a file it does not read, options it refuses): said before any answer.
      if (!response.headersSent) reply(response, 400, `${(error as Error).message}\n`);
    }
  };
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, HOST, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${HOST}:${String(port)}/`,
    close: async () => {
      const closed = new Promise((resolve) => server.close(resolve));
      server.closeAllConnections();
      await closed;
      await stopAllRuns();
    },
  };
}

// The browser says where a request comes from (Sec-Fetch-Site, Origin); a Host other than ours is DNS rebinding.
function fromThisPage(request: IncomingMessage): boolean {
  const { host, origin } = request.headers;
  const site = request.headers['sec-fetch-site'];
  if (host === undefined || !/^(127\.0\.0\.1|localhost):\d+$/.test(host)) return false;
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return false;
  return origin === undefined || origin === `http://${host}`;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error(`the request is over ${String(MAX_BODY_BYTES)} bytes`));
        request.destroy();
      } else chunks.push(chunk);
    });
    request.on('end', () => {
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
    request.on('error', reject);
  });
}

// React, @ai-sdk/react and the page in one ES module.
async function bundlePage(): Promise<string> {
  const result = await build({
    entryPoints: [`${HERE}page.tsx`],
    bundle: true,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    jsx: 'automatic',
    define: { 'process.env.NODE_ENV': '"production"' },
    minify: true,
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles[0]?.text ?? '';
}

function reply(response: ServerResponse, status: number, body: string, type = 'text/plain; charset=utf-8'): void {
  response.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
  response.end(body);
}

// Run directly (`npm run use-chat [-- --real]`): serve until Ctrl-C.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const real = process.argv.includes('--real');
  const server = await startChatServer(real ? { agent: { name: 'pi', options: {} } } : {});
  process.stdout.write(`agent-rx useChat example · ${real ? 'pi on your PATH' : 'a replay of a recorded pi run (offline: it plays its recording whatever you ask)'}\n${server.url}\n`);
  process.once('SIGINT', () => {
    void server.close().then(() => process.exit(130));
  });
}
