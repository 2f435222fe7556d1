import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { defer, type OperatorFunction } from 'rxjs';
import { conversationFolder, folderStore, restoreSnapshot, takeSnapshot, type ConversationOptions } from './conversation-snapshot.js';
import { passivatingSession } from './passivating-session.js';
import type { AgentDefinition, SessionInvocation } from '../agents/definition.js';
import { checkOptions } from '../agents/shared/option-schemas.js';
import type { SessionCommand, SessionMessage } from '../messages.js';
import { resolveProcessOptions } from '../process/options.js';
import { programOf } from '../agents/shared/setup/find-executable.js';
import { processSession } from './process-session.js';
import { watched } from '../sources/watch.js';
import type { HostTool } from '../tools/host-tool.js';
import { sessionWithHostTools, toolsTaken, withToolServer, type ToolOptions } from '../tools/with-host-tools.js';

/**
 * Any agent's interactive session from its definition: what `piSession`, `claudeCodeSession`,
 * `codexSession`, `geminiSession` and `qwenSession` do for theirs. An operator from a stream of commands to the
 * session's messages; each subscription starts one process (its program found at that moment when
 * the options name none), with what the agent's setup makes. Invalid options throw a `TypeError`
 * now, naming the option.
 *
 * @example
 * commands.pipe(agentSession(AGENTS.pi, { model: 'claude-sonnet-4-5' })).subscribe(render);
 */
export function agentSession<RunOptions, SessionOptions, Setup>(
  definition: AgentDefinition<string, RunOptions, SessionOptions, Setup>,
  options: SessionOptions,
): OperatorFunction<SessionCommand, SessionMessage> {
  checkOptions(`a ${definition.name} session`, definition.options.session, options ?? {});
  const { options: taken, budget } = watched(definition as AgentDefinition<string, never, never, unknown>, options, `a ${definition.name} session`);
  const session = sessionOf(definition, taken);
  return budget === undefined ? session : (commands) => commands.pipe(session, budget);
}

/** The session of options without `budget` and `telemetry`: one process, or a conversation that outlives its processes. */
function sessionOf<RunOptions, SessionOptions, Setup>(
  definition: AgentDefinition<string, RunOptions, SessionOptions, Setup>,
  options: SessionOptions,
): OperatorFunction<SessionCommand, SessionMessage> {
  const { idleMs, conversationId, store, ...processSessionOptions } = (options ?? {}) as SessionOptions & ConversationOptions;
  if (idleMs === undefined && conversationId === undefined && store === undefined) return oneProcessSession(definition, options);
  return conversationSession(definition, processSessionOptions as SessionOptions, options as ConversationOptions);
}

/**
 * A session whose conversation outlives its processes (`idleMs`, `conversationId`, `store`): one
 * process at a time, each resuming the conversation the one before saved.
 */
function conversationSession<RunOptions, SessionOptions, Setup>(
  definition: AgentDefinition<string, RunOptions, SessionOptions, Setup>,
  options: SessionOptions,
  conversation: ConversationOptions,
): OperatorFunction<SessionCommand, SessionMessage> {
  const keeping = definition.conversation;
  if (keeping === undefined) {
    throw new TypeError(`agent-rx: ${definition.displayName} sessions cannot resume a conversation in a new process: idleMs, conversationId and store are not taken`);
  }
  const { cwd, env } = options as { readonly cwd?: string; readonly env?: Readonly<Record<string, string | undefined>> };
  const place = { keeping, options, env: { HOME: homedir(), ...process.env, ...env }, cwd: resolve(cwd ?? process.cwd()) };
  // Refused now: a session that keeps no conversation (pi's `session: 'none'`), or bad options.
  conversationFolder(place);
  const first = oneProcessSession(definition, options);
  return passivatingSession({
    session: (resume) => (resume === undefined ? first : oneProcessSession(definition, keeping.resume(options, resume))),
    take: (sessionId, turns) => takeSnapshot(place, { agent: definition.name, sessionId, turns }),
    restore: async (snapshot) => {
      if (snapshot.agent !== definition.name) throw new Error(`the snapshot is of a ${snapshot.agent} conversation, not ${definition.name}`);
      await restoreSnapshot(place, snapshot);
    },
    store: conversation.store ?? folderStore(join(tmpdir(), 'agent-rx-conversations')),
    conversationId: conversation.conversationId,
    idleMs: conversation.idleMs ?? Number.POSITIVE_INFINITY,
  });
}

/** A session that is one process. */
function oneProcessSession<RunOptions, SessionOptions, Setup>(
  definition: AgentDefinition<string, RunOptions, SessionOptions, Setup>,
  options: SessionOptions,
): OperatorFunction<SessionCommand, SessionMessage> {
  const { invocation, tools } = sessionInvocationAndTools(definition, options);
  if (tools === undefined) return invocationSession(definition, invocation, trustedTools(options as ToolOptions));
  const trust = (options as { readonly permission?: unknown }).permission === undefined;
  // The session is made again at each subscription, with the server made for it.
  return sessionWithHostTools(tools, trust, (server) => {
    const served = withToolServer(options as ToolOptions, server);
    return invocationSession(definition, definition.session(served as SessionOptions), trustedTools(served));
  });
}

/** The session of an invocation. */
function invocationSession<RunOptions, SessionOptions, Setup>(
  definition: AgentDefinition<string, RunOptions, SessionOptions, Setup>,
  invocation: SessionInvocation<Setup>,
  trusted: ((tool: string) => boolean) | undefined,
): OperatorFunction<SessionCommand, SessionMessage> {
  const { args, processOptions, protocol, setup, permission, permissionTimeoutMs } = invocation;
  const dialect = invocation.dialect ?? definition.dialect({ resuming: invocation.resuming });
  const overlay = setup === undefined ? undefined : definition.setup?.overlay?.(setup);
  const spec = {
    args,
    protocol,
    dialect,
    ...(overlay === undefined ? {} : { overlay }),
    ...(permission === undefined ? {} : { permission }),
    ...(permissionTimeoutMs === undefined ? {} : { permissionTimeoutMs }),
    ...(trusted === undefined ? {} : { trusted }),
  };
  const named = invocation.executable;
  // Every option is checked now, whichever program is found later.
  if (named !== undefined) return processSession({ ...spec, command: named, processOptions });
  resolveProcessOptions(definition.executable.names[0] ?? definition.name, args, processOptions);
  return (commands) =>
    defer(() => {
      const program = programOf(definition, undefined, processOptions);
      return commands.pipe(processSession({ ...spec, args: [...program.args, ...args], command: program.command, processOptions: program.processOptions }));
    });
}

/**
 * The tools of the MCP servers `options` trust (`trust: true`), when it has no `permission`: their
 * calls (`mcp__<server>__<tool>`) are allowed by policy, whatever the agent's default.
 */
function trustedTools(options: ToolOptions): ((tool: string) => boolean) | undefined {
  if ((options as { readonly permission?: unknown }).permission !== undefined || options.mcpServers === undefined) return undefined;
  const prefixes = Object.entries(options.mcpServers)
    .filter(([, server]) => server.trust === true)
    .map(([name]) => `mcp__${name}__`);
  return prefixes.length === 0 ? undefined : (tool) => prefixes.some((prefix) => tool.startsWith(prefix));
}

/** A session's invocation from its definition, the options checked first (a `TypeError` names the option). */
export function sessionInvocation<RunOptions, SessionOptions, Setup>(
  definition: AgentDefinition<string, RunOptions, SessionOptions, Setup>,
  options: SessionOptions,
): SessionInvocation<Setup> {
  return sessionInvocationAndTools(definition, options).invocation;
}

/** A session's invocation (checked with a stand-in for the server of its host tools, if it has any) and its host tools. */
function sessionInvocationAndTools<RunOptions, SessionOptions, Setup>(
  definition: AgentDefinition<string, RunOptions, SessionOptions, Setup>,
  options: SessionOptions,
): { readonly invocation: SessionInvocation<Setup>; readonly tools: readonly HostTool<unknown>[] | undefined } {
  checkOptions(`a ${definition.name} session`, definition.options.session, options ?? {});
  const tools = toolsTaken(definition, 'sessions', (options ?? {}));
  return { invocation: definition.session(tools === undefined ? options : (withToolServer(options as ToolOptions) as SessionOptions)), tools };
}
