import type { AgentDefinition } from '../definition.js';
import { geminiTelemetry } from './telemetry.js';
import { geminiRunInvocation, geminiSessionInvocation, type GeminiSetup } from './args.js';
import { geminiDialect } from './dialect.js';
import { GEMINI_APPROVAL_MODES, GEMINI_OPTIONS, type GeminiRunSpecOptions, type GeminiSessionOptions, type RunGeminiOptions } from './options.js';
import { recognizesGeminiOutput } from './recognize.js';
import { removingResumeLeftovers } from './setup/resume-leftovers.js';
import { geminiHome, geminiSettingsOverlay } from './setup/settings-overlay.js';
import { choiceFlag, sessionFlag } from '../shared/flags.js';

/**
 * Gemini CLI (`@google/gemini-cli`): `gemini --output-format stream-json` for runs, `gemini --acp`
 * for sessions. `agentRetry: false` gives a run a home whose settings allow one attempt; a run that
 * resumes a session removes the empty recording Gemini CLI 0.61 leaves beside it, which its own
 * session cleanup would take for a broken session and delete with the session.
 *
 * **Runs** ({@link runGemini}):
 * Runs Gemini CLI (`gemini --output-format stream-json`, headless on the prompt given on stdin) as
 * a cold Observable of `CliMessage`s: the same contract as `runPi`. Each subscription starts one
 * process; the stream ends with exactly one terminal message. Unsubscribing sends SIGTERM, and
 * SIGKILLs the whole tree after the grace period: Gemini CLI's shell commands outlive it otherwise.
 *
 * Gemini CLI's retries, which it tells only on stderr, are `agent.retry` messages. A run it ends
 * without a `result` line (a signal makes it exit 0) is a failure, never a completion.
 *
 * - The prompt is written to stdin, which is then closed; no `-p` (Gemini CLI refuses `-p "-x"` as
 *   a missing value, and an argument is limited to 128 KiB).
 * - Every run gets `GEMINI_CLI_NO_RELAUNCH=true`: Gemini CLI's launcher would start a second Node
 *   process and ignore signals itself.
 * - `interrupt` defaults to `{ signal: 'SIGTERM' }`: Gemini CLI exits 0 within tens of ms, printing
 *   nothing more; its shell commands run in their own session and outlive it: the tree kill ends them.
 * - Without `approvalMode: 'yolo'` a headless run has no shell tool at all (the model's call comes
 *   back as a `tool.failed` "not found", and the run goes on).
 * - `agentRetry: false` sets `general.maxAttempts` to 1 (its default allows 10 attempts with
 *   back-off): the run gets a home of its own (`GEMINI_CLI_HOME`) whose `.gemini` links every entry
 *   of the real one, with that one setting changed; it lives in the host's temporary folder and is
 *   removed when the run's processes are gone.
 * - The other process options are as for {@link processLines}.
 *
 * How its output is normalized: `session.started` from `init`; `assistant` from the assistant
 * `message` deltas; thinking is not printed by Gemini CLI (only counted in `totalTokens`);
 * `tool.call` / `tool.completed` / `tool.failed` from `tool_use` / `tool_result` by `tool_id` (a
 * shell command that exits non-zero is still `success` for Gemini CLI); `error` events of severity
 * `warning` are `agent.warning`; a `result` of success is `terminal.completed` with the usage of its
 * `stats`; a `result` error is `agent-error` with `httpStatus` from the API error's `code`, or from
 * the exit code (Gemini CLI exits with the HTTP status modulo 256: 429 → 173) when the text has
 * none; a cancelled `result` is `aborted`. Failures with nothing on stdout (no API key: exit 41; an
 * untrusted folder: exit 55) are `exit` failures whose message is what stderr says.
 *
 * A run that resumes a session removes the empty recording Gemini CLI 0.61 leaves beside the
 * session when it is resumed in a later minute than it began in: Gemini CLI's session cleanup
 * would otherwise delete the whole session at its next start in that folder.
 *
 * **Sessions** ({@link geminiSession}):
 * Gemini CLI as a session: `acpSession` over `gemini --acp`, with `runGemini`'s options (without
 * the prompt and the session: ACP opens a new one) and `acpSession`'s client options. With `agentRetry: false` the session gets the
 * home overlay without retries, as a run does.
 *
 * Its sessions cannot sleep (`idleMs`, `conversationId` and `store` are refused): with `--acp`,
 * Gemini CLI 0.61 resumes only through ACP's `session/load` (it reads no `--resume` there), which
 * was measured against the fake model server to fail a conversation three ways. It first opens a
 * fresh recording for the loaded id, `chats/session-<this minute>-<first 8 characters of the
 * id>.jsonl`: within the minute the session's own file is named for (a sleep or a move of less
 * than a minute) that is the session's file, whose messages it resets to the context message
 * before it reads them, so the load fails ("No previous sessions found for this project") and the
 * conversation is lost; in a later minute the load works but leaves that file beside the session,
 * which Gemini CLI's session cleanup (on by default) takes for a broken session at its next start
 * in that folder, deleting every file of the session. And it replays the history without waiting
 * for the replay to end: its answer to `session/load` came after the first replayed message, and
 * the replayed answer 1 ms after the next prompt was sent, where it would read as that turn's
 * answer. Besides, its folder of a working folder's chats (`<home>/.gemini/tmp/<name>/`) is named
 * from the folder's base name made unique in a registry (`projects.json`: `work`, `work-1`, …),
 * not from its path alone.
 *
 * **Permissions**: `session/request_permission` (allow once, allow always, deny). A session's
 * requests are denied unless `permission` says otherwise; in its default approval mode Gemini CLI
 * asks before a shell command or a file write. A run with `permission` is a one-prompt ACP session
 * (headless, Gemini CLI cannot ask); `session` must then be `'new'`.
 *
 * **Prompt parts and typed answers**:
 * - Images, natively over ACP: a session's prompt sends each as an ACP `image` block, which Gemini
 *   CLI gives the model as `inlineData` (the very bytes). A run with an image is a one-prompt ACP
 *   session (`session` must be `'new'`): stream-json mode has no image input.
 * - Files: a run inlines each file's text into the prompt on stdin (`<file path="…">` blocks); a
 *   session sends it as an ACP embedded resource (its `file://` path and the text read when the
 *   command was made), which Gemini CLI puts after the prompt under "Content from referenced
 *   context"; beside an image, as text (Gemini CLI 0.61 leaves a prompt's images out once it has
 *   embedded context).
 * - `outputSchema`, emulated: Gemini CLI has no flag for it (a settings override of the request's
 *   `responseJsonSchema` exists, but JSON mode beside tools is refused by some models): the schema's
 *   instruction is appended to the prompt, and the answer's final text is parsed and validated
 *   (`terminal.completed.output` / `turn.completed.output`, else `output-schema`).
 * - A tool's diff (a file it wrote) or image, where an ACP session's `tool_call_update` carries one,
 *   is in `tool.completed.content`; a run's stream-json `tool_result` has text only.
 *
 * **MCP servers and host tools** (`mcpServers`, `tools`):
 * - A run writes them into its home's settings (`mcpServers`: stdio `{ command, args, env }`, http
 *   `{ httpUrl, headers }`, `trust: true` for a trusted server), in place of the user's own servers;
 *   the headers (the host tools' token) are in that file only, readable by this user alone, never
 *   in the arguments. A session gives them at `session/new` (Gemini CLI takes http servers there:
 *   `mcpCapabilities.http`), its home's settings without the user's servers. When every server is
 *   trusted and there is no `permission`, `--allowed-mcp-server-names` keeps out the servers of
 *   extensions and system settings too; otherwise those still connect (the flag would also allow
 *   every tool of the servers it names without asking).
 * - Gemini CLI names an MCP tool `mcp_<server>_<tool>`; its messages say `mcp__<server>__<tool>`
 *   (a run reads the server up to the name's first `_`, as Gemini CLI's policies do; a session
 *   knows its servers' names). Their kind is `other`. A session's calls say no input (Gemini
 *   CLI's ACP updates carry none): `tool.call.input` is `{ title }`, e.g. `lookup (host MCP Server)`.
 * - Trust: a run's trusted server's tools run without asking; an untrusted one's are not even
 *   offered to the model in a headless run unless `approvalMode: 'yolo'`. A session asks
 *   (`session/request_permission`, `tool: 'mcp__<server>__<tool>'`, title `<tool> (<server> MCP
 *   Server)`) for every MCP call in its default approval mode: a trusted server's are allowed by
 *   policy when there is no `permission`, and with one, every call goes through it (a run with
 *   `permission` is such a session).
 * - A call's time limit is the server's `timeout` in Gemini CLI's settings (default 10 minutes,
 *   not set here). An abort of the turn ends a pending call at once for Gemini CLI (`tool.failed`,
 *   `Tool call aborted`) but sends the server nothing (no `notifications/cancelled`): a host
 *   tool's signal fires because the host ends its calls on the abort; another server's call runs on.
 */
export const geminiAgent: AgentDefinition<'gemini', RunGeminiOptions, GeminiSessionOptions, GeminiSetup, GeminiRunSpecOptions> = {
  name: 'gemini',
  displayName: 'Gemini CLI',
  executable: { names: ['gemini'] },
  options: GEMINI_OPTIONS,
  run: geminiRunInvocation,
  session: geminiSessionInvocation,
  dialect: geminiDialect,
  // Runs in their home's settings, sessions at `session/new`.
  mcp: { runs: true, sessions: true },
  telemetry: geminiTelemetry,
  flags: [
    choiceFlag('approval-mode', 'approvalMode', GEMINI_APPROVAL_MODES, '<mode>', `gemini: ${GEMINI_APPROVAL_MODES.join(', ')} (without yolo it has no shell tool)`),
    sessionFlag(['new', 'latest'], 'resume', 'gemini: new, latest or a session id (or index) to resume'),
  ],
  recognizesOutput: recognizesGeminiOutput,
  setup: {
    overlay: (setup) => (setup.noRetries || setup.mcpServers !== undefined ? geminiSettingsOverlay(setup) : undefined),
    messages: (setup, env) => (setup.resumed ? removingResumeLeftovers(() => geminiHome(env)) : undefined),
  },
  resumeRun: (options, sessionId) => ({ ...options, session: { resume: sessionId } }),
};
