import { acpMcpServers } from '../../tools/mcp-servers.js';
import type { PromptResponse } from '@agentclientprotocol/sdk';
import type { Usage } from '../../messages.js';
import type { RunInvocation, SessionInvocation, SessionRunInvocation } from '../definition.js';
import { acpSessionInvocation } from '../acp/session-invocation.js';
import { field, numberOf } from '../shared/events.js';
import { usageOf } from '../shared/usage.js';
import { geminiStderrLine } from './dialect.js';
import { geminiToolNameOfCall, geminiTools } from './tools.js';
import { allowedMcpServerArgs, settingsMcpServers } from '../acp/mcp-settings.js';
import { hasImage, runPromptText, type RunPrompt } from '../../operators/prompt-parts.js';
import type { GeminiOwnOptions, GeminiSessionOptions, RunGeminiOptions } from './options.js';

/** What a Gemini CLI run needs made or done: a home without retries, the clean-up after a resumed session. */
export interface GeminiSetup {
  /** `agentRetry: false`: a home whose settings allow one attempt per request. */
  readonly noRetries: boolean;
  /** The run resumes a session: the empty recording Gemini CLI leaves beside it is removed. */
  readonly resumed: boolean;
  /** The run's MCP servers in settings.json's form, which replace the user's in its home's settings. */
  readonly mcpServers?: Readonly<Record<string, Record<string, unknown>>>;
}

/**
 * A `runGemini` run's invocation (options already checked): `gemini --output-format stream-json`,
 * headless on the prompt given on stdin, which is then closed. No `-p`: with a piped stdin and no
 * `-p` the CLI runs on stdin's text, byte for byte, while `-p "-x"` is refused as a missing value
 * and one argument is limited to 128 KiB.
 */
export function geminiRunInvocation(options: RunGeminiOptions, prompt: RunPrompt): RunInvocation<GeminiSetup, GeminiSessionOptions> {
  if (options.permission !== undefined || hasImage(prompt.content)) return geminiSessionRun(options, prompt);
  const { prompt: _prompt, outputSchema: _outputSchema, session = 'new', permission: _permission, permissionTimeoutMs: _permissionTimeoutMs, mcpServers, ...rest } = options;
  const common = geminiInvocation(rest, ['--output-format', 'stream-json']);
  const args = [...common.args, ...onlyTrustedServers(mcpServers, false)];
  // Settings are the one place a headless run takes MCP servers from (no permission here: a run with one is a session).
  const servers = mcpServers === undefined || Object.keys(mcpServers).length === 0 ? undefined : settingsMcpServers(mcpServers, { permission: false });
  if (session === 'latest') args.push('--resume=latest');
  else if (typeof session === 'object' && 'resume' in session) args.push(`--resume=${session.resume}`);
  else if (typeof session === 'object') args.push(`--session-id=${session.id}`);
  const resuming = session === 'latest' || (typeof session === 'object' && 'resume' in session);
  args.push(...common.extraArgs);
  return {
    executable: common.executable,
    args,
    // Its retries are told only on stderr.
    processOptions: { ...common.processOptions, stdin: runPromptText(prompt), stderrLines: true },
    resuming,
    ...(common.agentRetry && !resuming && servers === undefined ? {} : { setup: { noRetries: !common.agentRetry, resumed: resuming, ...(servers === undefined ? {} : { mcpServers: servers }) } }),
  };
}

/**
 * A run that asks the host before its tools (`permission`), or shows it images: a one-prompt ACP
 * session, where Gemini CLI sends `session/request_permission` (headless, it cannot ask) and takes
 * image content. ACP opens a new session.
 */
function geminiSessionRun(options: RunGeminiOptions, prompt: RunPrompt): SessionRunInvocation<GeminiSessionOptions> {
  const { prompt: _prompt, outputSchema: _outputSchema, session = 'new', ...rest } = options;
  if (session !== 'new') throw new TypeError(`agent-rx: a Gemini CLI run with permission or an image goes over ACP (gemini --acp), which opens a new session: session must be 'new'`);
  return { asSession: { options: rest, prompt } };
}

/** A `geminiSession`'s invocation: `gemini --acp`, the Agent Client Protocol on stdio. */
export function geminiSessionInvocation(options: GeminiSessionOptions): SessionInvocation<GeminiSetup> {
  const { permission, permissionTimeoutMs, handlers, mcpServers, ...rest } = options;
  const common = geminiInvocation(rest, ['--acp']);
  const servers = Object.keys(mcpServers ?? {});
  // The user's servers are left out of its home's settings; these come at session/new.
  const setup = { noRetries: !common.agentRetry, resumed: false, ...(servers.length === 0 ? {} : { mcpServers: {} }) };
  return acpSessionInvocation({
    name: 'Gemini CLI',
    executable: common.executable,
    args: [...common.args, ...onlyTrustedServers(mcpServers, permission !== undefined), ...common.extraArgs],
    processOptions: common.processOptions,
    usageOf: geminiPromptUsage,
    ...(permission === undefined ? {} : { permission }),
    ...(permissionTimeoutMs === undefined ? {} : { permissionTimeoutMs }),
    ...(handlers === undefined ? {} : { handlers }),
    ...(mcpServers === undefined ? {} : { mcpServers: acpMcpServers(mcpServers) }),
    tools: geminiTools,
    // Its calls' ids begin with the tool's name (`run_shell_command__…`, `mcp_host_lookup__…`); its updates say none.
    toolName: (id) => geminiToolNameOfCall(id, servers),
    stderrLine: geminiStderrLine,
    ...(setup.noRetries || setup.mcpServers !== undefined ? { setup } : {}),
  });
}

/**
 * `--allowed-mcp-server-names` for each server when every one is trusted and there is no
 * `permission`: Gemini CLI then connects to no other (an extension's, the system settings'), but
 * also allows every tool of an allowed server without asking, so that the flag is left out
 * otherwise (the user's settings' servers are left out of the run's home all the same).
 */
function onlyTrustedServers(servers: GeminiSessionOptions['mcpServers'], permission: boolean): readonly string[] {
  const all = Object.values(servers ?? {});
  return !permission && all.length > 0 && all.every((server) => server.trust === true) ? allowedMcpServerArgs(servers) : [];
}

/** What a run and a session share: the flags and the process options. */
function geminiInvocation<O extends GeminiOwnOptions>(options: O, mode: readonly string[]) {
  const { executable, executableArgs = [], model, approvalMode, skipTrust = true, includeDirectories = [], agentRetry = true, extraArgs = [], ...processOptions } = options;
  const args = [...executableArgs, ...mode];
  if (model !== undefined) args.push(`--model=${model}`);
  if (approvalMode !== undefined) args.push(`--approval-mode=${approvalMode}`);
  if (skipTrust) args.push('--skip-trust');
  for (const dir of includeDirectories) args.push(`--include-directories=${dir}`);
  return {
    executable,
    args,
    extraArgs,
    agentRetry,
    processOptions: {
      // SIGTERM ends Gemini CLI within tens of ms (exit 0, no result line); its shell commands run
      // in their own session and outlive it, so the tree kill after the grace period ends them.
      interrupt: { signal: 'SIGTERM' as const, stdin: null },
      ...processOptions,
      env: {
        // One process: the launcher would start a second Node and ignore the interrupt itself.
        GEMINI_CLI_NO_RELAUNCH: 'true',
        ...(processOptions as { readonly env?: Readonly<Record<string, string | undefined>> }).env,
      },
    },
  };
}

/** Gemini CLI puts a turn's token counts into its answer to a prompt: `_meta.quota.token_count`. */
function geminiPromptUsage(response: PromptResponse): Usage | undefined {
  const counts = field(field(response._meta, 'quota'), 'token_count');
  const input = numberOf(field(counts, 'input_tokens'));
  const output = numberOf(field(counts, 'output_tokens'));
  return input === undefined || output === undefined ? undefined : usageOf({ input, output });
}
