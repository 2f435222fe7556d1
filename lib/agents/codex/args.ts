import { resolve } from 'node:path';
import type { ProcessOptions } from '../../process/options.js';
import type { RunInvocation, SessionInvocation } from '../definition.js';
import { codexAppServerDialect } from './app-server/dialect.js';
import { codexAppServerProtocol } from './app-server/session.js';
import type { CodexSessionOptions, RunCodexOptions } from './options.js';
import { configEntries, configFlag } from './toml.js';
import { codexMcpConfig } from './mcp.js';
import { hasImage, runPromptText, type RunPrompt } from '../../operators/prompt-parts.js';
import type { JsonSchemaObject } from '../../messages.js';

/**
 * What a `codex exec` run needs made before it starts: the file of its `outputSchema`, which
 * `--output-schema` names (made per subscription in the host's temporary folder, removed after).
 */
export interface CodexSetup {
  /** The JSON Schema Codex gives the model (`text.format`, strict `json_schema`), unchanged. */
  readonly outputSchema: JsonSchemaObject;
}

/** Codex 0.171's own provider ids: its configuration may not change them. */
const BUILT_IN_PROVIDERS: readonly string[] = ['openai', 'ollama', 'lmstudio'];

/**
 * A `runCodex` run's invocation (options already checked): `codex exec --experimental-json`, the
 * prompt on stdin, which is then closed: Codex reads stdin to its end before it starts, and a
 * prompt there can never be read as a flag. Files go in the prompt's text, as `<file>` blocks; an
 * `outputSchema` goes natively, `--output-schema <file>` (the file made by the setup, the
 * argument appended last). With `transport: 'app-server'`, `permission` or an image, the run is a
 * one-prompt session instead.
 */
export function codexRunInvocation(options: RunCodexOptions, prompt: RunPrompt): RunInvocation<CodexSetup, CodexSessionOptions> {
  if (options.permission !== undefined && options.transport === 'exec') throw new TypeError("agent-rx: a Codex run with permission goes over transport 'app-server' (exec cannot ask)");
  if (hasImage(prompt.content) && options.transport === 'exec') throw new TypeError("agent-rx: a Codex run with an image goes over transport 'app-server'");
  // A run that asks the host, or shows it images: over app-server, where Codex's approval requests
  // can be answered and images go as data.
  if (options.transport === 'app-server' || options.permission !== undefined || hasImage(prompt.content)) return { asSession: appServerRun(options, prompt) };
  const { prompt: _prompt, outputSchema: _outputSchema, session = 'new', additionalDirectories = [], skipGitRepoCheck = true, ephemeral = false, transport: _transport, permission: _permission, permissionTimeoutMs: _timeout, ...rest } = options;
  const { executable, executableArgs, flags, model, extraArgs, processOptions } = codexCommon(rest, false);
  const args = [...executableArgs, 'exec', '--experimental-json', ...flags.config, ...flags.mcp];
  if (model !== undefined) args.push('--model', model);
  args.push(...flags.provider);
  if (rest.sandbox !== undefined) args.push('--sandbox', rest.sandbox);
  if (rest.approvalPolicy !== undefined) args.push(...configFlag('approval_policy', rest.approvalPolicy));
  args.push(...flags.reasoning, ...flags.retries);
  for (const dir of additionalDirectories) args.push('--add-dir', dir);
  if (skipGitRepoCheck) args.push('--skip-git-repo-check');
  if (ephemeral) args.push('--ephemeral');
  args.push(...extraArgs);
  if (session === 'last') args.push('resume', '--last');
  else if (typeof session === 'object') args.push('resume', session.resume);
  return {
    executable,
    args,
    // The schema goes natively: the prompt carries no instruction of it.
    processOptions: { ...processOptions, stdin: runPromptText(prompt, true) },
    resuming: session !== 'new',
    ...(prompt.output === undefined ? {} : { setup: { outputSchema: prompt.output.jsonSchema } }),
  };
}

/** A run over `codex app-server`: a one-prompt session with the run's options. */
function appServerRun(options: RunCodexOptions, prompt: RunPrompt): { readonly options: CodexSessionOptions; readonly prompt: RunPrompt } {
  const { prompt: _prompt, outputSchema: _outputSchema, transport: _transport, session = 'new', additionalDirectories, skipGitRepoCheck, ...rest } = options;
  if (session === 'last') throw new TypeError("agent-rx: runCodex with transport 'app-server' cannot resume the 'last' thread; give { resume: id }");
  if (additionalDirectories !== undefined || skipGitRepoCheck !== undefined) {
    throw new TypeError("agent-rx: additionalDirectories and skipGitRepoCheck are for transport 'exec'");
  }
  return { options: { ...rest, session }, prompt };
}

/**
 * A `codexSession`'s invocation: `codex app-server`, whose stdin carries the session's JSON-RPC
 * requests. The thread's settings (`model`, `sandbox`, `approvalPolicy`) go into `thread/start`
 * (with `cwd` and `ephemeral`) or `thread/resume`; the rest is configuration (`-c`), as for
 * `runCodex`. With `permission` and no `approvalPolicy`, the policy is `untrusted`: Codex asks
 * before every command it does not know to be read-only.
 */
export function codexSessionInvocation(options: CodexSessionOptions): SessionInvocation<CodexSetup> {
  const { session = 'new', ephemeral = false, permission, permissionTimeoutMs, ...rest } = options;
  const { executable, executableArgs, flags, model, extraArgs, processOptions } = codexCommon(rest, permission !== undefined);
  const approvalPolicy = rest.approvalPolicy ?? (permission === undefined ? undefined : 'untrusted');
  const settings = {
    ...(model === undefined ? {} : { model }),
    ...(rest.sandbox === undefined ? {} : { sandbox: rest.sandbox }),
    ...(approvalPolicy === undefined ? {} : { approvalPolicy }),
  };
  const thread =
    typeof session === 'object'
      ? { resume: session.resume, settings }
      : { start: { cwd: resolve(processOptions.cwd ?? process.cwd()), ephemeral, ...settings } };
  const config = [...flags.config, ...flags.mcp, ...flags.provider, ...flags.reasoning, ...flags.retries];
  return {
    executable,
    args: [...executableArgs, 'app-server', ...config, ...extraArgs],
    processOptions,
    resuming: typeof session === 'object',
    protocol: codexAppServerProtocol({ thread }),
    dialect: codexAppServerDialect(),
    ...(permission === undefined ? {} : { permission }),
    ...(permissionTimeoutMs === undefined ? {} : { permissionTimeoutMs }),
  };
}

interface CodexCommon {
  readonly executable: string | undefined;
  readonly executableArgs: readonly string[];
  readonly flags: { readonly config: readonly string[]; readonly mcp: readonly string[]; readonly provider: readonly string[]; readonly reasoning: readonly string[]; readonly retries: readonly string[] };
  readonly model: string | undefined;
  readonly extraArgs: readonly string[];
  readonly processOptions: ProcessOptions;
}

/**
 * What a run and a session share: the rules across options, the configuration flags, and the
 * process options. `ask`: the MCP servers' tool calls ask first (the session has `permission`).
 */
function codexCommon(options: Omit<CodexSessionOptions, 'session' | 'ephemeral'>, ask: boolean): CodexCommon {
  const {
    executable,
    executableArgs = [],
    model,
    provider,
    sandbox: _sandbox,
    approvalPolicy: _approvalPolicy,
    reasoningEffort,
    config = {},
    agentRetry = true,
    extraArgs = [],
    mcpServers,
    tools: _tools,
    ...processOptions
  } = options;
  if (!agentRetry && (provider === undefined || BUILT_IN_PROVIDERS.includes(provider))) {
    throw new TypeError(
      `agent-rx: agentRetry: false needs \`provider\`, the id of a custom model provider: Codex refuses to change the retries of its built-in providers (${BUILT_IN_PROVIDERS.join(', ')})`,
    );
  }
  if (!agentRetry && provider !== undefined && !/^[A-Za-z0-9_-]+$/.test(provider)) {
    throw new TypeError(`agent-rx: agentRetry: false needs a provider id of letters, digits, _ and -, to name its settings; got ${JSON.stringify(provider)}`);
  }
  const mcp = codexMcpConfig(mcpServers, ask);
  const flags = {
    config: configEntries(config).flatMap((entry) => ['-c', entry]),
    mcp: mcp.args,
    provider: provider === undefined ? [] : configFlag('model_provider', provider),
    reasoning: reasoningEffort === undefined ? [] : configFlag('model_reasoning_effort', reasoningEffort),
    retries:
      agentRetry || provider === undefined
        ? []
        : [...configFlag(`model_providers.${provider}.request_max_retries`, 0), ...configFlag(`model_providers.${provider}.stream_max_retries`, 0)],
  };
  return {
    executable,
    executableArgs,
    flags,
    model,
    extraArgs,
    processOptions: {
      // SIGTERM ends Codex within tens of ms, after it has ended its tool commands (they run in
      // their own sessions); it prints no terminal event then.
      interrupt: { signal: 'SIGTERM' as const, stdin: null },
      ...processOptions,
      // The MCP servers' header values: in the environment, never in the arguments.
      ...(Object.keys(mcp.env).length === 0 ? {} : { env: { ...processOptions.env, ...mcp.env } }),
    },
  };
}
