import type { AgentDefinition } from '../definition.js';
import { codexTelemetry } from './telemetry.js';
import { codexConversation } from './conversation.js';
import { codexRunInvocation, codexSessionInvocation, type CodexSetup } from './args.js';
import { codexDialect } from './dialect.js';
import { codexExecutable } from './executable.js';
import { CODEX_OPTIONS, CODEX_SANDBOX_MODES, type CodexRunSpecOptions, type CodexSessionOptions, type RunCodexOptions } from './options.js';
import { recognizesCodexOutput } from './recognize.js';
import { choiceFlag, sessionFlag, textFlag } from '../shared/flags.js';
import { codexOutputSchemaOverlay } from './setup/output-schema.js';

/**
 * Codex (`@openai/codex`): `codex exec --experimental-json` for runs, `codex app-server` for
 * sessions; without an `executable`, the native binary of its platform package (found at each subscription).
 *
 * **Runs** ({@link runCodex}):
 * Runs the Codex CLI (`codex exec --experimental-json`) as a cold Observable of `CliMessage`s: the
 * same contract as `runPi`. Each subscription starts one process; the stream ends with exactly one
 * terminal message. Unsubscribing sends SIGTERM (Codex then ends its tool commands and exits), and
 * SIGKILLs the whole tree after the grace period.
 *
 * `codex exec` prints whole messages, not deltas: each `assistant` message is one whole message of
 * the agent, and its usage is the thread's total so far. With `transport: 'app-server'` the run is a
 * one-prompt `codexSession` instead: text streams as deltas, and the usage is the turn's own. Its own retries are `agent.retry` messages; an
 * endpoint it cannot reach is retried without end, so give such runs `timeoutMs` or `idleTimeoutMs`.
 *
 * Without `executable`, the native binary of the `@openai/codex` package is found at each
 * subscription (see `codexAgent`): Codex's native binary runs directly, not the npm
 * package's Node launcher, which on Node 20 is a second process that forwards only some signals
 * (killing it orphans the binary).
 *
 * - The prompt is written to stdin, which is then closed (Codex reads stdin to its end before it
 *   starts); never an argument, so it cannot be read as a flag.
 * - `interrupt` defaults to `{ signal: 'SIGTERM' }`: Codex ends its commands (they run in their own
 *   sessions) and exits within tens of ms, printing no final event: an `exit` failure.
 * - `agentRetry: false` sets the provider's `request_max_retries` and `stream_max_retries` to 0.
 *   Codex refuses to change its built-in providers (`openai`), so this needs `provider`, the id of
 *   a custom provider; without it `runCodex` throws `TypeError`.
 * - The other process options are as for {@link processLines} (`cwd` is where Codex works).
 *
 * Prompt parts and typed answers: a file part is read when the run is made and goes in the
 * prompt's text as a `<file path="…">` block (Codex has no file input of its own). A run with an
 * image goes over `app-server` (a one-prompt session, see below), which takes the image's bytes in
 * the prompt's order; `transport: 'exec'` with an image is a `TypeError`, as are `exec`'s own
 * options there (`session: 'last'`, `additionalDirectories`, `skipGitRepoCheck`). `outputSchema`
 * goes natively: `exec --output-schema <file>` (the file made for each subscription in the host's
 * temporary folder and removed after; the argument appended last, where `exec resume` takes it too)
 * or `turn/start`'s `outputSchema`. Codex gives it to the model unchanged as a strict
 * `json_schema` text format and checks nothing; agent-rx validates the answer (`output-schema`).
 * OpenAI's strict mode takes a schema only when every object lists all its properties in
 * `required` and has `additionalProperties: false` (a zod `z.object` does, unless a field is
 * `.optional()`: make it `.nullable()`); a model that refuses the schema fails the run with
 * `agent-error` and the API's message. agent-rx passes such a schema on rather than refuse it:
 * other providers Codex talks to may take it.
 *
 * How its output is normalized: `session.started` from `thread.started` (its `thread_id` is the
 * id to resume); each reasoning item becomes one `assistant.thought` when the turn ends; a
 * `command_execution` item is a tool named `command_execution` with input `{ command }`,
 * `tool.completed` with its output, or `tool.failed` when its status is not `completed` or its exit
 * code is not 0; `file_change` (input `{ changes }`, output a line per change), `mcp_tool_call`
 * (named `mcp__<server>__<tool>`; the image blocks of its result are `tool.completed.content`),
 * `web_search` and `todo_list` (the plan: each update replaces the list) are tools too; `Reconnecting... 2/5 (…)` errors are `agent.retry`; `error` items are
 * `agent.warning`; `turn.completed` is `terminal.completed` (stop reason `end_turn`); `turn.failed`
 * is `agent-error` with the text in `agentError` and `httpStatus` where the text has one. Codex
 * exits 1 after `turn.failed`, and with no output at all for a configuration error: an `exit`
 * failure whose message is the error stderr gives. Codex's `input_tokens` include cached tokens,
 * which the contract counts in `cacheReadTokens` instead.
 *
 * **Sessions** ({@link codexSession}):
 * An interactive Codex session over `codex app-server` (JSON-RPC on stdio): one process and one
 * thread for a stream of commands, many turns, the same contract as `piSession`. Its text streams
 * as true deltas.
 *
 * A steer is `turn/steer`: Codex stops the model's answer in flight and answers again with the
 * steer (the cut answer's text stays in the stream); while a command runs, the steer waits for
 * it. An abort is `turn/interrupt`, after which agent-rx kills the command Codex leaves running;
 * the process and the thread stay. Without `executable`, the native binary is found as for `runCodex`.
 *
 * A command's parts go into `turn/start`'s input in order: text, each file as a text item holding
 * its `<file>` block, each image as an inline data URL of the bytes read when the command came
 * (not a `localImage`, which Codex would read again). A turn's `outputSchema` is `turn/start`'s
 * `outputSchema` (native, as for runs; the session validates the answer at the turn's end).
 * `turn/steer` takes no schema: a steer's goes in its text, as the instruction an agent without
 * native schemas is given.
 *
 * Tool content: over `app-server`, a file change's new files are `diff` content (`oldText: null`,
 * the whole new text); a changed file comes with a unified diff only, and a deleted one with its
 * old text only, so neither is content. An MCP result's images are `image` content, and so is an
 * image Codex generated when the item holds it inline (`image_generation`, output the path Codex
 * saved it at); a URL to fetch is not. `imageView` (the model looked at an image) is a tool
 * `view_image` with the path: the item holds no image.
 *
 * Permissions: Codex's approval requests (`item/commandExecution/requestApproval`,
 * `item/fileChange/requestApproval`, `item/permissions/requestApproval`) go through the session's
 * permission channel: `permission.requested` (tool `command_execution` or `file_change`, as the
 * item's `tool.call` names it, with its `toolCallId`), answered by the `permission` option or a
 * `permission` command, and Codex gets the decision (`accept`, `acceptForSession`, `decline`). A
 * session with `permission` and no `approvalPolicy` runs with `untrusted`, so that Codex asks
 * before every command it does not know to be read-only. Without `permission`, whatever Codex asks
 * is denied (`deny-all`) and shown in the stream. Its other requests (questions to the user,
 * elicitations) are declined with an `agent.warning`. A run over `app-server` takes no
 * `permission` yet: what Codex asks there is denied.
 *
 * MCP servers and host tools (`mcpServers`, `tools`), runs and sessions alike: each server is
 * `mcp_servers.<name>` of Codex's configuration, set with `-c` (`command`, `args`, `env` for a
 * stdio server; `url` and `env_http_headers` for an HTTP one). A header's value (the host tools'
 * token) is never an argument: it goes in a variable of Codex's environment
 * (`AGENT_RX_CODEX_MCP_<server>_<header>`), which `env_http_headers` names; a stdio server's `env`
 * values are arguments (`-c`), as Codex takes them. Codex merges `-c` into
 * the user's configuration, so the servers of their own config.toml stay too (Codex has no way to
 * drop them short of `--ignore-user-config`, which drops the whole file). Codex offers an MCP
 * server's tools as a namespace `mcp__<server>` behind its `tool_search` (the model finds them
 * first); their calls are the `mcp_tool_call` items, named `mcp__<server>__<tool>` in the stream
 * (kind `other`). Approval: without `permission`, a `trust`ed server's calls are approved without
 * asking (`default_tools_approval_mode = "approve"`), the others' as Codex's configuration says
 * (`auto`); with `permission` (sessions and app-server runs), every server's mode is `prompt`:
 * Codex asks before each call with `mcpServer/elicitation/request` (`codex_approval_kind:
 * mcp_tool_call`), which goes through the permission channel as tool `mcp__<server>__<tool>`,
 * input the call's arguments, no `toolCallId` (the request names no item) and no `allow-always`
 * (Codex offers none); a deny fails the call ("user rejected MCP tool call") and the turn goes
 * on. `codex exec` asks nothing: it runs every call. Codex gives up on a server that has not
 * started within its `startup_timeout_sec` and on a call after its `tool_timeout_sec` (settings
 * of `mcp_servers.<name>`, through `config`). A pending call's HTTP request is dropped on such a
 * timeout and when Codex exits (SIGTERM: no `notifications/cancelled`); an abort of the turn
 * (`turn/interrupt`) drops it and sends `notifications/cancelled`. A host tool's signal fires in
 * each case.
 */
export const codexAgent: AgentDefinition<'codex', RunCodexOptions, CodexSessionOptions, CodexSetup, CodexRunSpecOptions> = {
  name: 'codex',
  displayName: 'Codex',
  executable: codexExecutable,
  options: CODEX_OPTIONS,
  run: codexRunInvocation,
  session: codexSessionInvocation,
  dialect: codexDialect,
  flags: [
    textFlag('provider', 'provider', '<name>', "codex: the model provider's id in its configuration"),
    choiceFlag('sandbox', 'sandbox', CODEX_SANDBOX_MODES, '<mode>', `codex: ${CODEX_SANDBOX_MODES.join(', ')}`),
    sessionFlag(['new', 'last'], 'resume', 'codex: new, last or a thread id to resume'),
  ],
  recognizesOutput: recognizesCodexOutput,
  setup: { overlay: (setup) => codexOutputSchemaOverlay(setup.outputSchema) },
  mcp: { runs: true, sessions: true },
  telemetry: codexTelemetry,
  conversation: codexConversation,
  resumeRun: (options, sessionId) => ({ ...options, session: { resume: sessionId } }),
};
