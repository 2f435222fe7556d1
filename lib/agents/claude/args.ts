import type { ProcessRunInvocation, RunInvocation, SessionInvocation } from '../definition.js';
import { claudeDialect } from './dialect.js';
import type { ClaudeCodeSessionOptions, ClaudeOwnOptions, RunClaudeCodeOptions } from './options.js';
import type { ProcessOptions } from '../../process/options.js';
import { claudeSessionProtocol } from './session.js';
import { hasImage, runPromptText, type RunPrompt } from '../../operators/prompt-parts.js';

/**
 * A `runClaudeCode` run's invocation (options already checked): print mode with stream-json output
 * (which requires `--verbose`), stdin closed (an open pipe makes the CLI wait 3 s for input), and
 * the prompt last, after `--`, so that it is never read as a flag (its files as `<file>` blocks).
 * An `outputSchema` goes as `--json-schema`. A run with an image or a `permission` is a one-prompt
 * session instead, where a schema is told in the prompt, as for every session turn (Claude Code
 * fixes its schema for the whole process).
 */
export function claudeRunInvocation(options: RunClaudeCodeOptions, prompt: RunPrompt): RunInvocation<undefined, ClaudeCodeSessionOptions> {
  const { prompt: _prompt, outputSchema: _outputSchema, permission, permissionTimeoutMs, ...rest } = options;
  // A run that asks the host before its tools, or shows it images: a one-prompt duplex session,
  // where Claude Code's permission prompts come on stdio (with -p and no duplex input it cannot
  // ask) and images go as content blocks.
  if (permission !== undefined || hasImage(prompt.content)) {
    return { asSession: { options: { ...rest, ...(permission === undefined ? {} : { permission }), ...(permissionTimeoutMs === undefined ? {} : { permissionTimeoutMs }) }, prompt } };
  }
  // A schema goes natively: Claude Code offers the model a StructuredOutput tool, checks its input
  // against the schema and reports it as the result's `structured_output` (the run's `output`).
  const schema = prompt.output === undefined ? [] : ['--json-schema', JSON.stringify(prompt.output.jsonSchema)];
  const invocation = claudeInvocation(rest, ['-p', '--output-format', 'stream-json', '--verbose', ...schema]);
  return { ...invocation, args: [...invocation.args, '--', runPromptText(prompt, true)] };
}

/** Permission modes in which Claude Code never asks: a permission policy would never be consulted. */
const NEVER_ASKS: readonly string[] = ['bypassPermissions', 'dontAsk'];

/**
 * A `claudeCodeSession`'s invocation: no `-p`; stream-json on stdin too, every user line replayed
 * (`--replay-user-messages`: the session knows which of its lines a turn consumed). With
 * `permission`, Claude Code asks the session on stdio before a tool its rules do not settle
 * (`--permission-prompt-tool stdio`).
 */
export function claudeSessionInvocation(options: ClaudeCodeSessionOptions): SessionInvocation {
  const { permission, permissionTimeoutMs, ...rest } = options;
  if (permission !== undefined && rest.permissionMode !== undefined && NEVER_ASKS.includes(rest.permissionMode)) {
    throw new TypeError(`agent-rx: permission cannot go with permissionMode ${JSON.stringify(rest.permissionMode)}: Claude Code then never asks`);
  }
  const mode = ['--output-format', 'stream-json', '--verbose', '--input-format', 'stream-json', '--replay-user-messages'];
  const invocation = claudeInvocation(rest, permission === undefined ? mode : [...mode, '--permission-prompt-tool', 'stdio']);
  const session = rest.session;
  const resume = typeof session === 'object' ? { resume: session.resume } : {};
  return {
    ...invocation,
    protocol: claudeSessionProtocol({ newSession: !invocation.resuming, ...resume }),
    dialect: claudeDialect({ resuming: invocation.resuming }),
    ...(permission === undefined ? {} : { permission }),
    ...(permissionTimeoutMs === undefined ? {} : { permissionTimeoutMs }),
  };
}

function claudeInvocation(options: Omit<ProcessOptions, 'stdin'> & ClaudeOwnOptions, mode: readonly string[]): ProcessRunInvocation {
  const {
    executable,
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
  const args = [...executableArgs, ...mode];
  if (includePartialMessages) args.push('--include-partial-messages');
  if (model !== undefined) args.push('--model', model);
  if (session === 'continue') args.push('--continue');
  else if (typeof session === 'object') args.push('--resume', session.resume);
  if (permissionMode !== undefined) args.push('--permission-mode', permissionMode);
  if (allowedTools !== undefined && allowedTools.length > 0) args.push(`--allowedTools=${allowedTools.join(',')}`);
  if (disallowedTools !== undefined && disallowedTools.length > 0) args.push(`--disallowedTools=${disallowedTools.join(',')}`);
  if (maxTurns !== undefined) args.push('--max-turns', String(maxTurns));
  args.push(...extraArgs);
  return {
    executable,
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
