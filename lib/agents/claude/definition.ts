import type { AgentDefinition } from '../definition.js';
import { claudeTelemetry } from './telemetry.js';
import { claudeConversation } from './conversation.js';
import { claudeRunInvocation, claudeSessionInvocation, type ClaudeSetup } from './args.js';
import { claudeDialect } from './dialect.js';
import { claudeExecutable } from './executable.js';
import { CLAUDE_OPTIONS, type ClaudeCodeRunSpecOptions, type ClaudeCodeSessionOptions, type RunClaudeCodeOptions } from './options.js';
import { recognizesClaudeOutput } from './recognize.js';
import { listFlag, sessionFlag } from '../shared/flags.js';
import { claudeMcpOverlay } from './setup/mcp-config.js';

/**
 * Claude Code (`@anthropic-ai/claude-code`): `claude -p --output-format stream-json` for runs,
 * stream-json in and out for sessions; without an `executable`, the native binary of its platform
 * package (found at each subscription).
 *
 * **Runs** ({@link runClaudeCode}):
 * Runs Claude Code (`claude -p --output-format stream-json --verbose`) as a cold Observable of
 * `CliMessage`s: the same contract as `runPi`. Each subscription starts one process; the stream
 * ends with exactly one terminal message. Unsubscribing sends SIGINT (Claude Code then kills its
 * tool's process group), and SIGKILLs the whole tree, tool commands included, after the grace period.
 * Without `executable`, the native binary of the `@anthropic-ai/claude-code` package is found at
 * each subscription (its platform package's binary, see `claudeAgent`).
 *
 * - The prompt is passed last, after `--`, so it is never read as a flag (one argument is limited to
 *   128 KiB on Linux); its file parts go in it as `<file path="…">` blocks, in order.
 * - Images: a run with an image part is a one-prompt session (below): the image goes as a base64
 *   image block of the user line.
 * - `outputSchema` goes natively, as `--json-schema`: Claude Code offers the model a
 *   `StructuredOutput` tool, checks its input against the schema (an answer it refuses makes the
 *   model try again, 5 times by default) and reports the answer as the `result` line's
 *   `structured_output`, which becomes `terminal.completed.output` and is checked once more by the
 *   run (a zod schema types it). Prose after Claude Code's one nudge completes without a value and
 *   fails `output-schema`, as does a run where Claude Code gave up
 *   (`error_max_structured_output_retries`: the issues it reported, the last answer tried). The
 *   `StructuredOutput` call is the answer, not a tool: it gives no `tool.*` messages. A run that is a
 *   one-prompt session (an image, a `permission`) is told the schema in its prompt instead, as every
 *   session turn is (Claude Code fixes its schema for the whole process).
 * - `interrupt` defaults to `{ signal: 'SIGINT' }`: Claude Code then kills its tool's process group
 *   and ends the run itself.
 * - `includePartialMessages` defaults to `true`: text, thinking and tool input stream as they are
 *   generated; without it text arrives one whole block at a time.
 * - `agentRetry: false` sets `CLAUDE_CODE_MAX_RETRIES=0`: by default the CLI retries API errors up
 *   to 10 times, about 3 minutes for a failing run.
 * - The other process options are as for {@link processLines}.
 *
 * How its output is normalized: `session.started` from `system/init`; `assistant` deltas from the
 * `text_delta` stream events (the block-level `assistant` lines that repeat each block are matched
 * to the deltas by message and block, so nothing is doubled; without partial messages they give
 * the text); `assistant.thought` from thinking; `tool.call` from `tool_use` blocks;
 * `tool.completed` / `tool.failed` from the `tool_result` blocks of `user` lines (a tool refused by
 * the permission system is a `tool.failed` with the refusal, and the run goes on), with `content`
 * from the tool's own account (`tool_use_result`): the file a Write or an Edit changed as a diff of
 * whole texts (an Edit's new text only where Claude Code's patch confirms it), the images a tool
 * gave back (Read of an image); `agent.retry`
 * from `system/api_retry`; the terminal from the `result` line: an API error (`is_error: true`,
 * even with `subtype: "success"`) is `agent-error` with the HTTP status first in `agentError`
 * (`429 API Error: …`), although the CLI then exits 1; a `result` of an interrupted run is
 * `aborted`. Synthetic API-error text is not part of the answer.
 *
 * **Sessions** ({@link claudeCodeSession}):
 * An interactive Claude Code session (stream-json in and out): one process for a stream of
 * commands, many turns, the same contract as `piSession`. Each subscription starts one process;
 * completing the commands ends the session after the running turn, unsubscribing stops Claude
 * Code (SIGINT, then SIGKILL of its whole tree).
 *
 * Prompts, follow-ups and steers take `parts`: images as base64 image blocks of the user line
 * (a replay that shows Claude Code could not take one is an `agent.warning`), files as text
 * blocks holding `<file>` blocks, in order. A command's `outputSchema` is told in its prompt and the
 * turn's final text checked (`turn.completed.output`, or `turn.failed` `output-schema`).
 *
 * A steer is a user line sent into the running turn: Claude Code folds it in at the next tool
 * boundary, or answers it right after the current answer, within the same agent-rx turn. An abort
 * cancels the lines it has not taken yet and interrupts the turn; the process stays. Without
 * `executable`, the native binary is found as for `runClaudeCode`.
 *
 * Permissions: with the session's `permission` option, Claude Code is started with
 * `--permission-prompt-tool stdio` and asks before each tool call its own rules (`allowedTools`,
 * `disallowedTools`, `permissionMode`) do not settle: its `can_use_tool` request is a
 * `permission.requested` (the `tool.call`'s id, the tool, its kind and command or path), and the
 * decision goes back as its `control_response` (a deny tells the model `denied by the host`; the
 * tool does not run and the turn goes on). `allow-always` adds the rule Claude Code suggests for the
 * call (e.g. `Bash(touch x.txt)`) for the rest of the session only. `permissionMode`
 * `bypassPermissions` or `dontAsk` never asks: with `permission` it throws a `TypeError`. Without
 * `permission` nothing asks, as before: what Claude Code's rules do not allow is refused (a
 * `tool.failed`). Any other control request of the CLI is answered with an error, so it never waits.
 * Runs take no `permission`.
 *
 * **MCP servers and host tools** (runs and sessions): `mcpServers` (the server of host `tools`,
 * `host`, among them) are written to `mcp.json` in a folder of the run's own (mode 0600: a server's
 * token is never in the arguments), given as `--mcp-config <file> --strict-mcp-config`, so the
 * user's own servers (`~/.claude.json`, the project's `.mcp.json`) stay out; such a run gets its
 * prompt on stdin, as these arguments come last. Claude Code names the tools
 * `mcp__<server>__<tool>` (kind `other`); a tool's error result (`isError`) is a `tool.failed`.
 * Without `permission`, a server with `trust: true` (host tools' server then) is allowed as a whole
 * (`--allowedTools mcp__<name>`); an untrusted server's tools are refused unless `allowedTools`
 * names them. With `permission`, no server is allowed in advance: each call is a
 * `permission.requested` for `mcp__<server>__<tool>`. An interrupt while a call is pending ends the
 * turn at once: Claude Code sends the server `notifications/cancelled`. Its own limit on a call is
 * `MCP_TOOL_TIMEOUT` (milliseconds, in `env`; by default about 28 hours).
 */
export const claudeAgent: AgentDefinition<'claude', RunClaudeCodeOptions, ClaudeCodeSessionOptions, ClaudeSetup, ClaudeCodeRunSpecOptions> = {
  name: 'claude',
  displayName: 'Claude Code',
  executable: claudeExecutable,
  options: CLAUDE_OPTIONS,
  run: claudeRunInvocation,
  session: claudeSessionInvocation,
  dialect: claudeDialect,
  flags: [
    listFlag('allowed-tools', 'allowedTools', '<list>', 'claude: tools allowed without asking, comma-separated'),
    sessionFlag(['new', 'continue'], 'resume', 'claude: new, continue or an id to resume'),
  ],
  recognizesOutput: recognizesClaudeOutput,
  setup: { overlay: (setup) => claudeMcpOverlay(setup.mcpServers) },
  mcp: { runs: true, sessions: true },
  spending: { reportsCost: true, caps: (budget) => (budget.costUsd !== undefined && (budget.per ?? 'total') === 'total' ? { maxBudgetUsd: budget.costUsd } : {}) },
  telemetry: claudeTelemetry,
  conversation: claudeConversation,
  resumeRun: (options, sessionId) => ({ ...options, session: { resume: sessionId } }),
};
