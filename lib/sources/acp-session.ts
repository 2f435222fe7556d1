import type { OperatorFunction } from 'rxjs';
import { resolve } from 'node:path';
import { acpClientProtocol, type AcpClientHandlers, type PermissionPolicy } from '../agents/acp/client.js';
import { acpDialect } from '../agents/acp/dialect.js';
import { buildGeminiSessionInvocation } from '../agents/gemini/args.js';
import { geminiStderrLine } from '../agents/gemini/dialect.js';
import type { GeminiSessionOptions } from '../agents/gemini/options.js';
import { geminiNoRetryOverlay } from '../agents/gemini/settings-overlay.js';
import { checkOptionsObject, checkString, checkStringLists } from '../agents/shared/options.js';
import type { SessionCommand, SessionMessage, Usage } from '../messages.js';
import type { ProcessOptions } from '../process/options.js';
import { runSession } from '../sessions/run-session.js';
import type { McpServer, PromptResponse } from '@agentclientprotocol/sdk';
import { usageOf as usageFrom } from '../agents/shared/usage.js';
import { field, numberOf } from '../agents/shared/events.js';

/** What an ACP client session lets the caller decide: the agent's permission requests, and the client's file system. */
export interface AcpClientOptions {
  /** Decides the agent's `session/request_permission` requests. Default: deny, said with an `agent.warning`. */
  readonly permission?: PermissionPolicy;
  /** `fs/read_text_file` and `fs/write_text_file` for the agent; without them it has no client file system. */
  readonly handlers?: AcpClientHandlers;
  /** MCP servers for the session (`session/new`). Default none. */
  readonly mcpServers?: readonly McpServer[];
}

/** Options of `acpSession`: the agent's command, the client's choices, and the process options. */
export interface AcpSessionOptions extends AcpClientOptions, Omit<ProcessOptions, 'stdin'> {
  /** The agent's executable, run without a shell. */
  readonly command: string;
  /** Its arguments, e.g. `['--acp']` for Gemini CLI. Default none. */
  readonly args?: readonly string[];
  /** The agent's name in diagnostics. Default `ACP agent`. */
  readonly name?: string;
}

/**
 * Any Agent Client Protocol agent (one that speaks ACP on stdio, such as `gemini --acp`) as a
 * session: the same contract as `piSession`. A prompt is `session/prompt`, an abort
 * `session/cancel`; the agent's updates become text, thinking and tool messages; the answer to the
 * prompt ends the turn (`cancelled`: aborted). ACP has no steer: a steer cancels the running prompt
 * and becomes the next prompt of the same turn. The wire is the ACP SDK's.
 *
 * @example
 * commands.pipe(acpSession({ command: 'my-acp-agent', args: ['--stdio'], cwd: '/path/to/project' })).subscribe(render);
 */
export function acpSession(options: AcpSessionOptions): OperatorFunction<SessionCommand, SessionMessage> {
  checkOptionsObject('acpSession', options);
  const { command, args = [], name = 'ACP agent', permission, handlers, mcpServers, ...processOptions } = options;
  checkString('command', command);
  checkStringLists({ args });
  return acpOver(command, args, name, processOptions, { ...(permission === undefined ? {} : { permission }), ...(handlers === undefined ? {} : { handlers }), ...(mcpServers === undefined ? {} : { mcpServers }) });
}

/**
 * Gemini CLI as a session: `acpSession` over `gemini --acp`, with `runGemini`'s options (without
 * the prompt and the session: ACP opens a new one). With `agentRetry: false` the session gets the
 * home overlay without retries, as a run does.
 *
 * @example
 * commands.pipe(geminiSession({ approvalMode: 'yolo' })).subscribe(render);
 */
export function geminiSession(options: GeminiSessionOptions & AcpClientOptions = {}): OperatorFunction<SessionCommand, SessionMessage> {
  const { permission, handlers, mcpServers, ...gemini } = options;
  const invocation = buildGeminiSessionInvocation(gemini);
  return acpOver(
    invocation.command,
    invocation.args,
    'Gemini CLI',
    invocation.processOptions,
    { ...(permission === undefined ? {} : { permission }), ...(handlers === undefined ? {} : { handlers }), ...(mcpServers === undefined ? {} : { mcpServers }) },
    invocation.agentRetry,
    geminiPromptUsage,
    geminiStderrLine,
  );
}

function acpOver(
  command: string,
  args: readonly string[],
  name: string,
  processOptions: Omit<ProcessOptions, 'stdin'>,
  client: AcpClientOptions,
  agentRetry = true,
  usageOf?: (response: PromptResponse) => Usage | undefined,
  stderrLine?: (stderr: string) => string | undefined,
): OperatorFunction<SessionCommand, SessionMessage> {
  const dialect = acpDialect(name);
  return runSession({
    command,
    args,
    // ACP has no abort of its own process: SIGTERM, then the tree kill after the grace period.
    processOptions: { interrupt: { signal: 'SIGTERM', stdin: null }, ...processOptions },
    // The agent's own reading of its stderr, where it has one (the generic one otherwise).
    dialect: stderrLine === undefined ? dialect : { ...dialect, stderrLine },
    protocol: acpClientProtocol({ name, cwd: resolve(processOptions.cwd ?? process.cwd()), ...client, ...(usageOf === undefined ? {} : { usageOf }) }),
    ...(agentRetry ? {} : { overlay: geminiNoRetryOverlay() }),
  });
}

/** Gemini CLI puts a turn's token counts into its answer: `_meta.quota.token_count`. */
function geminiPromptUsage(response: PromptResponse): Usage | undefined {
  const counts = field(field(response._meta, 'quota'), 'token_count');
  const input = numberOf(field(counts, 'input_tokens'));
  const output = numberOf(field(counts, 'output_tokens'));
  return input === undefined || output === undefined ? undefined : usageFrom({ input, output });
}
