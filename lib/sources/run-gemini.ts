import type { Observable } from 'rxjs';
import { geminiAgent } from '../agents/gemini/definition.js';
import type { RunGeminiOptions } from '../agents/gemini/options.js';
import type { CliMessage } from '../messages.js';
import { runAgent } from './run-agent.js';

/**
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
 * @example
 * runGemini({ prompt: 'Fix the failing test', approvalMode: 'yolo', idleTimeoutMs: 120_000 })
 *   .subscribe((message) => {
 *     if (message.type === 'assistant') process.stdout.write(message.text);
 *   });
 */
export function runGemini(options: RunGeminiOptions): Observable<CliMessage> {
  return runAgent(geminiAgent, options);
}
