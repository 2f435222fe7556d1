import type { ProcessOptions } from '../../process/options.js';
import { checkBooleans, checkOptionsObject, checkPrompt, checkString, checkStringLists, checkStrings } from '../shared/options.js';
import { PI_THINKING_LEVELS, type PiSessionOptions, type RunPiOptions } from './options.js';

export interface PiInvocation {
  readonly command: string;
  readonly args: readonly string[];
  readonly processOptions: ProcessOptions;
  /** The run continues an existing session. */
  readonly resuming: boolean;
  /** pi's own retries stay as configured; `false` asks for a settings overlay. */
  readonly agentRetry: boolean;
  readonly savesSession: boolean;
}

/**
 * Validates `runPi` options (a programmer error throws `TypeError` now, not at subscribe time)
 * and builds pi's argv. The prompt goes to stdin: pi's parser has no `--`, so a prompt starting
 * with `-` or `@` would be read as a flag or a file, and one argument is limited to 128 KiB.
 */
export function buildPiInvocation(options: RunPiOptions): PiInvocation {
  // Checked at run time too: JavaScript callers get the same clear TypeError.
  checkOptionsObject('runPi', options);
  const { prompt, ...rest } = options;
  checkPrompt('runPi', prompt);
  const invocation = buildPiArgs(rest, 'json');
  return { ...invocation, processOptions: { ...invocation.processOptions, stdin: prompt } };
}

/**
 * The same for `piSession`: `pi --mode rpc`, whose stdin stays open for the session's commands.
 * Options are `runPi`'s without the prompt.
 */
export function buildPiSessionInvocation(options: PiSessionOptions): PiInvocation {
  checkOptionsObject('piSession', options);
  if ((options as { prompt?: unknown }).prompt !== undefined) {
    throw new TypeError('agent-rx: piSession takes no `prompt`: send prompts as commands ({ type: "prompt", text })');
  }
  return buildPiArgs(options, 'rpc');
}

function buildPiArgs(options: PiSessionOptions, mode: 'json' | 'rpc'): PiInvocation {
  const {
    executable = 'pi',
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
  checkBooleans({ agentRetry });
  if (thinking !== undefined && !(PI_THINKING_LEVELS as readonly string[]).includes(thinking)) {
    throw new TypeError(`agent-rx: thinking must be one of ${PI_THINKING_LEVELS.join(', ')}; got ${JSON.stringify(thinking)}`);
  }
  checkStrings({ executable, provider, model, sessionDir, systemPrompt, appendSystemPrompt });
  checkStringLists({ executableArgs, extraArgs, tools });

  const args = [...executableArgs, '--mode', mode];
  if (provider !== undefined) args.push('--provider', provider);
  if (model !== undefined) args.push('--model', model);
  if (thinking !== undefined) args.push('--thinking', thinking);
  if (session === 'none') args.push('--no-session');
  else if (session === 'continue') args.push('--continue');
  else if (typeof session === 'object') {
    checkString('session.id', session.id);
    args.push('--session', session.id);
  } else if ((session as unknown) !== 'new') {
    throw new TypeError(`agent-rx: session must be 'new', 'none', 'continue' or { id }; got ${JSON.stringify(session)}`);
  }
  if (sessionDir !== undefined) args.push('--session-dir', sessionDir);
  if (tools !== undefined) args.push(...(tools.length === 0 ? ['--no-tools'] : ['--tools', tools.join(',')]));
  if (systemPrompt !== undefined) args.push('--system-prompt', systemPrompt);
  if (appendSystemPrompt !== undefined) args.push('--append-system-prompt', appendSystemPrompt);
  args.push(...extraArgs);

  return {
    command: executable,
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
    agentRetry,
    savesSession: session !== 'none',
  };
}
