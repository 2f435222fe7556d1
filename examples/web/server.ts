// `npm run web`: a page that runs a coding agent through agent-rx and streams it to the browser.
// node:http only: GET / is the page (which says whether a recording is replayed or the agent
// runs: `data-mode` and `data-recording`), GET /app.js its script (examples/web/page.ts, bundled
// with esbuild at startup), GET /run?prompt=… the run as server-sent events (serveSse over the run
// of the chosen agent of the table: pi, Claude Code, Codex or Gemini CLI, replayed or real).
// Stop on the page, or closing the tab, closes the EventSource; the response closes, serveSse
// unsubscribes, and the agent's process tree is stopped.
// An image attached on the page goes with the prompt: for a run, POST /attachments first (its
// bytes as base64 with their type; GET /run then names it: &image=<id>, see attachments.ts); in a
// session, in the command itself. The server builds the image part from the bytes; an agent that
// cannot take an image refuses it, and the page shows why (a run: terminal.failed `setup`; a
// session: input.dropped `unsupported`). A replay reads no prompt: it takes no attachment.
// With a fleet (`--fleet <redis-url>`, AGENT_RX_FLEET, or the `fleet` option), runs go to
// agent-rx/fleet workers instead, and a stream that drops resumes where it stopped: see
// fleet-runs.ts (who holds a run, when it is cancelled) and resumable.ts (the event ids). Stop is
// then also a POST /cancel?run=<id>.
// In session mode (`--session`, or the `session` option), one agent process answers the whole
// conversation: GET /session, POST /session/<id>, POST /session/<id>/end (see sessions.ts). With a
// fleet too, the conversation is a fleet session that outlives the page, its stream, its worker
// and this server, with the same endpoints (see fleet-sessions.ts); the page keeps its id.
// Offline it is pi's RPC replay agent (examples/replay-agent/pi-rpc-replay.mjs, every turn a
// recording); with the real agent, the agent itself. The page says which (`data-mode="session"`,
// and `data-recording` for the replay). A real agent whose sessions take `permission` can ask
// before its tools (`data-ask="available"`): the page's "Ask before tools" opens the session with
// GET /session?permission=ask, and its approval cards answer with `permission` commands. A replay
// cannot ask (it plays what was recorded), nor can an agent whose sessions have no `permission`.
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { constants } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { defer, of, tap, type Observable } from 'rxjs';
import { agentByName, agentSession, AGENTS, isTerminal, runAgent, stopAllRuns, type AgentName, type CliMessage, type SessionCommand, type SessionMessage, type StopReport } from '../../lib/index.js';
import { terminalFailed } from '../../lib/terminal-failed.js';
import { createAttachments, MAX_ATTACHMENT_BODY_BYTES, readWebImage, type Attachments } from './attachments.js';
import { createFleetRuns, type FleetRuns, type WebFleetOptions } from './fleet-runs.js';
import { createFleetSessions, type FleetSessions } from './fleet-sessions.js';
import {
  DEFAULT_AGENT,
  DEFAULT_PROMPT,
  DEFAULT_TRANSCRIPTS,
  describeAgent,
  describePrompt,
  fleetSessionSpecFor,
  fleetSpecFor,
  parseWebArgs,
  runOptionsFor,
  sessionOptionsFor,
  USAGE,
  type AgentChoice,
  type WebPrompt,
  type WebRunOptions,
  type WebSessionOptions,
} from './options.js';
import { isRunId } from './resumable.js';
import { createWebSessions, readBody, type WebSessions } from './sessions.js';
import { serveSse } from './sse.js';

const HERE = fileURLToPath(new URL('.', import.meta.url));
const REPLAY_SCRIPT = fileURLToPath(new URL('../replay-agent/pi-replay.mjs', import.meta.url));
const RPC_REPLAY_SCRIPT = fileURLToPath(new URL('../replay-agent/pi-rpc-replay.mjs', import.meta.url));
const HOST = '127.0.0.1';

export interface WebServerOptions {
  /** Port on 127.0.0.1; 0 (the default) picks a free one. */
  readonly port?: number;
  /** The agent each run starts. Default: the replay of pi's `tool_call_then_text`. */
  readonly agent?: AgentChoice;
  /** Called when a run's processes are gone (after its exit, or after Stop), with its report. Not in fleet mode: the processes are the workers'. */
  readonly onRunStopped?: (report: StopReport, run: number) => void;
  /**
   * Runs go to agent-rx/fleet workers through this Redis instead of being started here, and their
   * streams resume after a drop. The workers decide what runs: `agent` gives only the agent, the
   * model (a replay: its transcript) and the provider of each run's spec.
   */
  readonly fleet?: WebFleetOptions;
  /**
   * Session mode: one agent process for the whole conversation (GET /session, POST /session/<id>,
   * POST /session/<id>/end): the real agent, or for a replay of pi the RPC replay agent (the other
   * agents have no interactive replay). With a fleet, a fleet session of the real agent, which
   * outlives the page, the stream, the worker and this server.
   */
  readonly session?: boolean;
  /** A fleet session's `idleMs`: how long its agent stays without a turn before it falls asleep. Default: the fleet's (a minute). */
  readonly sessionIdleMs?: number;
  /**
   * How long a session's permission request waits for the page's answer before it is denied
   * (`permission.resolved` by `deadline`). Default: the library's (5 minutes).
   */
  readonly permissionTimeoutMs?: number;
  /** Called when a session's process is gone (after its end, or after its stream closed), with its report. */
  readonly onSessionStopped?: (report: StopReport, session: string) => void;
  /** Where the one-line logs go. Default: stdout. */
  readonly log?: (line: string) => void;
}

export interface WebServer {
  /** `http://127.0.0.1:<port>/` */
  readonly url: string;
  /** Stops accepting, closes open streams (which stops their runs) and waits until their processes are gone. */
  close(): Promise<void>;
}

export async function startWebServer(options: WebServerOptions = {}): Promise<WebServer> {
  const agent = options.agent ?? { kind: 'replay', agent: DEFAULT_AGENT, transcript: DEFAULT_TRANSCRIPTS[DEFAULT_AGENT] };
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  if (options.session === true && agent.kind === 'replay' && agent.agent !== 'pi') {
    throw new TypeError(`session mode replays pi only (its RPC replay agent): ${AGENTS[agent.agent].displayName} needs the real agent`);
  }
  if (options.session === true && options.fleet !== undefined && agent.kind === 'replay') {
    throw new TypeError("a fleet session needs the real agent: it falls asleep and wakes from its agent's own conversation, which a replay has not");
  }
  const onFleet = options.session === true && options.fleet !== undefined;
  // Whether the page may open sessions that ask before each tool (a fleet session's tools are the worker's to allow).
  const canAsk = options.session === true && !onFleet && agent.kind === 'real' && sessionsCanAsk(agent.agent);
  const asking = { permission: 'ask' as const, ...(options.permissionTimeoutMs === undefined ? {} : { permissionTimeoutMs: options.permissionTimeoutMs }) };
  const sessions: WebSessions | null =
    options.session === true && !onFleet
      ? createWebSessions({
          agentName: AGENTS[agent.agent].displayName,
          log,
          session: (onStopped, { ask }) => startSession(agent, { ...sessionOptionsFor(agent, RPC_REPLAY_SCRIPT), ...(ask ? asking : {}), onStopped }),
          ...(options.onSessionStopped === undefined ? {} : { onStopped: options.onSessionStopped }),
        })
      : null;
  // Images attached to one-shot runs (a session's commands carry theirs).
  const attachments: Attachments | null = options.session === true ? null : createAttachments();
  const [page, script] = await Promise.all([readFile(`${HERE}index.html`, 'utf8'), bundlePageScript()]);
  const described = onFleet
    ? `${describeAgent(agent)}, a conversation on the fleet's workers (it falls asleep when idle; a reload goes on with it)`
    : options.fleet !== undefined
      ? `${describeAgent(agent)}, on the fleet's workers (a stream that drops resumes)`
      : sessions !== null
        ? `${describeAgent(agent)}, one session: one process for the conversation`
        : describeAgent(agent);
  // The page's mode, for its script: a replay plays its recording whatever the prompt, and the page says so.
  const html = page
    .replace('<!--agent-->', escapeHtml(described))
    .replace('<!--prompt-->', escapeHtml(DEFAULT_PROMPT))
    .replace('<!--mode-->', options.session === true ? 'session' : agent.kind)
    .replace('<!--fleet-->', onFleet ? 'session' : '')
    .replace('<!--ask-->', canAsk ? 'available' : '')
    .replace('<!--recording-->', agent.kind === 'replay' ? escapeHtml(agent.transcript) : '');
  const fleet: FleetRuns | null = options.fleet === undefined || onFleet ? null : await createFleetRuns({ fleet: options.fleet, spec: (prompt) => fleetSpecFor(agent, prompt), log });
  const fleetSessions: FleetSessions | null =
    options.fleet === undefined || !onFleet || agent.kind === 'replay' ? null : await createFleetSessions({ fleet: options.fleet, spec: fleetSessionSpecFor(agent, options.sessionIdleMs), log });
  const stopping = new Set<Promise<void>>();
  let runs = 0;

  const startRun = (response: ServerResponse, prompt: WebPrompt) => {
    runs += 1;
    const run = runs;
    // Tracked from the start of its process until the process is gone, so that close() can wait.
    let settle = (): void => undefined;
    let source: Observable<CliMessage>;
    try {
      source = runOf(agent, {
        ...runOptionsFor(agent, prompt, REPLAY_SCRIPT),
        onStopped: (report) => {
          settle();
          if (report.requested) {
            const killed = report.killed.length > 0 ? `, killed ${report.killed.join(', ')}` : '';
            const outcome = report.confirmed ? 'confirmed' : `survivors: ${report.survivors.join(', ')}`;
            log(`run ${run}: stopped, the client left; pid ${String(report.pid)} gone${killed} (${outcome})`);
          }
          options.onRunStopped?.(report, run);
        },
      });
    } catch (error) {
      // What the agent cannot take (an image, say) is refused now, and the page is told in-band.
      const message = error instanceof Error ? error.message : String(error);
      log(`run ${run}: refused: ${message}`);
      serveSse(response, of(terminalFailed('setup', `the run was refused: ${message}`)));
      return;
    }
    const run$ = defer(() => {
      const startedAt = performance.now();
      const settled = new Promise<void>((resolve) => {
        settle = () => {
          stopping.delete(settled);
          resolve();
        };
      });
      stopping.add(settled);
      log(`run ${run}: ${AGENTS[agent.agent].displayName} started (${describePrompt(prompt)})`);
      return source.pipe(
        tap((message) => {
          if (!isTerminal(message)) return;
          const why = message.type === 'terminal.failed' ? ` (${message.reason}: ${message.message})` : '';
          log(`run ${run}: ${message.type}${why} after ${((performance.now() - startedAt) / 1000).toFixed(1)} s`);
        }),
      );
    });
    serveSse(response, run$);
  };

  // POST /attachments: an image for the next run (its id), checked now; a replay takes none.
  const attach = (store: Attachments, request: IncomingMessage, response: ServerResponse): void => {
    if (request.method !== 'POST') {
      request.resume();
      reply(response, 405, 'only POST\n');
    } else if (!fromThisPage(request, address().port)) {
      request.resume();
      reply(response, 403, 'images are attached only from this page\n');
    } else if (agent.kind === 'replay') {
      request.resume();
      reply(response, 400, `a replay plays a recording and reads no prompt, so it takes no image: start the server with --real (or --session)\n`);
    } else {
      readBody(request, MAX_ATTACHMENT_BODY_BYTES).then(
        (body) => {
          if (body === null) {
            reply(response, 413, `an image is at most ${String(MAX_ATTACHMENT_BODY_BYTES)} bytes of JSON (its bytes in base64)\n`);
            return;
          }
          let value: unknown;
          try {
            value = JSON.parse(body);
          } catch {
            reply(response, 400, 'the body is not JSON: { "data": base64, "mimeType": … }\n');
            return;
          }
          const image = readWebImage(value);
          if ('problem' in image) reply(response, 400, `${image.problem}\n`);
          else reply(response, 201, JSON.stringify({ id: store.put(image) }), 'application/json');
        },
        () => {
          reply(response, 400, 'the body could not be read\n');
        },
      );
    }
  };

  // The prompt of GET /run: its text, and the image it names (taken: used once); or why there is none.
  const promptOf = (url: URL): WebPrompt | { readonly problem: string } => {
    const text = url.searchParams.get('prompt')?.trim() ?? '';
    if (text === '') return { problem: 'the prompt is empty' };
    const imageId = url.searchParams.get('image');
    if (imageId === null) return text;
    const image = attachments?.take(imageId);
    if (image === undefined) return { problem: 'the attached image is gone (it is kept for one run, a minute): attach it again' };
    return [text, { type: 'image', ...image }];
  };

  // Fleet mode: a new run, a reconnect (resumed), Stop (POST /cancel?run=<id>).
  const routeFleet = (fleetRuns: FleetRuns, request: IncomingMessage, response: ServerResponse, url: URL): void => {
    if (url.pathname === '/cancel') {
      const runId = url.searchParams.get('run') ?? '';
      if (request.method !== 'POST') reply(response, 405, 'only POST\n');
      else if (!fromThisPage(request, address().port)) reply(response, 403, 'runs are cancelled only from this page\n');
      else if (!isRunId(runId)) reply(response, 400, 'no run id\n');
      else {
        fleetRuns.cancel(runId, 'Stop').then(
          () => {
            reply(response, 204, '');
          },
          (error: unknown) => {
            reply(response, 503, `the cancel did not reach Redis: ${error instanceof Error ? error.message : String(error)}\n`);
          },
        );
      }
      return;
    }
    const lastEventId = request.headers['last-event-id'];
    if (request.method !== 'GET') {
      reply(response, 405, 'only GET\n');
    } else if (!fromThisPage(request, address().port)) {
      reply(response, 403, 'runs start only from this page\n');
    } else if (lastEventId !== undefined) {
      // A reconnecting EventSource: the rest of its run. An id that is not one of ours (a stream of
      // a server without a fleet) cannot be resumed: 204 tells the EventSource to stop for good.
      if (!fleetRuns.resume(response, typeof lastEventId === 'string' ? lastEventId : '')) reply(response, 204, '');
    } else {
      const prompt = promptOf(url);
      if (typeof prompt === 'object' && 'problem' in prompt) {
        reply(response, 400, `${prompt.problem}\n`);
        return;
      }
      const started = fleetRuns.start(response, prompt);
      if (!started.started) reply(response, 400, `${started.why}\n`);
    }
  };

  // Session mode: GET /session (a session's stream, opened by `open`), a command, its end.
  const routeSession = (target: Pick<WebSessions, 'post'>, open: (request: IncomingMessage, response: ServerResponse, url: URL) => void, request: IncomingMessage, response: ServerResponse, url: URL): void => {
    const [, , id = '', action, ...rest] = url.pathname.split('/');
    if (url.pathname === '/session') {
      if (request.method !== 'GET') reply(response, 405, 'only GET\n');
      else if (!fromThisPage(request, address().port)) reply(response, 403, 'sessions start only from this page\n');
      else open(request, response, url);
    } else if (id === '' || rest.length > 0 || (action !== undefined && action !== 'end')) {
      reply(response, 404, 'not found\n');
    } else if (request.method !== 'POST') {
      reply(response, 405, 'only POST\n');
    } else if (!fromThisPage(request, address().port)) {
      reply(response, 403, 'sessions are driven only from this page\n');
    } else {
      target.post(request, response, id, action === 'end' ? 'end' : 'command');
    }
  };

  // A new session here: one agent process for the stream's life.
  const openLocalSession = (webSessions: WebSessions, request: IncomingMessage, response: ServerResponse, url: URL): void => {
    // A reconnecting EventSource: its session ended with the stream that dropped.
    if (request.headers['last-event-id'] !== undefined) {
      reply(response, 204, '');
      return;
    }
    const permission = url.searchParams.get('permission');
    if (permission !== null && permission !== 'ask') reply(response, 400, 'permission is ask, or none\n');
    else if (permission === 'ask' && !canAsk) reply(response, 400, askRefusal(agent));
    else webSessions.open(response, { ask: permission === 'ask' });
  };

  // A fleet session's stream: a new conversation, one again from its start (`?id=`), or resumed (Last-Event-ID).
  const openFleetSession = (conversations: FleetSessions, request: IncomingMessage, response: ServerResponse, url: URL): void => {
    const lastEventId = request.headers['last-event-id'];
    conversations.open(response, url.searchParams.get('id'), typeof lastEventId === 'string' ? lastEventId : null);
  };

  const route = (request: IncomingMessage, response: ServerResponse): void => {
    const url = new URL(request.url ?? '/', `http://${HOST}`);
    if (fleetSessions !== null && (url.pathname === '/session' || url.pathname.startsWith('/session/'))) {
      const open = (...args: [IncomingMessage, ServerResponse, URL]): void => {
        openFleetSession(fleetSessions, ...args);
      };
      routeSession(fleetSessions, open, request, response, url);
    } else if (sessions !== null && (url.pathname === '/session' || url.pathname.startsWith('/session/'))) {
      const open = (...args: [IncomingMessage, ServerResponse, URL]): void => {
        openLocalSession(sessions, ...args);
      };
      routeSession(sessions, open, request, response, url);
    } else if (attachments !== null && url.pathname === '/attachments') {
      attach(attachments, request, response);
    } else if (fleet !== null && (url.pathname === '/run' || url.pathname === '/cancel')) {
      routeFleet(fleet, request, response, url);
    } else if (request.method !== 'GET') {
      reply(response, 405, 'only GET\n');
    } else if (url.pathname === '/') {
      reply(response, 200, html, 'text/html; charset=utf-8');
    } else if (url.pathname === '/app.js') {
      reply(response, 200, script, 'text/javascript; charset=utf-8');
    } else if (url.pathname !== '/run') {
      reply(response, 404, 'not found\n');
    } else if (!fromThisPage(request, address().port)) {
      reply(response, 403, 'runs start only from this page\n');
    } else if (request.headers['last-event-id'] !== undefined) {
      // A reconnecting EventSource sends the last id it saw. A run cannot be resumed, and starting
      // it again would repeat its work: 204 tells the EventSource to stop for good.
      reply(response, 204, '');
    } else {
      const prompt = promptOf(url);
      if (typeof prompt === 'object' && 'problem' in prompt) reply(response, 400, `${prompt.problem}\n`);
      else startRun(response, prompt);
    }
  };
  const server = createServer(route);
  const address = () => server.address() as AddressInfo;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, HOST, () => {
      server.off('error', reject);
      resolve();
    });
  }).catch(async (error: unknown) => {
    await fleet?.close(); // its connections to Redis
    await fleetSessions?.close();
    throw error;
  });

  return {
    url: `http://${HOST}:${address().port}/`,
    close: async () => {
      const closed = new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
      });
      server.closeAllConnections(); // open streams close, and each unsubscribes its run
      await Promise.all([closed, ...stopping, fleet?.close(), sessions?.close(), fleetSessions?.close()]);
    },
  };
}

// One run of the chosen agent, from its definition in the table.
function runOf(agent: AgentChoice, options: WebRunOptions & { readonly onStopped: (report: StopReport) => void }): Observable<CliMessage> {
  return runAgent(agentByName(agent.agent), options);
}

// One session of the chosen agent (a replay: pi's, on its RPC replay agent), through its entry in the table.
function startSession(
  agent: AgentChoice,
  options: WebSessionOptions & { readonly onStopped: (report: StopReport) => void },
): (commands: Observable<SessionCommand>) => Observable<SessionMessage> {
  return agentSession(agentByName(agent.agent), options);
}

// Whether an agent's sessions take `permission` (its session schema says so; no per-agent code).
function sessionsCanAsk(name: AgentName): boolean {
  return AGENTS[name].options.session.safeParse({ permission: 'ask' }).success;
}

// Why a session that asks before its tools cannot be opened here.
function askRefusal(agent: AgentChoice): string {
  const name = AGENTS[agent.agent].displayName;
  if (agent.kind === 'replay') return `a replay cannot ask before its tools (it plays what ${name} did): start the server with --real --session\n`;
  return `${name}'s sessions do not ask before their tools here (they take no permission)\n`;
}

// The page's script with agent-rx/browser, rxjs and zod in one ES module.
async function bundlePageScript(): Promise<string> {
  const result = await build({
    entryPoints: [`${HERE}page.ts`],
    bundle: true,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles[0]?.text ?? '';
}

// Same-origin requests only: a page elsewhere must not start runs here (the browser sends
// Sec-Fetch-Site and Origin), and a Host other than ours means DNS rebinding. curl sends neither.
function fromThisPage(request: IncomingMessage, port: number): boolean {
  const { host, origin } = request.headers;
  const site = request.headers['sec-fetch-site'];
  const ours = [`${HOST}:${port}`, `localhost:${port}`];
  if (host === undefined || !ours.includes(host)) return false;
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return false;
  return origin === undefined || origin === `http://${host}`;
}

function reply(response: ServerResponse, status: number, body: string, type = 'text/plain; charset=utf-8'): void {
  response.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
  response.end(body);
}

// A Redis URL fit for a log: its password hidden.
function withoutPassword(url: string): string {
  return url.replace(/^([a-z+]+:\/\/[^:@/]*:)[^@/]*@/i, '$1***@');
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

// Run directly (`npm run web`, or `npx tsx examples/web/server.ts`): serve until Ctrl-C.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const request = parseWebArgs(process.argv.slice(2), process.env);
  if (request.kind === 'help') {
    process.stdout.write(USAGE);
  } else if (request.kind === 'usage-error') {
    process.stderr.write(`${request.message}\n\n${USAGE}`);
    process.exitCode = 2;
  } else {
    const server = await startWebServer({
      port: request.port,
      agent: request.agent,
      ...(request.fleet === undefined ? {} : { fleet: { connection: request.fleet } }),
      ...(request.session === true ? { session: true } : {}),
    });
    const where =
      request.fleet === undefined
        ? request.session === true
          ? ' · one session: one process for the conversation'
          : ''
        : ` · ${request.session === true ? 'conversations' : 'runs'} on the fleet at ${withoutPassword(request.fleet)}`;
    process.stdout.write(`agent-rx web example · ${describeAgent(request.agent)}${where}\n${server.url}\n`);
    // Ctrl-C, SIGTERM or SIGHUP: close (open streams end, which stops their runs), wait until
    // every run's processes are gone, then exit as a shell would (130, 143, 129). A second
    // signal ends at once; the library still kills what is left as the process exits.
    let stopping = false;
    const shutdown = (signal: 'SIGINT' | 'SIGTERM' | 'SIGHUP') => {
      const exit = (): never => process.exit(128 + constants.signals[signal]);
      if (stopping) exit();
      stopping = true;
      process.stdout.write(`${signal}: stopping open runs first (a second signal ends at once)\n`);
      server
        .close()
        .then(() => stopAllRuns())
        .then(exit, exit);
    };
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, shutdown);
  }
}
