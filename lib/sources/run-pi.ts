import type { Observable } from 'rxjs';
import { piAgent } from '../agents/pi/definition.js';
import type { RunPiOptions } from '../agents/pi/options.js';
import type { CliMessage } from '../messages.js';
import { runAgent } from './run-agent.js';

/**
 * Runs the pi coding agent (`pi --mode json`) as a cold Observable of `CliMessage`s. Each
 * subscription starts one pi process; the stream ends with exactly one `terminal.completed` or
 * `terminal.failed` and completes. Unsubscribing stops pi (SIGTERM, which also ends its tool
 * commands; SIGKILL of the whole tree after `gracePeriodMs`).
 *
 * Failures arrive in the stream: a missing pi is a `terminal.failed` with reason `spawn`; a model
 * error that pi reports with exit code 0 is `agent-error`. Invalid options throw `TypeError` now.
 *
 * - The prompt goes on stdin, which is then closed (see {@link RunPiOptions.prompt}).
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
 * @example
 * runPi({ prompt: 'Explain this repo', provider: 'anthropic', model: 'claude-sonnet-4-5' })
 *   .subscribe((message) => {
 *     if (message.type === 'assistant') process.stdout.write(message.text);
 *   });
 */
export function runPi(options: RunPiOptions): Observable<CliMessage> {
  return runAgent(piAgent, options);
}
