import type { ProcessRunInvocation, RunInvocation, SessionInvocation } from '../definition.js';
import { claudeDialect } from './dialect.js';
import type { ClaudeCodeSessionOptions, ClaudeOwnOptions, RunClaudeCodeOptions } from './options.js';
import type { ProcessOptions } from '../../process/options.js';
import { claudeSessionProtocol } from './session.js';
import { hasImage, runPromptText, type RunPrompt } from '../../operators/prompt-parts.js';
import type { McpServers } from '../../tools/mcp-servers.js';

/** What a Claude Code run or session needs made before it starts: its MCP servers' config file (`setup/mcp-config.ts`). */
export interface ClaudeSetup {
  /** The run's MCP servers (the host tools' server among them), written to `mcp.json`. */
  readonly mcpServers: McpServers;
}

/**
 * A `runClaudeCode` run's invocation (options already checked): print mode with stream-json output
 * (which requires `--verbose`), stdin closed (an open pipe makes the CLI wait 3 s for input), and
 * the prompt last, after `--`, so that it is never read as a flag (its files as `<file>` blocks).
 * An `outputSchema` goes as `--json-schema`. A run with an image or a `permission` is a one-prompt
 * session instead, where a schema is told in the prompt, as for every session turn (Claude Code
 * fixes its schema for the whole process).
 *
 * `mcpServers` go in a file of the run's own (the setup's overlay: `--mcp-config <file>
 * --strict-mcp-config`, appended last), so such a run gets its prompt on stdin rather than after
 * `--`; a trusted server's tools are allowed (`--allowedTools mcp__<name>`).
 */
export function claudeRunInvocation(options: RunClaudeCodeOptions, prompt: RunPrompt): RunInvocation<ClaudeSetup, ClaudeCodeSessionOptions> {
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
  const invocation = claudeInvocation(rest, ['-p', '--output-format', 'stream-json', '--verbose', ...schema], true);
  const text = runPromptText(prompt, true);
  // The overlay's arguments follow the command's: after a `--`, they would be the prompt's. With
  // stdin closed once the prompt is written, the CLI reads it at once and waits for nothing.
  if (invocation.setup !== undefined) return { ...invocation, processOptions: { ...invocation.processOptions, stdin: text } };
  return { ...invocation, args: [...invocation.args, '--', text] };
}

/** Permission modes in which Claude Code never asks: a permission policy would never be consulted. */
const NEVER_ASKS: readonly string[] = ['bypassPermissions', 'dontAsk'];

/**
 * A `claudeCodeSession`'s invocation: no `-p`; stream-json on stdin too, every user line replayed
 * (`--replay-user-messages`: the session knows which of its lines a turn consumed). With
 * `permission`, Claude Code asks the session on stdio before a tool its rules do not settle
 * (`--permission-prompt-tool stdio`), `mcp__<server>__<tool>` for an MCP server's tools; without
 * it, a trusted server's tools are allowed (`--allowedTools mcp__<name>`). `mcpServers` go in a
 * file of the session's own (`--mcp-config <file> --strict-mcp-config`, the setup's overlay).
 */
export function claudeSessionInvocation(options: ClaudeCodeSessionOptions): SessionInvocation<ClaudeSetup> {
  const { permission, permissionTimeoutMs, ...rest } = options;
  if (permission !== undefined && rest.permissionMode !== undefined && NEVER_ASKS.includes(rest.permissionMode)) {
    throw new TypeError(`agent-rx: permission cannot go with permissionMode ${JSON.stringify(rest.permissionMode)}: Claude Code then never asks`);
  }
  const mode = ['--output-format', 'stream-json', '--verbose', '--input-format', 'stream-json', '--replay-user-messages'];
  const invocation = claudeInvocation(rest, permission === undefined ? mode : [...mode, '--permission-prompt-tool', 'stdio'], permission === undefined);
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

/**
 * The process of a run or session. `trusting`: nothing asks the host (no `permission`), so the tools
 * of a server with `trust: true` are allowed without asking (Claude Code takes a server's name,
 * `mcp__<name>`, as a rule for all its tools).
 */
function claudeInvocation(
  options: Omit<ProcessOptions, 'stdin'> & ClaudeOwnOptions & { readonly mcpServers?: McpServers | undefined; readonly tools?: unknown },
  mode: readonly string[],
  trusting: boolean,
): ProcessRunInvocation<ClaudeSetup> {
  const {
    mcpServers,
    tools: _tools,
    executable,
    executableArgs = [],
    model,
    session = 'new',
    permissionMode,
    allowedTools,
    disallowedTools,
    maxTurns,
    maxBudgetUsd,
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
  const trusted = trusting && mcpServers !== undefined ? Object.entries(mcpServers).filter(([, server]) => server.trust === true).map(([name]) => `mcp__${name}`) : [];
  const allowed = [...(allowedTools ?? []), ...trusted];
  if (allowed.length > 0) args.push(`--allowedTools=${allowed.join(',')}`);
  if (disallowedTools !== undefined && disallowedTools.length > 0) args.push(`--disallowedTools=${disallowedTools.join(',')}`);
  if (maxTurns !== undefined) args.push('--max-turns', String(maxTurns));
  if (maxBudgetUsd !== undefined) args.push('--max-budget-usd', String(maxBudgetUsd));
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
    ...(mcpServers === undefined ? {} : { setup: { mcpServers } }),
  };
}
