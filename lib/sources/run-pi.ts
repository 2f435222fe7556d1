import { defer, of, type Observable } from 'rxjs';
import { buildPiInvocation } from '../agents/pi/args.js';
import { piOutputToMessages } from '../agents/pi/dialect.js';
import type { RunPiOptions } from '../agents/pi/options.js';
import type { CliMessage } from '../messages.js';
import { createSettingsOverlay, PI_AGENT_DIR_ENV, piAgentDir, withoutRetries, type SettingsOverlay } from '../agents/pi/settings-overlay.js';
import { hostTempDir } from '../process/host-temp.js';
import { resolveProcessOptions } from '../process/options.js';
import { describe } from '../process/process-table.js';
import { processLines } from './process-lines.js';
import { setupFailure } from './setup-failure.js';

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
  // Each subscription gets its own settings overlay, inside the host's temporary folder: removed
  // once its processes are gone, and with that folder at host exit (by the keeper if the host is
  // killed without warning).
  return defer(() => {
    let overlay: SettingsOverlay;
    try {
      const realDir = piAgentDir({ ...process.env, ...processOptions.env });
      overlay = createSettingsOverlay(realDir, withoutRetries, invocation.savesSession, hostTempDir());
    } catch (error) {
      return of(setupFailure(`could not prepare pi's settings without retries: ${describe(error)}`)).pipe(toMessages);
    }
    return processLines(command, args, {
      ...processOptions,
      env: { ...processOptions.env, [PI_AGENT_DIR_ENV]: overlay.dir },
      onStopped: (report) => {
        overlay.remove();
        processOptions.onStopped?.(report);
      },
    }).pipe(toMessages);
  });
}
