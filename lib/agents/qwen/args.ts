import type { McpServers } from '../../tools/mcp-servers.js';
import { allowedMcpServerArgs, settingsMcpServers } from '../acp/mcp-settings.js';
import type { RunInvocation, SessionInvocation, SessionRunInvocation } from '../definition.js';
import { acpSessionInvocation } from '../acp/session-invocation.js';
import { qwenStderrLine } from './dialect.js';
import { QWEN_ACP_TYPES } from './events.js';
import type { QwenOwnOptions, QwenSessionOptions, RunQwenOptions } from './options.js';
import { qwenTools } from './tools.js';
import { hasImage, runPromptText, type RunPrompt } from '../../operators/prompt-parts.js';
import type { JsonSchemaObject } from '../../messages.js';

/** What a Qwen Code run or session needs made: a configuration folder with quiet settings, without retries or with. */
export interface QwenSetup {
  /** `agentRetry: false`: its HTTP client does not retry. */
  readonly noRetries: boolean;
  /** An ACP session: its model is said to take images (its prompts may carry some). */
  readonly images?: boolean;
  /** The MCP servers in settings.json's form (each `alwaysLoadTools`), which replace the user's. */
  readonly mcpServers?: Readonly<Record<string, Record<string, unknown>>>;
}

/**
 * A `runQwen` run's invocation (options already checked): `qwen --output-format stream-json
 * --include-partial-messages --prompt=<text>`, stdin closed. The prompt is one argument with
 * the flag in it: Qwen Code reads a positional prompt or `-p <text>` that starts with `-` as a
 * flag, takes no prompt after `--`, and prepends whatever stdin holds to the prompt. Files are in
 * that text (`<file>` blocks). An `outputSchema` goes natively, `--json-schema=<JSON>`: Qwen Code
 * offers the model a `structured_output` tool whose parameters are the schema and ends the run at
 * its first valid call (`result.structured_result`); its root must accept an object (a
 * `TypeError` otherwise, for every run: over ACP the schema is told in the prompt, but a run takes
 * the same schemas whichever way it goes).
 */
export function qwenRunInvocation(options: RunQwenOptions, prompt: RunPrompt): RunInvocation<QwenSetup, QwenSessionOptions> {
  if (prompt.output !== undefined && !rootAcceptsObject(prompt.output.jsonSchema)) {
    throw new TypeError(
      "agent-rx: a Qwen Code run's outputSchema must accept an object at its root (Qwen Code takes the answer as a tool call's arguments, --json-schema): wrap the value in an object",
    );
  }
  if (options.permission !== undefined || hasImage(prompt.content)) return qwenSessionRun(options, prompt);
  const { prompt: _prompt, outputSchema: _outputSchema, session = 'new', permission: _permission, permissionTimeoutMs: _permissionTimeoutMs, ...rest } = options;
  // No permission here: a run with one is a session.
  const common = qwenInvocation(rest, ['--output-format', 'stream-json', '--include-partial-messages'], false);
  const args = [...common.args];
  if (session === 'latest') args.push('--continue');
  else if (typeof session === 'object' && 'resume' in session) args.push(`--resume=${session.resume}`);
  else if (typeof session === 'object') args.push(`--session-id=${session.id}`);
  if (prompt.output !== undefined) args.push(oneArgument('--json-schema=', JSON.stringify(prompt.output.jsonSchema), 'its outputSchema as JSON'));
  args.push(oneArgument('--prompt=', runPromptText(prompt, true), 'its prompt with the files in it'), ...common.extraArgs);
  return {
    executable: common.executable,
    args,
    processOptions: common.processOptions,
    resuming: session === 'latest' || (typeof session === 'object' && 'resume' in session),
    setup: common.setup,
  };
}

/** One argument of Qwen Code's: `flag` and `value`, refused (`TypeError`) when longer than Linux takes (`MAX_ARG_STRLEN`, 128 KiB). */
function oneArgument(flag: string, value: string, what: string): string {
  const bytes = Buffer.byteLength(flag) + Buffer.byteLength(value);
  if (bytes >= 128 * 1024) throw new TypeError(`agent-rx: a Qwen Code run gives ${what} as one argument (${flag}…), which holds at most 128 KiB; it has ${bytes} bytes`);
  return `${flag}${value}`;
}

/**
 * Whether a JSON Schema's root may accept an object, as Qwen Code checks `--json-schema` (it
 * refuses the run otherwise, exit 52): no root `$ref`, a `type` that includes `object`, a `const`
 * or `enum` with an object, and `anyOf` / `oneOf` with an object branch, `allOf` with every branch
 * one.
 */
export function rootAcceptsObject(schema: JsonSchemaObject | boolean, root = true): boolean {
  if (typeof schema === 'boolean') return schema;
  if (root && typeof schema['$ref'] === 'string') return false;
  const type = schema['type'];
  if (type !== undefined && !(Array.isArray(type) ? type : [type]).includes('object')) return false;
  const isObject = (value: unknown): boolean => typeof value === 'object' && value !== null && !Array.isArray(value);
  if ('const' in schema && !isObject(schema['const'])) return false;
  const values = schema['enum'];
  if (Array.isArray(values) && !values.some(isObject)) return false;
  const branch = (value: unknown): boolean => (typeof value === 'boolean' ? value : isObject(value) && rootAcceptsObject(value as JsonSchemaObject, false));
  for (const key of ['anyOf', 'oneOf']) {
    const branches = schema[key];
    if (Array.isArray(branches) && !branches.some(branch)) return false;
  }
  const all = schema['allOf'];
  return !Array.isArray(all) || all.every(branch);
}

/**
 * A run that asks the host before its tools (`permission`), or shows the model images: a
 * one-prompt ACP session, where Qwen Code sends `session/request_permission` (headless, it cannot
 * ask) and takes image blocks; a schema is told in the prompt there (`--json-schema` is refused
 * with `--acp`). ACP opens a new session.
 */
function qwenSessionRun(options: RunQwenOptions, prompt: RunPrompt): SessionRunInvocation<QwenSessionOptions> {
  const { prompt: _prompt, outputSchema: _outputSchema, session = 'new', ...rest } = options;
  if (session !== 'new') throw new TypeError(`agent-rx: a Qwen Code run with permission or an image goes over ACP (qwen --acp), which opens a new session: session must be 'new'`);
  return { asSession: { options: rest, prompt } };
}

/**
 * A `qwenSession`'s invocation: `qwen --acp`, the Agent Client Protocol on stdio, on a new session
 * or the one `session.resume` names (`session/load`). Its settings say
 * the model takes images (any prompt may carry one, and Qwen Code would silently put a placeholder
 * in place of an image for a model id it does not know): a model that takes none answers such a
 * prompt with an API error, a failed turn.
 */
export function qwenSessionInvocation(options: QwenSessionOptions): SessionInvocation<QwenSetup> {
  const { permission, permissionTimeoutMs, handlers, session, ...rest } = options;
  // Its MCP servers are in its settings, not given at session/new: only there are their tools declared to the model.
  const common = qwenInvocation(rest, ['--acp'], permission !== undefined);
  return acpSessionInvocation({
    name: 'Qwen Code',
    executable: common.executable,
    args: [...common.args, ...common.extraArgs],
    processOptions: common.processOptions,
    ...(permission === undefined ? {} : { permission }),
    ...(permissionTimeoutMs === undefined ? {} : { permissionTimeoutMs }),
    ...(handlers === undefined ? {} : { handlers }),
    ...(session === undefined ? {} : { resume: session.resume }),
    tools: qwenTools,
    types: QWEN_ACP_TYPES,
    stderrLine: qwenStderrLine,
    setup: { ...common.setup, images: true },
    // Qwen Code reads a prompt's trace context from keys of its own.
    traceMeta: (trace) => ({ 'qwen.telemetry.traceparent': trace.traceparent, ...(trace.tracestate === undefined ? {} : { 'qwen.telemetry.tracestate': trace.tracestate }) }),
  });
}

/**
 * What a run and a session share: the flags, the process options and the settings overlay, with
 * the MCP servers in it (`permission`: the run or session has a policy, no server is trusted).
 */
function qwenInvocation<O extends QwenOwnOptions & { readonly mcpServers?: McpServers | undefined; readonly tools?: unknown }>(options: O, mode: readonly string[], permission: boolean) {
  const { executable, executableArgs = [], model, approvalMode, agentRetry = true, extraArgs = [], mcpServers, tools: _tools, ...processOptions } = options;
  const args = [...executableArgs, ...mode];
  if (model !== undefined) args.push(`--model=${model}`);
  if (approvalMode !== undefined) args.push(`--approval-mode=${approvalMode}`);
  // Only these servers connect, whatever the settings, a workspace or an extension name.
  args.push(...allowedMcpServerArgs(mcpServers));
  const servers = mcpServers === undefined || Object.keys(mcpServers).length === 0 ? undefined : settingsMcpServers(mcpServers, { permission, alwaysLoadTools: true });
  return {
    executable,
    args,
    extraArgs,
    setup: { noRetries: !agentRetry, ...(servers === undefined ? {} : { mcpServers: servers }) },
    processOptions: {
      // SIGTERM (as SIGINT) makes Qwen Code kill its tool's process group (its own session) and
      // exit 130 within tens of ms, without a result line.
      interrupt: { signal: 'SIGTERM' as const, stdin: null },
      ...processOptions,
      env: {
        // One process: without it the CLI restarts itself as a child, which a signal to the
        // parent leaves running.
        QWEN_CODE_NO_RELAUNCH: 'true',
        // Else every headless yolo run warns on stderr that it has no sandbox.
        QWEN_CODE_SUPPRESS_YOLO_WARNING: '1',
        // Its MCP servers connect before the session is made: else an ACP session's first prompt
        // goes to the model before their tools are known (Qwen Code does not wait there).
        ...(servers === undefined ? {} : { QWEN_CODE_LEGACY_MCP_BLOCKING: '1' }),
        ...(processOptions as { readonly env?: Readonly<Record<string, string | undefined>> }).env,
      },
    },
  };
}
