import type { ProcessOptions } from '../../process/options.js';
import { checkBooleans, checkOptionsObject, checkPrompt, checkString, checkStringLists, checkStrings } from '../shared/options.js';
import { resolve } from 'node:path';
import { CODEX_APPROVAL_POLICIES, CODEX_SANDBOX_MODES, type CodexSessionOptions, type RunCodexOptions } from './options.js';
import { configEntries, configFlag } from './toml.js';

/** Codex 0.171's own provider ids: its configuration may not change them. */
const BUILT_IN_PROVIDERS: readonly string[] = ['openai', 'ollama', 'lmstudio'];

export interface CodexInvocation {
  /** The executable the caller gave; `undefined`: find it at each subscription (`findCodexExecutable`). */
  readonly executable: string | undefined;
  /** Codex's arguments, after `executableArgs`. */
  readonly args: readonly string[];
  readonly processOptions: ProcessOptions;
  readonly resuming: boolean;
}

/**
 * Validates `runCodex` options (a programmer error throws `TypeError` now) and builds the argv of
 * `codex exec --experimental-json`. The prompt goes to stdin, which is then closed: Codex reads
 * stdin to its end before it starts, and a prompt there can never be read as a flag.
 */
export function buildCodexInvocation(options: RunCodexOptions): CodexInvocation {
  checkOptionsObject('runCodex', options);
  const { prompt, session = 'new', additionalDirectories = [], skipGitRepoCheck = true, ephemeral = false, transport: _transport, ...rest } = options;
  checkPrompt('runCodex', prompt);
  checkStringLists({ additionalDirectories });
  checkBooleans({ ephemeral, skipGitRepoCheck });
  const { executable, executableArgs, flags, model, extraArgs, processOptions } = codexCommon(rest);

  const args = [...executableArgs, 'exec', '--experimental-json', ...flags.config];
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
  else if (typeof session === 'object' && (session as unknown) !== null) {
    checkString('session.resume', session.resume);
    args.push('resume', session.resume);
  } else if ((session as unknown) !== 'new') {
    throw new TypeError(`agent-rx: session must be 'new', 'last' or { resume }; got ${JSON.stringify(session)}`);
  }
  return { executable, args, processOptions: { ...processOptions, stdin: prompt }, resuming: session !== 'new' };
}

export interface CodexSessionInvocation extends Omit<CodexInvocation, 'resuming'> {
  /** What the session opens: a new thread with these `thread/start` parameters, or one to resume. */
  readonly thread: { readonly start: Readonly<Record<string, unknown>> } | { readonly resume: string };
}

/**
 * The same for `codexSession`: `codex app-server`, whose stdin carries the session's JSON-RPC
 * requests. The thread's settings (`cwd`, `model`, `sandbox`, `approvalPolicy`, `ephemeral`) go
 * into `thread/start`; the rest is configuration (`-c`), as for `runCodex`.
 */
export function buildCodexSessionInvocation(options: CodexSessionOptions): CodexSessionInvocation {
  checkOptionsObject('codexSession', options);
  if ((options as { prompt?: unknown }).prompt !== undefined) {
    throw new TypeError('agent-rx: codexSession takes no `prompt`: send prompts as commands ({ type: "prompt", text })');
  }
  const { session = 'new', ephemeral = false, ...rest } = options;
  checkBooleans({ ephemeral });
  const { executable, executableArgs, flags, model, extraArgs, processOptions } = codexCommon(rest);
  let thread: CodexSessionInvocation['thread'];
  if (typeof session === 'object' && (session as unknown) !== null) {
    checkString('session.resume', session.resume);
    thread = { resume: session.resume };
  } else if ((session as unknown) === 'new') {
    thread = {
      start: {
        cwd: resolve(processOptions.cwd ?? process.cwd()),
        ephemeral,
        ...(model === undefined ? {} : { model }),
        ...(rest.sandbox === undefined ? {} : { sandbox: rest.sandbox }),
        ...(rest.approvalPolicy === undefined ? {} : { approvalPolicy: rest.approvalPolicy }),
      },
    };
  } else {
    throw new TypeError(`agent-rx: a Codex session's session must be 'new' or { resume }; got ${JSON.stringify(session)}`);
  }
  const config = [...flags.config, ...flags.provider, ...flags.reasoning, ...flags.retries];
  return { executable, args: [...executableArgs, 'app-server', ...config, ...extraArgs], processOptions, thread };
}

/** What a run and a session share: the checks, the configuration flags, and the process options. */
function codexCommon(options: Omit<CodexSessionOptions, 'session' | 'ephemeral'>) {
  const {
    executable,
    executableArgs = [],
    model,
    provider,
    sandbox,
    approvalPolicy,
    reasoningEffort,
    config = {},
    agentRetry = true,
    extraArgs = [],
    ...processOptions
  } = options;
  checkStrings({ executable, model, provider, reasoningEffort });
  checkStringLists({ executableArgs, extraArgs });
  checkBooleans({ agentRetry });
  oneOf('sandbox', sandbox, CODEX_SANDBOX_MODES);
  oneOf('approvalPolicy', approvalPolicy, CODEX_APPROVAL_POLICIES);
  if (!agentRetry && (provider === undefined || BUILT_IN_PROVIDERS.includes(provider))) {
    throw new TypeError(
      `agent-rx: agentRetry: false needs \`provider\`, the id of a custom model provider: Codex refuses to change the retries of its built-in providers (${BUILT_IN_PROVIDERS.join(', ')})`,
    );
  }
  if (!agentRetry && provider !== undefined && !/^[A-Za-z0-9_-]+$/.test(provider)) {
    throw new TypeError(`agent-rx: agentRetry: false needs a provider id of letters, digits, _ and -, to name its settings; got ${JSON.stringify(provider)}`);
  }
  const flags = {
    config: configEntries(config).flatMap((entry) => ['-c', entry]),
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
    },
  };
}

function oneOf(name: string, value: unknown, allowed: readonly string[]): void {
  if (value !== undefined && !allowed.includes(value as string)) {
    throw new TypeError(`agent-rx: ${name} must be one of ${allowed.join(', ')}; got ${JSON.stringify(value)}`);
  }
}
