import type { Observable } from 'rxjs';
import { claudeAgent } from '../agents/claude/definition.js';
import type { RunClaudeCodeOptions } from '../agents/claude/options.js';
import type { CliMessage } from '../messages.js';
import { runAgent } from './run-agent.js';

/**
 * Runs Claude Code (`claude -p --output-format stream-json --verbose`) as a cold Observable of
 * `CliMessage`s: the same contract as `runPi`. Each subscription starts one process; the stream
 * ends with exactly one terminal message. Unsubscribing sends SIGINT (Claude Code then kills its
 * tool's process group), and SIGKILLs the whole tree, tool commands included, after the grace period.
 * Without `executable`, the native binary of the `@anthropic-ai/claude-code` package is found at
 * each subscription (its platform package's binary, see `claudeAgent`).
 *
 * - The prompt is passed last, after `--`, so it is never read as a flag (one argument is limited to
 *   128 KiB on Linux).
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
 * the permission system is a `tool.failed` with the refusal, and the run goes on); `agent.retry`
 * from `system/api_retry`; the terminal from the `result` line: an API error (`is_error: true`,
 * even with `subtype: "success"`) is `agent-error` with the HTTP status first in `agentError`
 * (`429 API Error: …`), although the CLI then exits 1; a `result` of an interrupted run is
 * `aborted`. Synthetic API-error text is not part of the answer.
 *
 * @example
 * runClaudeCode({ prompt: 'Fix the failing test', allowedTools: ['Bash', 'Edit'], maxTurns: 10 })
 *   .subscribe((message) => {
 *     if (message.type === 'assistant') process.stdout.write(message.text);
 *   });
 */
export function runClaudeCode(options: RunClaudeCodeOptions): Observable<CliMessage> {
  return runAgent(claudeAgent, options);
}
