import type { ProcessRunInvocation, RunInvocation, SessionInvocation } from '../definition.js';
import { piDialect } from './dialect.js';
import type { PiSessionOptions, RunPiOptions } from './options.js';
import { piSessionProtocol } from './session.js';
import { hasImage, runPromptText, type RunPrompt } from '../../operators/prompt-parts.js';
import type { McpServers } from '../../tools/mcp-servers.js';

/**
 * What a pi run needs made before it starts (its overlay): a configuration without retries
 * (`agentRetry: false`), the file of its MCP servers (`mcpServers`), or both.
 */
export interface PiSetup {
  /** `agentRetry: false`; `savesSession`: pi writes its session, so the real `sessions/` must exist before it is linked. */
  readonly noRetry?: { readonly savesSession: boolean };
  /** MCP servers: what agent-rx's MCP extension reads. */
  readonly mcp?: PiMcpSetup;
}

/** What agent-rx's MCP extension for pi reads from its file: the servers, and pi's own tools to keep active (absent: pi's default ones). */
export interface PiMcpSetup {
  readonly servers: McpServers;
  readonly tools?: readonly string[];
}

/**
 * A `runPi` run's invocation (options already checked): `pi --mode json`, the prompt on stdin,
 * which is then closed: pi's parser has no `--`, so a prompt starting with `-` or `@` would be read
 * as a flag or a file, and one argument is limited to 128 KiB.
 */
export function piRunInvocation(options: RunPiOptions, prompt: RunPrompt): RunInvocation<PiSetup, PiSessionOptions> {
  const { prompt: _prompt, outputSchema: _outputSchema, permission, permissionTimeoutMs, ...rest } = options;
  // A run that asks the host before its tools, or shows it images: a one-prompt RPC session, where
  // the permission extension can ask (pi's json mode has no way to answer it) and images go as bytes.
  if (permission !== undefined || hasImage(prompt.content)) {
    return { asSession: { options: { ...rest, ...(permission === undefined ? {} : { permission }), ...(permissionTimeoutMs === undefined ? {} : { permissionTimeoutMs }) }, prompt } };
  }
  const invocation = piInvocation(rest, 'json');
  return { ...invocation, processOptions: { ...invocation.processOptions, stdin: runPromptText(prompt) } };
}

/**
 * A `piSession`'s invocation: `pi --mode rpc`, whose stdin stays open for the session's commands.
 * With `permission`, pi also loads the permission extension (`permissionExtension`, a folder), which
 * asks before each tool call; without it pi runs every tool call, as it does on its own.
 */
export function piSessionInvocation(options: PiSessionOptions, permissionExtension: string): SessionInvocation<PiSetup> {
  const { permission, permissionTimeoutMs, ...rest } = options;
  const invocation = piInvocation(rest, 'rpc', permission === undefined ? [] : ['--extension', permissionExtension]);
  return {
    ...invocation,
    protocol: piSessionProtocol({ resuming: invocation.resuming }),
    dialect: piDialect({ resuming: invocation.resuming }),
    ...(permission === undefined ? {} : { permission }),
    ...(permissionTimeoutMs === undefined ? {} : { permissionTimeoutMs }),
  };
}

/** What a run and a session share: pi's own options and the process options. */
type PiCommonOptions = Omit<RunPiOptions, 'prompt' | 'outputSchema'>;

/** pi's command line and process options; `more` goes before the caller's `extraArgs`. */
function piInvocation(
  options: PiCommonOptions,
  mode: 'json' | 'rpc',
  more: readonly string[] = [],
): Omit<ProcessRunInvocation<PiSetup>, 'processOptions'> & { readonly processOptions: PiCommonOptions } {
  const {
    executable,
    executableArgs = [],
    provider,
    model,
    thinking,
    session = 'new',
    sessionDir,
    tools,
    systemPrompt,
    appendSystemPrompt,
    extraArgs = [],
    agentRetry = true,
    mcpServers,
    ...processOptions
  } = options;
  const args = [...executableArgs, '--mode', mode];
  if (provider !== undefined) args.push('--provider', provider);
  if (model !== undefined) args.push('--model', model);
  if (thinking !== undefined) args.push('--thinking', thinking);
  if (session === 'none') args.push('--no-session');
  else if (session === 'continue') args.push('--continue');
  else if (typeof session === 'object') args.push('--session', session.id);
  if (sessionDir !== undefined) args.push('--session-dir', sessionDir);
  // Host tools are served to pi apart (an MCP server); its own tools are the names: an empty array
  // keeps none of them, host tools alone keep them all.
  const own = tools?.filter((name): name is string => typeof name === 'string');
  const kept = tools === undefined ? undefined : tools.length === 0 ? [] : own !== undefined && own.length > 0 ? own : undefined;
  const mcp = mcpServers !== undefined && Object.keys(mcpServers).length > 0 ? piMcpSetup(mcpServers, kept) : undefined;
  // With MCP servers the extension makes pi's tools active: `--tools` and `--no-tools` would hide its tools too.
  if (mcp === undefined && kept !== undefined) args.push(...(kept.length === 0 ? ['--no-tools'] : ['--tools', kept.join(',')]));
  if (systemPrompt !== undefined) args.push('--system-prompt', systemPrompt);
  if (appendSystemPrompt !== undefined) args.push('--append-system-prompt', appendSystemPrompt);
  args.push(...more, ...extraArgs);
  return {
    executable,
    args,
    processOptions: {
      // SIGTERM makes pi kill its tool commands (which run in their own session) and exit 143;
      // SIGINT would orphan them.
      interrupt: { signal: 'SIGTERM', stdin: null },
      // Lines stay bytes: the dialect's byte parser skips the message that every update repeats.
      lineEncoding: 'buffer',
      ...processOptions,
    },
    resuming: session === 'continue' || typeof session === 'object',
    ...(agentRetry && mcp === undefined
      ? {}
      : { setup: { ...(agentRetry ? {} : { noRetry: { savesSession: session !== 'none' } }), ...(mcp === undefined ? {} : { mcp }) } }),
  };
}

/** The MCP extension's file: the servers as they are said (`trust` is no concern of pi's: it never asks), and pi's own tools to keep. */
function piMcpSetup(servers: McpServers, tools: readonly string[] | undefined): PiMcpSetup {
  const untrusted = Object.fromEntries(Object.entries(servers).map(([name, { trust: _trust, ...server }]) => [name, server]));
  return { servers: untrusted, ...(tools === undefined ? {} : { tools }) };
}
