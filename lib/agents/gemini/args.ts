import type { ProcessOptions } from '../../process/options.js';
import { checkBooleans, checkOptionsObject, checkPrompt, checkString, checkStringLists, checkStrings } from '../shared/options.js';
import { GEMINI_APPROVAL_MODES, type GeminiSessionOptions, type RunGeminiOptions } from './options.js';

export interface GeminiInvocation {
  readonly command: string;
  readonly args: readonly string[];
  readonly processOptions: ProcessOptions;
  readonly resuming: boolean;
  /** Gemini CLI's own retries stay as configured; `false` asks for a home overlay. */
  readonly agentRetry: boolean;
}

/**
 * Validates `runGemini` options (a programmer error throws `TypeError` now) and builds the argv of
 * `gemini --output-format stream-json`. The prompt goes to stdin, which is then closed, and `-p` is
 * not given: with a piped stdin and no `-p` the CLI runs headless on stdin's text, byte for byte,
 * while `-p "-x"` is refused as a missing value and one argument is limited to 128 KiB.
 */
export function buildGeminiInvocation(options: RunGeminiOptions): GeminiInvocation {
  checkOptionsObject('runGemini', options);
  const { prompt, session = 'new', ...rest } = options;
  checkPrompt('runGemini', prompt);
  const common = geminiCommon(rest, ['--output-format', 'stream-json']);
  const args = [...common.args];
  let resuming = false;
  if (session === 'latest') {
    args.push('--resume=latest');
    resuming = true;
  } else if (typeof session === 'object' && (session as unknown) !== null && 'resume' in session) {
    checkString('session.resume', session.resume);
    args.push(`--resume=${session.resume}`);
    resuming = true;
  } else if (typeof session === 'object' && (session as unknown) !== null && 'id' in session) {
    checkString('session.id', session.id);
    args.push(`--session-id=${session.id}`);
  } else if ((session as unknown) !== 'new') {
    throw new TypeError(`agent-rx: session must be 'new', 'latest', { id } or { resume }; got ${JSON.stringify(session)}`);
  }
  args.push(...common.extraArgs);
  return {
    command: common.command,
    args,
    processOptions: {
      ...common.processOptions,
      stdin: prompt,
      // Its retries are told only on stderr.
      stderrLines: true,
    },
    resuming,
    agentRetry: common.agentRetry,
  };
}

/**
 * The same for `geminiSession`: `gemini --acp`, the Agent Client Protocol on stdio. Options are
 * `runGemini`'s without the prompt and the session (ACP opens a new one).
 */
export function buildGeminiSessionInvocation(options: GeminiSessionOptions): GeminiInvocation {
  checkOptionsObject('geminiSession', options);
  for (const key of ['prompt', 'session'] as const) {
    if ((options as Record<string, unknown>)[key] !== undefined) {
      throw new TypeError(`agent-rx: geminiSession takes no \`${key}\`: send prompts as commands; an ACP session is always a new one`);
    }
  }
  const common = geminiCommon(options, ['--acp']);
  return { command: common.command, args: [...common.args, ...common.extraArgs], processOptions: common.processOptions, resuming: false, agentRetry: common.agentRetry };
}

/** What a run and a session share: the checks, the flags, and the process options. */
function geminiCommon(options: GeminiSessionOptions, mode: readonly string[]) {
  const {
    executable = 'gemini',
    executableArgs = [],
    model,
    approvalMode,
    skipTrust = true,
    includeDirectories = [],
    agentRetry = true,
    extraArgs = [],
    ...processOptions
  } = options;
  checkStrings({ executable, model });
  checkStringLists({ executableArgs, includeDirectories, extraArgs });
  checkBooleans({ skipTrust, agentRetry });
  // Gemini CLI splits the flag's values at commas.
  const split = includeDirectories.find((dir) => dir.includes(','));
  if (split !== undefined) throw new TypeError(`agent-rx: includeDirectories cannot hold a path with a comma (Gemini CLI splits it there); got ${JSON.stringify(split)}`);
  if (approvalMode !== undefined && !(GEMINI_APPROVAL_MODES as readonly string[]).includes(approvalMode)) {
    throw new TypeError(`agent-rx: approvalMode must be one of ${GEMINI_APPROVAL_MODES.join(', ')}; got ${JSON.stringify(approvalMode)}`);
  }
  const args = [...executableArgs, ...mode];
  if (model !== undefined) args.push(`--model=${model}`);
  if (approvalMode !== undefined) args.push(`--approval-mode=${approvalMode}`);
  if (skipTrust) args.push('--skip-trust');
  for (const dir of includeDirectories) args.push(`--include-directories=${dir}`);
  return {
    command: executable,
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
        ...processOptions.env,
      },
    },
  };
}
