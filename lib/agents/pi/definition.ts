import type { AgentDefinition } from '../definition.js';
import { piConversation } from './conversation.js';
import { piRunInvocation, piSessionInvocation, type PiSetup } from './args.js';
import { piDialect } from './dialect.js';
import { PI_OPTIONS, PI_THINKING_LEVELS, type PiRunSpecOptions, type PiSessionOptions, type RunPiOptions } from './options.js';
import { recognizesPiOutput } from './recognize.js';
import { piRunOverlay } from './setup/run-overlay.js';
import { PI_PERMISSION_EXTENSION } from './setup/extensions.js';
import { choiceFlag, sessionFlag, textFlag } from '../shared/flags.js';

/**
 * pi (`@mariozechner/pi-coding-agent`): `pi --mode json` for runs, `pi --mode rpc` for sessions.
 *
 * **Runs** ({@link runPi}):
 * Runs the pi coding agent (`pi --mode json`) as a cold Observable of `CliMessage`s. Each
 * subscription starts one pi process; the stream ends with exactly one `terminal.completed` or
 * `terminal.failed` and completes. Unsubscribing stops pi (SIGTERM, which also ends its tool
 * commands; SIGKILL of the whole tree after `gracePeriodMs`).
 *
 * Failures arrive in the stream: a missing pi is a `terminal.failed` with reason `spawn`; a model
 * error that pi reports with exit code 0 is `agent-error`. Invalid options throw `TypeError` now.
 *
 * - The prompt goes on stdin, which is then closed (see {@link RunPiOptions.prompt}); a run whose
 *   prompt has an image goes as a one-prompt session (`pi --mode rpc`), where images go as bytes.
 * - `interrupt` defaults to `{ signal: 'SIGTERM' }`: SIGTERM makes pi kill its tool commands (which
 *   run in their own session) and exit 143; SIGINT would orphan them.
 * - pi reports model errors (HTTP 4xx/5xx, connection errors) with exit code 0: they are
 *   `terminal.failed` with reason `agent-error`, pi's `errorMessage` in `agentError`.
 * - pi retries some errors on its own (`agent.retry` messages show it). When the caller retries
 *   ({@link retryAgentRun}), pass `agentRetry: false` so that only one layer retries: the run then
 *   gets a temporary configuration directory of its own in the host's temporary folder
 *   (`<tmpdir>/agent-rx-<host id>/`), removed when the run's processes are gone, or with that
 *   folder when the host exits (by the keeper if the host is killed).
 * - pi's `message_update` lines repeat the whole message twice, so its output grows with the square
 *   of the answer; the pipeline reads them at the byte level and skips what the contract never needs.
 * - The other process options (`cwd`, `env`, `timeoutMs`, `idleTimeoutMs`, `gracePeriodMs`,
 *   `killTimeoutMs`, `maxLineBytes`, `stderrTailBytes`, `onStopped`) are as for {@link processLines}.
 *
 * **Sessions** ({@link piSession}):
 * An interactive pi session (`pi --mode rpc`): one pi process for a stream of commands, many
 * turns. Each subscription starts one process; completing the commands ends the session after
 * the running turn, unsubscribing stops pi (SIGTERM, then SIGKILL of its whole tree).
 *
 * ```
 * commands: -p1------s------p2---------|          p = prompt, s = steer
 * messages: -a(S)-x-x-a-x-(C)(S)-x-x-(C)(T|)     a = input.accepted, S = turn.started,
 *                                                 x = content, C = turn.completed, T = terminal
 * ```
 *
 * A steer goes into the running turn (pi delivers it after the current message and its tools);
 * an abort ends the turn in milliseconds and keeps the process; follow-ups are kept by agent-rx
 * and sent as later turns' prompts. Invalid options throw `TypeError` now.
 *
 * Permissions: pi never asks before it uses a tool, and without `permission` a session runs every
 * tool call. With `permission` (a preset, `'ask'` or a callback), pi loads agent-rx's permission
 * extension (`--extension`, shipped in `setup/permission-extension/`), which holds each tool call
 * before it runs and asks the host through pi's RPC dialogs (`extension_ui_request` `confirm`,
 * answered by `extension_ui_response`): `permission.requested` carries pi's tool call id, tool
 * name, kind, summary and input, options `allow` and `deny`; a deny blocks the call (the model
 * gets an error result, the turn goes on). pi's json mode has no dialogs: a run with `permission`
 * goes as a one-prompt session.
 *
 * MCP servers and host tools, for runs and sessions: pi has no MCP of its own, so `mcpServers`
 * (and the server of host `tools`, `host`) go to agent-rx's MCP extension for pi (`--extension`,
 * shipped in `setup/mcp-extension/`; it imports the official MCP client, found from its own place in
 * the sources and in `dist/`). The servers are written to a file of the run's overlay (mode 0600;
 * headers and tokens never in argv) that the extension's flag names; at pi's `session_start` it
 * connects to every server (stdio servers it starts, and closes at pi's exit), lists their tools
 * and registers each as the pi tool `mcp__<server>__<tool>`, whose call is the MCP call with pi's
 * abort signal (a result with `isError` is thrown, so pi reports the tool failed). Loading it adds
 * roughly half a second to a second before the first answer (importing the client, connecting).
 * `trust` maps to nothing: pi runs every tool call unless `permission` is given, and then the
 * permission extension asks for every call, MCP tools included (`tool` is `mcp__<server>__<tool>`).
 *
 * Prompt parts and typed answers, for runs and sessions:
 * - images: native. They go as bytes in the RPC `prompt` command's `images` (for a steer and a
 *   follow-up too), base64 with their type, in the prompt's order after its text; pi neither
 *   resizes nor checks them (agent-rx checks their type and the 5 MB limit). pi gives a model an
 *   image only if its `models.json` entry says `input: ["text", "image"]` (pi's built-in vision
 *   models do): for a text-only model pi replaces each image with a note, "(image omitted: model
 *   does not support images)", and no error is reported. agent-rx cannot know a model's
 *   modalities: choose a vision model.
 * - files: emulated. pi's RPC has no file reference: agent-rx reads the file and puts its text in
 *   the message, as a `<file path="…">` block where the part was.
 * - `outputSchema`: emulated. pi has no structured output: the schema goes into the prompt as an
 *   instruction, and the answer's text is parsed and validated (`output`, or `output-schema`).
 * - Tool results: images a tool gives back (pi's `read` of an image file) are in
 *   `tool.completed.content`. Files a tool changed are not: pi's `edit` reports only a display
 *   diff (changed lines with a few lines around them), never the file's text before and after.
 */
export const piAgent: AgentDefinition<'pi', RunPiOptions, PiSessionOptions, PiSetup, PiRunSpecOptions> = {
  name: 'pi',
  displayName: 'pi',
  executable: { names: ['pi'] },
  options: PI_OPTIONS,
  run: piRunInvocation,
  session: (options) => piSessionInvocation(options, PI_PERMISSION_EXTENSION),
  dialect: piDialect,
  flags: [
    textFlag('provider', 'provider', '<name>', "pi's provider"),
    choiceFlag('thinking', 'thinking', PI_THINKING_LEVELS, '<level>', `pi's thinking level: ${PI_THINKING_LEVELS.join(', ')}`),
    sessionFlag(['new', 'none', 'continue'], 'id', 'pi: new, none, continue or an id'),
  ],
  recognizesOutput: recognizesPiOutput,
  setup: { overlay: piRunOverlay },
  mcp: { runs: true, sessions: true },
  conversation: piConversation,
  resumeRun: (options, sessionId) => ({ ...options, session: { id: sessionId } }),
  appendSystemPrompt: (options, text) => ({ ...options, appendSystemPrompt: options.appendSystemPrompt === undefined ? text : `${options.appendSystemPrompt}\n\n${text}` }),
};
