// Host tools around a run or a session of any agent: a tool server made at each subscription, the
// agent given it as one more MCP server, its calls ended with their turn, the server stopped with
// the run.
import { defer, finalize, Observable, of, Subject, switchMap, tap, type OperatorFunction } from 'rxjs';
import type { CliMessage, SessionCommand, SessionMessage } from '../messages.js';
import { errorMessage } from '../process/error-message.js';
import { terminalFailed } from '../terminal-failed.js';
import { isHostTool, type HostTool } from './host-tool.js';
import { startHostToolServer, type HostToolServer } from './host-tool-server.js';
import { HOST_TOOLS_SERVER, type McpHttpServer, type McpServers } from './mcp-servers.js';

/** The options of a run or session that give its agent tools: every agent's runs and sessions take them. */
export interface ToolOptions {
  /**
   * MCP servers for the agent, by name: started by the agent (`{ command, args?, env? }`) or reached
   * over HTTP (`{ type: 'http', url, headers? }`). Each agent is given them its own way (the
   * README's table says which); `trust: true` lets it call a server's tools without asking when
   * there is no `permission`. Only these servers: the agent's own configured servers are left out
   * where the agent allows it.
   */
  readonly mcpServers?: McpServers | undefined;
  /**
   * Tools of the host's, made with `tool(...)`: served to the agent by a local MCP server made for
   * each subscription (named `host`, so the agent's calls are `mcp__host__<name>`), reachable only
   * with a token the agent is given, stopped with the run. Without a `permission` the agent may
   * call them without asking; with one, each call goes through it like any tool's.
   */
  readonly tools?: readonly HostTool[] | undefined;
}

/** The server a run's options name before it is made: the options are checked with it at call time. */
const STAND_IN: McpHttpServer = { type: 'http', url: 'http://127.0.0.1:9/mcp', headers: { Authorization: 'Bearer stand-in' } };

/** The host tools of `options` (none: `undefined`); a `TypeError` for two of a name, or an `mcpServers` entry named like their server. */
export function hostToolsOf(options: ToolOptions): readonly HostTool<unknown>[] | undefined {
  // pi's `tools` also names its own tools: those are its options'.
  const tools = (options.tools as readonly unknown[] | undefined)?.filter(isHostTool);
  if (tools === undefined || tools.length === 0) return undefined;
  const names = new Set<string>();
  for (const hostTool of tools) {
    if (names.has(hostTool.name)) throw new TypeError(`agent-rx: tools has two tools named ${hostTool.name}`);
    names.add(hostTool.name);
  }
  if (options.mcpServers !== undefined && HOST_TOOLS_SERVER in options.mcpServers) {
    throw new TypeError(`agent-rx: mcpServers must not name a server "${HOST_TOOLS_SERVER}": that is the server of tools`);
  }
  return tools;
}

/** What {@link toolsTaken} reads of an agent's definition. */
export interface McpTaking {
  readonly displayName: string;
  readonly mcp?: { readonly runs: boolean; readonly sessions: boolean } | undefined;
}

/**
 * The host tools of a run's or session's options, or `undefined`; a `TypeError` when the options
 * give the agent MCP servers or tools and its `what` (runs, sessions) cannot take them.
 */
export function toolsTaken(agent: McpTaking, what: 'runs' | 'sessions', options: ToolOptions): readonly HostTool<unknown>[] | undefined {
  const tools = hostToolsOf(options);
  const servers = options.mcpServers === undefined ? 0 : Object.keys(options.mcpServers).length;
  if ((tools !== undefined || servers > 0) && agent.mcp?.[what] !== true) {
    throw new TypeError(`agent-rx: ${agent.displayName} ${what} cannot take ${tools === undefined ? 'MCP servers (mcpServers)' : 'host tools (tools)'}`);
  }
  return tools;
}

/** `options` with `tools` made into one more MCP server (`server`, or a stand-in for the call-time checks). */
export function withToolServer<Options extends ToolOptions>(options: Options, server: McpHttpServer = STAND_IN): Options {
  const { tools, ...rest } = options;
  const own = (tools as readonly unknown[] | undefined)?.filter((entry) => !isHostTool(entry)) ?? [];
  const trusted = { ...server, trust: (options as { readonly permission?: unknown }).permission === undefined };
  return { ...rest, ...(own.length > 0 ? { tools: own } : {}), mcpServers: { ...options.mcpServers, [HOST_TOOLS_SERVER]: trusted } } as unknown as Options;
}

/** The server's start, as a value: the server, or why it could not start. */
function started(tools: readonly HostTool<unknown>[], trust: boolean): Observable<{ readonly server: HostToolServer } | { readonly problem: string }> {
  return defer(async () => {
    try {
      return { server: await startHostToolServer(tools, { trust }) };
    } catch (error) {
      return { problem: `the host tools could not be served: ${errorMessage(error)}` };
    }
  });
}

/**
 * A run with host tools: at each subscription, their server is started, then the run made with it
 * (`makeRun`); the server stops when the run ends or is unsubscribed (pending calls end, their
 * signals fire). A server that cannot start is a `setup` failure.
 */
export function runWithHostTools(tools: readonly HostTool<unknown>[], trust: boolean, makeRun: (server: McpHttpServer) => Observable<CliMessage>): Observable<CliMessage> {
  return started(tools, trust).pipe(
    switchMap((start) => {
      if ('problem' in start) return of(terminalFailed('setup', start.problem));
      const { server } = start;
      return makeRun(server.config).pipe(
        tap((message) => {
          if (message.type === 'terminal.completed' || message.type === 'terminal.failed') void server.close();
        }),
        finalize(() => void server.close()),
      );
    }),
  );
}

/**
 * A session with host tools: as {@link runWithHostTools}, with the commands that come while the
 * server starts held and then given in order. A call still pending when its turn ends, or when an
 * `abort` command comes, is ended (its signal fires; the agent reads a tool error).
 */
export function sessionWithHostTools(
  tools: readonly HostTool<unknown>[],
  trust: boolean,
  makeSession: (server: McpHttpServer) => OperatorFunction<SessionCommand, SessionMessage>,
): OperatorFunction<SessionCommand, SessionMessage> {
  return (commands) =>
    defer(() => {
      const held = holdUntilSubscribed(commands);
      return started(tools, trust).pipe(
        switchMap((start) => {
          if ('problem' in start) return of<SessionMessage>(terminalFailed('setup', start.problem));
          const { server } = start;
          const given = held.commands.pipe(
            tap((command) => {
              if (command.type === 'abort') server.endCalls('the turn was aborted');
            }),
          );
          return given.pipe(
            makeSession(server.config),
            tap((message) => {
              if (message.type === 'turn.completed' || message.type === 'turn.failed') server.endCalls('the turn ended');
              if (message.type === 'terminal.completed' || message.type === 'terminal.failed') void server.close();
            }),
            finalize(() => void server.close()),
          );
        }),
        finalize(() => { held.release(); }),
      );
    });
}

/**
 * Subscribes to `source` now and keeps what it gives until `commands` is subscribed (once), which
 * gives the kept values first, then the rest as they come.
 */
function holdUntilSubscribed<T>(source: Observable<T>): { readonly commands: Observable<T>; release(): void } {
  const kept: T[] = [];
  let end: { readonly error: unknown } | 'complete' | undefined;
  let live: Subject<T> | undefined;
  const subscription = source.subscribe({
    next: (value) => {
      if (live === undefined) kept.push(value);
      else live.next(value);
    },
    error: (error: unknown) => {
      if (live === undefined) end = { error };
      else live.error(error);
    },
    complete: () => {
      if (live === undefined) end = 'complete';
      else live.complete();
    },
  });
  return {
    commands: new Observable<T>((subscriber) => {
      for (const value of kept.splice(0)) subscriber.next(value);
      if (end === 'complete') subscriber.complete();
      else if (end !== undefined) subscriber.error(end.error);
      if (end !== undefined) return undefined;
      live = new Subject<T>();
      return live.subscribe(subscriber);
    }),
    release: () => { subscription.unsubscribe(); },
  };
}
