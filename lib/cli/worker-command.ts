// `agent-rx worker --redis <url> [options]`: a fleet worker on this machine (agent-rx/fleet's
// serveRuns), from flags and an optional JSON file; see WORKER_USAGE.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import * as z from 'zod';
import { AGENT_NAMES, isAgentName, type AgentName } from '../agent-table.js';
import type { RunServer, ServeRunsOptions, WorkerAgents, WorkerRunEvent } from '../fleet.js';
import { redisUrlProblem } from '../fleet/connection.js';
import { McpServersSchema, type McpServers } from '../tools/mcp-servers.js';
import { directoryProblem } from './checks.js';
import { readMcpConfig } from './mcp-config.js';
import { parseDuration } from './duration.js';
import { errorText } from './error-text.js';
import { joinDashValues } from './run-command.js';
import { STOP_SIGNALS } from './stop-signals.js';
import { answeredUsage, parseArgsProblem } from './usage.js';

export const WORKER_USAGE = `usage: agent-rx worker --redis <url> [options]

Runs agents for the fleet on this machine: takes runs from the queue (agent-rx/fleet's
dispatchers put them there), runs each with agent-rx, streams its messages back through Redis.
A run is never started twice; a cancel stops its agent's whole process tree here. On SIGTERM
or SIGINT it drains: takes no new runs, lets the running ones finish for --drain, then stops
them (they end lost, which callers may retry), and exits 0; a second signal stops them at once.

options:
  --redis <url>           the fleet's Redis: redis://[user:password@]host:port[/db], rediss://…,
                          unix:///path/to/redis.sock
  --config <file>         a JSON file of these settings; flags win:
                          { "redis", "concurrency", "agents": { "pi": { "executable": "/usr/bin/pi" } },
                            "allowCwd": ["/srv/work"], "mcpServers": { "docs": { "command": "docs-mcp" } },
                            "name", "queue", "drain", "heartbeat", "heartbeatTtl" }
  --concurrency <n>       runs at once (default 1)
  --agents <list>         the agents it runs, comma-separated: ${AGENT_NAMES.join(', ')} (default pi)
  --executable <agent>=<path>
                          an agent's executable (repeatable; default: as for agent-rx run)
  --allow-cwd <dir>       a folder runs may ask to work in, with what is inside it (repeatable); a
                          run that asks for none works in the first; without any, runs work in this
                          folder and a run that asks for one is refused
  --mcp-config <file.json>
                          the MCP servers runs may name (a spec's mcpServers: ["docs"]), in
                          Claude Code's form: { "mcpServers": { "docs": { "command": "docs-mcp" } } };
                          a run that names another is refused. Default: none
  --name <name>           this worker's name, unique in the fleet (default <hostname>-<pid>); a
                          worker that starts under a name kills what a killed one of that name left
  --queue <name>          the queue (default agent-rx)
  --drain <duration>      how long running runs may go on after SIGTERM (default 30s)
  --heartbeat <duration>  how often each run's heartbeat is renewed (default 1s)
  --heartbeat-ttl <duration>
                          how long a heartbeat lives: callers end a run lost when it is gone (default 3s)
  --json                  one event per line on stdout (NDJSON)
  -h, --help              this text

durations: a number of ms (1500), or a number with a unit ms, s, m or h (500ms, 90s, 10m, 2h)
`;

/** What a worker is started with. */
export interface WorkerSettings {
  readonly redis: string;
  readonly concurrency: number;
  readonly agents: WorkerAgents;
  readonly allowCwd: readonly string[];
  /** The MCP servers its runs may name (`serveRuns({ mcpServers })`). */
  readonly mcpServers: McpServers;
  readonly name: string | undefined;
  readonly queue: string | undefined;
  readonly drainMs: number;
  readonly heartbeatMs: number | undefined;
  readonly heartbeatTtlMs: number | undefined;
  readonly json: boolean;
}

export type WorkerRequest =
  | { readonly kind: 'worker'; readonly settings: WorkerSettings }
  | { readonly kind: 'help' }
  | { readonly kind: 'usage-error'; readonly message: string };

const duration = z.union([z.number().int().nonnegative(), z.string()]);
const AgentSettingsSchema = z.strictObject({
  executable: z.string().min(1).optional(),
  executableArgs: z.array(z.string()).optional(),
  env: z.record(z.string(), z.string()).optional(),
  provider: z.string().min(1).optional(),
  model: z.string().min(1).optional(),
});
const ConfigSchema = z.strictObject({
  redis: z.string().min(1).optional(),
  concurrency: z.number().int().min(1).optional(),
  agents: z.partialRecord(z.enum(AGENT_NAMES as [AgentName, ...AgentName[]]), AgentSettingsSchema).optional(),
  allowCwd: z.array(z.string().min(1)).optional(),
  mcpServers: McpServersSchema.optional(),
  name: z.string().min(1).optional(),
  queue: z.string().min(1).optional(),
  drain: duration.optional(),
  heartbeat: duration.optional(),
  heartbeatTtl: duration.optional(),
});
type Config = z.infer<typeof ConfigSchema>;

/** Flags whose value is checked by the worker, so that `--drain -5` reaches that check (not parseArgs's "ambiguous"). */
const CHECKED_VALUES: ReadonlySet<string> = new Set(['--concurrency', '--drain', '--heartbeat', '--heartbeat-ttl']);

/** Parses `worker`'s arguments (and its `--config` file, read with `read`); never throws on bad input. */
export function parseWorkerArgs(argv: readonly string[], read: (path: string) => string = (path) => readFileSync(path, 'utf8')): WorkerRequest {
  let values;
  try {
    ({ values } = parseArgs({
      args: joinDashValues(argv, CHECKED_VALUES),
      allowPositionals: false,
      options: {
        redis: { type: 'string' },
        config: { type: 'string' },
        concurrency: { type: 'string' },
        agents: { type: 'string' },
        executable: { type: 'string', multiple: true },
        'allow-cwd': { type: 'string', multiple: true },
        'mcp-config': { type: 'string' },
        name: { type: 'string' },
        queue: { type: 'string' },
        drain: { type: 'string' },
        heartbeat: { type: 'string' },
        'heartbeat-ttl': { type: 'string' },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }));
  } catch (error) {
    return usageError(parseArgsProblem(error));
  }
  if (values.help) return { kind: 'help' };
  let config: Config = {};
  if (values.config !== undefined) {
    let text: string;
    try {
      text = read(values.config);
    } catch (error) {
      return usageError(`--config ${values.config} cannot be read: ${error instanceof Error ? error.message : String(error)}`);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      return usageError(`--config ${values.config} is not JSON: ${error instanceof Error ? error.message : String(error)}`);
    }
    const parsed = ConfigSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue === undefined || issue.path.length === 0 ? '' : `${issue.path.map(String).join('.')}: `;
      return usageError(`--config ${values.config}: ${where}${issue?.message ?? 'invalid'}`);
    }
    config = parsed.data;
  }
  const redis = values.redis ?? config.redis;
  if (redis === undefined) return usageError('--redis (or "redis" in --config) is needed');
  const redisProblem = redisUrlProblem(redis);
  if (redisProblem !== null) return usageError(values.redis === undefined ? `--config ${values.config ?? ''}: redis ${redisProblem}` : `--redis ${redisProblem}`);
  const concurrency = values.concurrency === undefined ? (config.concurrency ?? 1) : Number(values.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1) return usageError(`--concurrency must be an integer >= 1; got ${values.concurrency ?? String(concurrency)}`);

  const names = values.agents === undefined ? (config.agents === undefined ? ['pi'] : Object.keys(config.agents)) : values.agents.split(',').map((name) => name.trim()).filter((name) => name !== '');
  const unknown = names.filter((name) => !isAgentName(name));
  if (unknown.length > 0 || names.length === 0) return usageError(`--agents must list some of ${AGENT_NAMES.join(', ')}; got ${values.agents ?? ''}`);
  const agents: Partial<Record<AgentName, Record<string, unknown>>> = {};
  for (const name of names as AgentName[]) agents[name] = { ...config.agents?.[name] };
  for (const pair of values.executable ?? []) {
    const at = pair.indexOf('=');
    const name = pair.slice(0, at);
    const path = pair.slice(at + 1);
    if (at <= 0 || path === '' || !isAgentName(name)) return usageError(`--executable takes <agent>=<path>, the agent one of ${AGENT_NAMES.join(', ')}; got ${pair}`);
    const own = agents[name];
    if (own === undefined) return usageError(`--executable ${pair}: this worker does not run ${name} (see --agents)`);
    own['executable'] = path;
  }

  const allowCwd = values['allow-cwd'] ?? config.allowCwd ?? [];
  for (const folder of allowCwd) {
    const problem = directoryProblem(values['allow-cwd'] === undefined ? `--config ${values.config ?? ''}: allowCwd` : '--allow-cwd', folder);
    if (problem !== undefined) return usageError(problem);
  }

  const limits: Record<'drain' | 'heartbeat' | 'heartbeatTtl', number | undefined> = { drain: undefined, heartbeat: undefined, heartbeatTtl: undefined };
  for (const [key, flag] of [
    ['drain', 'drain'],
    ['heartbeat', 'heartbeat'],
    ['heartbeatTtl', 'heartbeat-ttl'],
  ] as const) {
    const given = values[flag] ?? config[key];
    if (given === undefined) continue;
    const ms = typeof given === 'number' ? given : parseDuration(given);
    if (ms === null || (key !== 'drain' && ms === 0)) return usageError(`--${flag} must be a duration such as 500ms, 30s or 2m; got '${String(given)}'`);
    limits[key] = ms;
  }
  const mcpServers = values['mcp-config'] === undefined ? ((config.mcpServers as McpServers | undefined) ?? {}) : readMcpConfig(values['mcp-config'], read);
  if (typeof mcpServers === 'string') return usageError(mcpServers);
  return {
    kind: 'worker',
    settings: {
      redis,
      concurrency,
      agents,
      allowCwd,
      mcpServers,
      name: values.name ?? config.name,
      queue: values.queue ?? config.queue,
      drainMs: limits.drain ?? 30_000,
      heartbeatMs: limits.heartbeat,
      heartbeatTtlMs: limits.heartbeatTtl,
      json: values.json,
    },
  };
}

function usageError(message: string): WorkerRequest {
  return { kind: 'usage-error', message };
}

/** The line a run event is shown as. */
export function describeWorkerEvent(event: WorkerRunEvent): string {
  switch (event.type) {
    case 'started':
      return `started ${event.runId} (${event.agent})`;
    case 'refused':
      return `refused ${event.runId}: ${event.why}`;
    case 'ended':
      return event.stopped === null ? `ended ${event.runId}` : `ended ${event.runId} (stopped: ${event.stopped})`;
  }
}

/** Parses `worker`'s arguments and serves until a signal; sets `process.exitCode` (2 on a usage error, 1 when it cannot start). */
export function worker(argv: readonly string[]): void {
  const request = parseWorkerArgs(argv);
  if (answeredUsage('worker', WORKER_USAGE, request)) return;
  const { settings } = request;
  const say = (line: Record<string, unknown>, text: string): void => {
    const at = new Date();
    process.stdout.write(settings.json ? `${JSON.stringify({ at: at.toISOString(), ...line })}\n` : `${at.toISOString().slice(11, 19)} ${text}\n`);
  };
  // Redis going away makes every connection report each reconnection: one line per message per 5 s.
  const reported = new Map<string, number>();
  const onError = (error: Error): void => {
    const last = reported.get(error.message);
    if (last !== undefined && performance.now() - last < 5000) return;
    reported.set(error.message, performance.now());
    process.stderr.write(`agent-rx worker: ${error.message}\n`);
  };
  void start(settings, say, onError).catch((error: unknown) => {
    process.stderr.write(`agent-rx worker: ${errorText(error)}\n`);
    process.exitCode = 1;
  });
}

async function start(settings: WorkerSettings, say: (line: Record<string, unknown>, text: string) => void, onError: (error: Error) => void): Promise<void> {
  // A missing bullmq or ioredis fails here with the fleet's own message.
  const fleet = await import('../fleet.js');
  const options: ServeRunsOptions = {
    connection: settings.redis,
    concurrency: settings.concurrency,
    agents: settings.agents,
    resolveCwd: settings.allowCwd.length === 0 ? fleet.workerFolderOnly : fleet.allowWorkingDirectories(settings.allowCwd),
    mcpServers: settings.mcpServers,
    ...(settings.name === undefined ? {} : { workerName: settings.name }),
    ...(settings.queue === undefined ? {} : { queue: settings.queue }),
    ...(settings.heartbeatMs === undefined ? {} : { heartbeatMs: settings.heartbeatMs }),
    ...(settings.heartbeatTtlMs === undefined ? {} : { heartbeatTtlMs: settings.heartbeatTtlMs }),
    onRunEvent: (event) => {
      say({ ...event }, describeWorkerEvent(event));
    },
    onError,
  };
  const server: RunServer = fleet.serveRuns(options);
  // The first signal drains, a second one stops the runs now; either way the worker exits 0 once
  // every run's processes are gone (a service manager asked it to stop, and it did).
  let signals = 0;
  for (const signal of STOP_SIGNALS) {
    process.on(signal, () => {
      signals += 1;
      const drainMs = signals === 1 ? settings.drainMs : 0;
      say({ type: 'draining', signal, drainMs, activeRuns: server.activeRuns }, `${signal}: ${signals === 1 ? `draining ${String(server.activeRuns)} run(s) for up to ${String(drainMs)} ms (a second signal stops them now)` : 'stopping the runs now'}`);
      void server.close({ drainMs }).then(() => {
        say({ type: 'closed' }, 'closed');
        process.exit(0);
      });
    });
  }
  await server.ready;
  // Closed before it was ready (Redis not reached yet): it never was.
  if (signals > 0) return;
  const agents = Object.keys(settings.agents).join(', ');
  say({ type: 'ready', worker: server.workerName, concurrency: settings.concurrency, agents: Object.keys(settings.agents) }, `worker ${server.workerName} ready: ${String(settings.concurrency)} at once, ${agents}`);
}
