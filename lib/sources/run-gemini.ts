import type { Observable } from 'rxjs';
import { buildGeminiInvocation } from '../agents/gemini/args.js';
import { geminiOutputToMessages } from '../agents/gemini/dialect.js';
import type { RunGeminiOptions } from '../agents/gemini/options.js';
import { removingResumeLeftovers } from '../agents/gemini/resume-leftovers.js';
import { geminiHome, geminiNoRetryOverlay } from '../agents/gemini/settings-overlay.js';
import type { CliMessage } from '../messages.js';
import { resolveProcessOptions } from '../process/options.js';
import { processLines } from './process-lines.js';
import { runWithOverlay } from './overlay-run.js';

/**
 * Runs Gemini CLI (`gemini --output-format stream-json`, headless on the prompt given on stdin) as
 * a cold Observable of `CliMessage`s: the same contract as `runPi`. Each subscription starts one
 * process; the stream ends with exactly one terminal message. Unsubscribing sends SIGTERM, and
 * SIGKILLs the whole tree after the grace period: Gemini CLI's shell commands outlive it otherwise.
 *
 * Gemini CLI's retries, which it tells only on stderr, are `agent.retry` messages. A run it ends
 * without a `result` line (a signal makes it exit 0) is a failure, never a completion.
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
  const invocation = buildGeminiInvocation(options);
  const toMessages = geminiOutputToMessages({ resuming: invocation.resuming });
  const { command, args, processOptions } = invocation;
  // Every option is checked now, whichever way the run is built below.
  resolveProcessOptions(command, args, processOptions);
  const run$ = invocation.agentRetry
    ? processLines(command, args, processOptions).pipe(toMessages)
    : runWithOverlay(command, args, processOptions, geminiNoRetryOverlay(), toMessages);
  if (!invocation.resuming) return run$;
  return run$.pipe(removingResumeLeftovers(() => geminiHome({ ...process.env, ...processOptions.env })));
}
