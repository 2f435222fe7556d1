import type { ProcessOptions } from '../../process/options.js';
import { checkBooleans, checkOptionsObject, checkPrompt, checkString, checkStringLists, checkStrings } from '../shared/options.js';
import type { ClaudeCodeSessionOptions, RunClaudeCodeOptions } from './options.js';

export interface ClaudeInvocation {
  readonly command: string;
  readonly args: readonly string[];
  readonly processOptions: ProcessOptions;
  readonly resuming: boolean;
}

/**
 * Validates `runClaudeCode` options (a programmer error throws `TypeError` now) and builds the
 * argv: print mode with stream-json output (which requires `--verbose`), stdin closed (an open pipe
 * makes the CLI wait 3 s for input), and the prompt last, after `--`.
 */
export function buildClaudeInvocation(options: RunClaudeCodeOptions): ClaudeInvocation {
  checkOptionsObject('runClaudeCode', options);
  const { prompt, ...rest } = options;
  checkPrompt('runClaudeCode', prompt);
  const invocation = buildClaudeArgs(rest, ['-p', '--output-format', 'stream-json', '--verbose']);
  return { ...invocation, args: [...invocation.args, '--', prompt] };
}

/**
 * The same for `claudeCodeSession`: no `-p`; stream-json on stdin too, every user line replayed
 * (`--replay-user-messages`: the session knows which of its lines a turn consumed). Options are
 * `runClaudeCode`'s without the prompt.
 */
export function buildClaudeSessionInvocation(options: ClaudeCodeSessionOptions): ClaudeInvocation {
  checkOptionsObject('claudeCodeSession', options);
  if ((options as { prompt?: unknown }).prompt !== undefined) {
    throw new TypeError('agent-rx: claudeCodeSession takes no `prompt`: send prompts as commands ({ type: "prompt", text })');
  }
  return buildClaudeArgs(options, ['--output-format', 'stream-json', '--verbose', '--input-format', 'stream-json', '--replay-user-messages']);
}

function buildClaudeArgs(options: ClaudeCodeSessionOptions, mode: readonly string[]): ClaudeInvocation {
  const {
    executable = 'claude',
    executableArgs = [],
    model,
    session = 'new',
    permissionMode,
    allowedTools,
    disallowedTools,
    maxTurns,
    includePartialMessages = true,
    agentRetry = true,
    extraArgs = [],
    ...processOptions
  } = options;
  checkStrings({ executable, model, permissionMode });
  checkStringLists({ executableArgs, extraArgs, allowedTools, disallowedTools });
  if (maxTurns !== undefined && (!Number.isInteger(maxTurns) || maxTurns < 1)) throw new TypeError('agent-rx: maxTurns must be an integer >= 1');
  checkBooleans({ includePartialMessages, agentRetry });

  const args = [...executableArgs, ...mode];
  if (includePartialMessages) args.push('--include-partial-messages');
  if (model !== undefined) args.push('--model', model);
  if (session === 'continue') args.push('--continue');
  else if (typeof session === 'object') {
    checkString('session.resume', session.resume);
    args.push('--resume', session.resume);
  } else if ((session as unknown) !== 'new') {
    throw new TypeError(`agent-rx: session must be 'new', 'continue' or { resume }; got ${JSON.stringify(session)}`);
  }
  if (permissionMode !== undefined) args.push('--permission-mode', permissionMode);
  if (allowedTools !== undefined && allowedTools.length > 0) args.push(`--allowedTools=${allowedTools.join(',')}`);
  if (disallowedTools !== undefined && disallowedTools.length > 0) args.push(`--disallowedTools=${disallowedTools.join(',')}`);
  if (maxTurns !== undefined) args.push('--max-turns', String(maxTurns));
  args.push(...extraArgs);

  return {
    command: executable,
    args,
    processOptions: {
      // SIGINT makes Claude Code kill its tool's process group and end the run itself.
      interrupt: { signal: 'SIGINT', stdin: null },
      ...processOptions,
      ...(agentRetry ? {} : { env: { ...processOptions.env, CLAUDE_CODE_MAX_RETRIES: '0' } }),
    },
    resuming: session !== 'new',
  };
}
