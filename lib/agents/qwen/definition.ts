import type { AgentDefinition } from '../definition.js';
import { qwenTelemetry } from './telemetry.js';
import { qwenRunInvocation, qwenSessionInvocation, type QwenSetup } from './args.js';
import { qwenConversation } from './conversation.js';
import { qwenDialect } from './dialect.js';
import { QWEN_APPROVAL_MODES, QWEN_OPTIONS, type QwenRunSpecOptions, type QwenSessionOptions, type RunQwenOptions } from './options.js';
import { recognizesQwenOutput } from './recognize.js';
import { qwenSettingsOverlay } from './setup/settings-overlay.js';
import { choiceFlag, sessionFlag } from '../shared/flags.js';

/**
 * Qwen Code (`@qwen-code/qwen-code`): `qwen --output-format stream-json
 * --include-partial-messages` for runs, `qwen --acp` for sessions. Every run and session gets a
 * configuration folder of its own whose settings are the user's, made quiet.
 *
 * **Runs** ({@link runQwen}):
 * Runs Qwen Code headless as a cold Observable of `CliMessage`s: the same contract as `runPi`.
 * Each subscription starts one process; the stream ends with exactly one terminal message.
 *
 * - The prompt is one argument, `--prompt=<text>` (Qwen Code reads a prompt that starts with `-`
 *   as a flag otherwise, and prepends stdin to it: stdin is closed). One argument holds at most
 *   128 KiB: a longer prompt is refused when the run is made.
 * - Every run gets `QWEN_CODE_NO_RELAUNCH=true` (else Qwen Code restarts itself as a child
 *   process, which a signal to the parent leaves running) and `QWEN_CODE_SUPPRESS_YOLO_WARNING=1`.
 *   Without `executable`, the package's `cli.js` is run by this process's Node (from the
 *   `@qwen-code/qwen-code` this library resolves, or the one behind `qwen` on PATH): its `qwen`
 *   launcher would add a process that does not pass signals on.
 * - `interrupt` defaults to `{ signal: 'SIGTERM' }`: Qwen Code kills its tool's process group and
 *   exits 130 within tens of ms, without a `result` line.
 * - Without `approvalMode: 'yolo'` a headless run has no shell or file-writing tool (a call of one
 *   comes back as a `tool.failed`, and the run goes on).
 * - Its configuration folder (`QWEN_HOME`, in the host's temporary folder, removed when the run's
 *   processes are gone) links every entry of the real one (`$QWEN_HOME`, else `~/.qwen`:
 *   credentials, sessions, memories) and has the user's settings with no update check, usage
 *   statistics or telemetry, no background memory agent (a second model request after an answer),
 *   no follow-up suggestions and no sleep inhibitor. `agentRetry: false` also turns its HTTP
 *   client's retries off (`model.generationConfig.maxRetries: 0`); a failing model request is
 *   still tried 7 times over about 70 s, and a 429 again after a minute: bound runs with `timeoutMs`.
 *
 * How its output is normalized: `session.started` (`session.resumed`) from `system/init`;
 * `assistant` and `assistant.thought` from the stream events' deltas; `tool.call` from `tool_use`
 * blocks and `tool.completed` / `tool.failed` from `tool_result` blocks; `system/retry` lines are
 * `agent.retry`; a `result` of success is `terminal.completed` with its usage; a model API error,
 * which Qwen Code prints as answer text `[API Error: 401 …]` (left out of the answer), ends with a
 * `result` of `error_during_execution`: `terminal.failed` reason `agent-error` with `httpStatus`.
 *
 * **Sessions** ({@link qwenSession}):
 * Qwen Code as a session: `acpSession` over `qwen --acp`, with `runQwen`'s options (without the
 * prompt; the session is a new one, or `session: { resume }` loads one of `cwd` with ACP's
 * `session/load`) and `acpSession`'s client options; its model is said to take images (see
 * below). Its conversation can sleep (`idleMs`) and move to another home and working folder: it
 * is its chat file under `<QWEN_HOME>/projects/<cwd>/chats/`, loaded by a new process. Its
 * `gracePeriodMs` defaults to 10 s: once it ran a shell command, Qwen Code takes 2-3 s to exit
 * after its input ends (so does a Gemini CLI session's, which takes 1-1.5 s).
 *
 * **Permissions**: `session/request_permission` (allow once, allow always, deny). A session's
 * requests are denied unless `permission` says otherwise; in its default approval mode Qwen Code
 * asks before a shell command or a file write. A run with `permission` is a one-prompt ACP session
 * (headless, Qwen Code cannot ask); `session` must then be `'new'`.
 *
 * **Prompt parts and typed answers**:
 * - Images, natively over ACP: a session's prompt sends each as an ACP `image` block, which Qwen
 *   Code gives the model as an `image_url` data URL (the very bytes). Qwen Code guesses from the
 *   model's id whether it takes images, and for an id it does not know it puts the text
 *   `[image: image/png]` in place of the image, silently: every ACP session's settings therefore
 *   say the model takes images (`model.generationConfig.modalities.image`, the user's other
 *   modalities kept), and a model that takes none answers such a prompt with an API error (a failed
 *   turn). A run with an image is a one-prompt ACP session (`session` must be `'new'`): its
 *   stream-json input makes images text.
 * - Files: a run inlines each file's text into its `--prompt=` argument (`<file path="…">`
 *   blocks; the whole at most 128 KiB, a `TypeError` otherwise); a session sends it as an ACP
 *   embedded resource (its `file://` path and the text read when the command was made), which
 *   Qwen Code puts before the prompt as `File: <uri>` and the text.
 * - `outputSchema`: natively in a run, `--json-schema=<JSON Schema>`: Qwen Code offers the model a
 *   `structured_output` tool whose parameters are the schema, answers a call that does not satisfy
 *   it with the errors (the model tries again), and ends the run at the first valid call, whose
 *   arguments are `terminal.completed.output` (validated once more); a model that answers in prose
 *   makes Qwen Code end the run (exit 1): `terminal.failed` with reason `output-schema`, the issues
 *   and the prose. Its root must accept an object (a `TypeError` at call time otherwise). Over ACP
 *   (sessions, runs with `permission` or an image) Qwen Code refuses `--json-schema`: the schema is
 *   told in the prompt and the final text validated.
 * - A tool's diff (a file it wrote) or image, where an ACP session's `tool_call_update` carries one,
 *   is in `tool.completed.content`; a run's stream-json `tool_result` has text only.
 *
 * **MCP servers and host tools** (`mcpServers`, `tools`):
 * - Runs and sessions alike write them into their overlay's settings (`mcpServers`: stdio
 *   `{ command, args, env }`, http `{ httpUrl, headers }`), in place of the user's own servers; the
 *   headers (the host tools' token) are in that file only, readable by this user alone, never in
 *   the arguments. Not at ACP's `session/new`, which Qwen Code takes (http too) but whose servers'
 *   tools it hides behind its tool search: in the settings each server has `alwaysLoadTools: true`,
 *   so its tools are offered to the model as they are. `--allowed-mcp-server-names` for each server
 *   keeps out every other (the user's workspace's, an extension's). `QWEN_CODE_LEGACY_MCP_BLOCKING=1`
 *   makes Qwen Code connect them before the session starts: an ACP session's first prompt would go
 *   to the model before their tools are known otherwise.
 * - Qwen Code names their tools `mcp__<server>__<tool>` itself; their kind is `other`.
 * - Trust: a trusted server has `trust: true` when there is no `permission`, and Qwen Code calls
 *   its tools without asking (a session asks nothing either). An untrusted one's calls are asked
 *   in a session (`session/request_permission`, `_meta.toolName` `mcp__<server>__<tool>`, the
 *   input as its title, options allow and deny) and declined in a headless run ("non-interactive
 *   mode cannot prompt for confirmation"; the model reads that) unless `approvalMode: 'yolo'`.
 *   With `permission`, no server is trusted: every call goes through it.
 * - A call's time limit is the server's `timeout` (default 10 minutes) and `mcp.toolIdleTimeoutMs`
 *   (default 5 minutes without a response or progress), Qwen Code's settings, not set here. An
 *   abort of the turn cancels a pending call: Qwen Code aborts the MCP request (the SDK sends
 *   `notifications/cancelled`), and its `tool.failed` says `Tool call aborted`.
 */
export const qwenAgent: AgentDefinition<'qwen', RunQwenOptions, QwenSessionOptions, QwenSetup, QwenRunSpecOptions> = {
  name: 'qwen',
  displayName: 'Qwen Code',
  executable: { names: ['qwen'], script: { packageName: '@qwen-code/qwen-code', entry: 'cli.js' } },
  options: QWEN_OPTIONS,
  run: qwenRunInvocation,
  session: qwenSessionInvocation,
  dialect: qwenDialect,
  // Runs and sessions alike in their settings.
  mcp: { runs: true, sessions: true },
  telemetry: qwenTelemetry,
  flags: [
    choiceFlag('approval-mode', 'approvalMode', QWEN_APPROVAL_MODES, '<mode>', `qwen: ${QWEN_APPROVAL_MODES.join(', ')} (without yolo a run has no shell tool)`),
    sessionFlag(['new', 'latest'], 'resume', 'qwen: new, latest or a session id to resume'),
  ],
  recognizesOutput: recognizesQwenOutput,
  setup: {
    overlay: (setup) => qwenSettingsOverlay(setup),
  },
  conversation: qwenConversation,
  resumeRun: (options, sessionId) => ({ ...options, session: { resume: sessionId } }),
};
