import type { RunInvocation, SessionInvocation, SessionRunInvocation } from '../definition.js';
import { acpSessionInvocation } from '../acp/session-invocation.js';
import { qwenStderrLine } from './dialect.js';
import type { QwenOwnOptions, QwenSessionOptions, RunQwenOptions } from './options.js';
import { qwenTools } from './tools.js';
import { hasImage, runPromptText, type RunPrompt } from '../../operators/prompt-parts.js';

/** What a Qwen Code run or session needs made: a configuration folder with quiet settings, without retries or with. */
export interface QwenSetup {
  /** `agentRetry: false`: its HTTP client does not retry. */
  readonly noRetries: boolean;
}

/**
 * A `runQwen` run's invocation (options already checked): `qwen --output-format stream-json
 * --include-partial-messages --prompt=<text>`, stdin closed. The prompt is one argument with
 * the flag in it: Qwen Code reads a positional prompt or `-p <text>` that starts with `-` as a
 * flag, takes no prompt after `--`, and prepends whatever stdin holds to the prompt.
 */
export function qwenRunInvocation(options: RunQwenOptions, prompt: RunPrompt): RunInvocation<QwenSetup, QwenSessionOptions> {
  if (options.permission !== undefined || hasImage(prompt.content)) return qwenSessionRun(options, prompt);
  const { prompt: _prompt, outputSchema: _outputSchema, session = 'new', permission: _permission, permissionTimeoutMs: _permissionTimeoutMs, ...rest } = options;
  const common = qwenInvocation(rest, ['--output-format', 'stream-json', '--include-partial-messages']);
  const args = [...common.args];
  if (session === 'latest') args.push('--continue');
  else if (typeof session === 'object' && 'resume' in session) args.push(`--resume=${session.resume}`);
  else if (typeof session === 'object') args.push(`--session-id=${session.id}`);
  args.push(`--prompt=${runPromptText(prompt)}`, ...common.extraArgs);
  return {
    executable: common.executable,
    args,
    processOptions: common.processOptions,
    resuming: session === 'latest' || (typeof session === 'object' && 'resume' in session),
    setup: common.setup,
  };
}

/**
 * A run that asks the host before its tools (`permission`): a one-prompt ACP session, where
 * Qwen Code sends `session/request_permission` (headless, it cannot ask). ACP opens a new session.
 */
function qwenSessionRun(options: RunQwenOptions, prompt: RunPrompt): SessionRunInvocation<QwenSessionOptions> {
  const { prompt: _prompt, outputSchema: _outputSchema, session = 'new', ...rest } = options;
  if (session !== 'new') throw new TypeError(`agent-rx: a Qwen Code run with permission or an image goes over ACP (qwen --acp), which opens a new session: session must be 'new'`);
  return { asSession: { options: rest, prompt } };
}

/** A `qwenSession`'s invocation: `qwen --acp`, the Agent Client Protocol on stdio. */
export function qwenSessionInvocation(options: QwenSessionOptions): SessionInvocation<QwenSetup> {
  const { permission, permissionTimeoutMs, handlers, mcpServers, ...rest } = options;
  const common = qwenInvocation(rest, ['--acp']);
  return acpSessionInvocation({
    name: 'Qwen Code',
    executable: common.executable,
    args: [...common.args, ...common.extraArgs],
    processOptions: common.processOptions,
    ...(permission === undefined ? {} : { permission }),
    ...(permissionTimeoutMs === undefined ? {} : { permissionTimeoutMs }),
    ...(handlers === undefined ? {} : { handlers }),
    ...(mcpServers === undefined ? {} : { mcpServers }),
    tools: qwenTools,
    stderrLine: qwenStderrLine,
    setup: common.setup,
  });
}

/** What a run and a session share: the flags, the process options and the settings overlay. */
function qwenInvocation<O extends QwenOwnOptions>(options: O, mode: readonly string[]) {
  const { executable, executableArgs = [], model, approvalMode, agentRetry = true, extraArgs = [], ...processOptions } = options;
  const args = [...executableArgs, ...mode];
  if (model !== undefined) args.push(`--model=${model}`);
  if (approvalMode !== undefined) args.push(`--approval-mode=${approvalMode}`);
  return {
    executable,
    args,
    extraArgs,
    setup: { noRetries: !agentRetry },
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
        ...(processOptions as { readonly env?: Readonly<Record<string, string | undefined>> }).env,
      },
    },
  };
}
