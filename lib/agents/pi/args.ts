import type { ProcessRunInvocation, RunInvocation, SessionInvocation } from '../definition.js';
import { piDialect } from './dialect.js';
import type { PiSessionOptions, RunPiOptions } from './options.js';
import { piSessionProtocol } from './session.js';
import { hasImage, runPromptText, type RunPrompt } from '../../operators/prompt-parts.js';

/** What a pi run needs made before it starts: a configuration without retries (`agentRetry: false`). */
export interface PiSetup {
  /** pi writes its session: the real `sessions/` must exist before it is linked. */
  readonly savesSession: boolean;
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
  // Host tools are served to pi apart (an extension); its own tools are the names.
  const own = tools?.filter((name): name is string => typeof name === 'string');
  if (tools !== undefined && tools.length === 0) args.push('--no-tools');
  else if (own !== undefined && own.length > 0) args.push('--tools', own.join(','));
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
    ...(agentRetry ? {} : { setup: { savesSession: session !== 'none' } }),
  };
}
