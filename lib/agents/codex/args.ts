import type { ProcessOptions } from '../../process/options.js';
import { checkBooleans, checkOptionsObject, checkPrompt, checkString, checkStringLists, checkStrings } from '../shared/options.js';
import { CODEX_APPROVAL_POLICIES, CODEX_SANDBOX_MODES, type RunCodexOptions } from './options.js';
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
  const {
    prompt,
    executable,
    executableArgs = [],
    model,
    provider,
    sandbox,
    approvalPolicy,
    reasoningEffort,
    config = {},
    session = 'new',
    ephemeral = false,
    additionalDirectories = [],
    skipGitRepoCheck = true,
    agentRetry = true,
    extraArgs = [],
    ...processOptions
  } = options;
  checkPrompt('runCodex', prompt);
  checkStrings({ executable, model, provider, reasoningEffort });
  checkStringLists({ executableArgs, additionalDirectories, extraArgs });
  checkBooleans({ ephemeral, skipGitRepoCheck, agentRetry });
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

  const args = [...executableArgs, 'exec', '--experimental-json'];
  for (const entry of configEntries(config)) args.push('-c', entry);
  if (model !== undefined) args.push('--model', model);
  if (provider !== undefined) args.push(...configFlag('model_provider', provider));
  if (sandbox !== undefined) args.push('--sandbox', sandbox);
  if (approvalPolicy !== undefined) args.push(...configFlag('approval_policy', approvalPolicy));
  if (reasoningEffort !== undefined) args.push(...configFlag('model_reasoning_effort', reasoningEffort));
  if (!agentRetry && provider !== undefined) {
    args.push(...configFlag(`model_providers.${provider}.request_max_retries`, 0), ...configFlag(`model_providers.${provider}.stream_max_retries`, 0));
  }
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

  return {
    executable,
    args,
    processOptions: {
      // SIGTERM ends Codex within tens of ms, after it has ended its tool commands (they run in
      // their own sessions); it prints no terminal event then.
      interrupt: { signal: 'SIGTERM', stdin: null },
      ...processOptions,
      stdin: prompt,
    },
    resuming: session !== 'new',
  };
}

function oneOf(name: string, value: unknown, allowed: readonly string[]): void {
  if (value !== undefined && !allowed.includes(value as string)) {
    throw new TypeError(`agent-rx: ${name} must be one of ${allowed.join(', ')}; got ${JSON.stringify(value)}`);
  }
}
