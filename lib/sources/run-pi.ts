import type { Observable } from 'rxjs';
import { buildPiInvocation } from '../agents/pi/args.js';
import { piOutputToMessages } from '../agents/pi/dialect.js';
import type { RunPiOptions } from '../agents/pi/options.js';
import type { CliMessage } from '../messages.js';
import { piNoRetryOverlay } from '../agents/pi/settings-overlay.js';
import { resolveProcessOptions } from '../process/options.js';
import { processLines } from './process-lines.js';
import { runWithOverlay } from './overlay-run.js';

/**
 * Runs the pi coding agent (`pi --mode json`) as a cold Observable of `CliMessage`s. Each
 * subscription starts one pi process; the stream ends with exactly one `terminal.completed` or
 * `terminal.failed` and completes. Unsubscribing stops pi (SIGTERM, which also ends its tool
 * commands; SIGKILL of the whole tree after `gracePeriodMs`).
 *
 * Failures arrive in the stream: a missing pi is a `terminal.failed` with reason `spawn`; a model
 * error that pi reports with exit code 0 is `agent-error`. Invalid options throw `TypeError` now.
 *
 * @example
 * runPi({ prompt: 'Explain this repo', provider: 'anthropic', model: 'claude-sonnet-4-5' })
 *   .subscribe((message) => {
 *     if (message.type === 'assistant') process.stdout.write(message.text);
 *   });
 */
export function runPi(options: RunPiOptions): Observable<CliMessage> {
  const invocation = buildPiInvocation(options);
  const toMessages = piOutputToMessages({ resuming: invocation.resuming });
  const { command, args, processOptions } = invocation;
  // Every option is checked now, whichever way the run is built below.
  resolveProcessOptions(command, args, processOptions);
  if (invocation.agentRetry) return processLines(command, args, processOptions).pipe(toMessages);
  return runWithOverlay(command, args, processOptions, piNoRetryOverlay(invocation.savesSession), toMessages);
}
