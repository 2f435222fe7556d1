import { defer, of, type Observable } from 'rxjs';
import { buildCodexInvocation } from '../agents/codex/args.js';
import { codexOutputToMessages } from '../agents/codex/dialect.js';
import type { RunCodexOptions } from '../agents/codex/options.js';
import type { CliMessage, SessionCommand } from '../messages.js';
import { checkOptionsObject, checkPrompt } from '../agents/shared/options.js';
import { sessionToRun } from '../operators/session-to-run.js';
import { codexSession, withCodexExecutable } from './codex-session.js';
import { resolveProcessOptions } from '../process/options.js';
import { processLines } from './process-lines.js';

/**
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
 * subscription (see `findCodexExecutable`).
 *
 * @example
 * runCodex({ prompt: 'Fix the failing test', sandbox: 'workspace-write', approvalPolicy: 'never', idleTimeoutMs: 300_000 })
 *   .subscribe((message) => {
 *     if (message.type === 'assistant') console.log(message.text);
 *   });
 */
export function runCodex(options: RunCodexOptions): Observable<CliMessage> {
  checkOptionsObject('runCodex', options);
  const transport: unknown = options.transport;
  if (transport === 'app-server') return runCodexAppServer(options);
  if (transport !== undefined && transport !== 'exec') throw new TypeError(`agent-rx: transport must be 'exec' or 'app-server'; got ${JSON.stringify(transport)}`);
  const { executable, args, processOptions, resuming } = buildCodexInvocation(options);
  const toMessages = codexOutputToMessages({ resuming });
  // Every option is checked now, whichever executable is found later.
  resolveProcessOptions(executable ?? 'codex', args, processOptions);
  if (executable !== undefined) return processLines(executable, args, processOptions).pipe(toMessages);
  return defer(() => {
    const found = withCodexExecutable(processOptions);
    return processLines(found.command, args, found.processOptions).pipe(toMessages);
  });
}

/** A one-prompt `codexSession`, read as a run. */
function runCodexAppServer(options: RunCodexOptions): Observable<CliMessage> {
  const { prompt, transport: _transport, session = 'new', additionalDirectories, skipGitRepoCheck, ...rest } = options;
  checkPrompt('runCodex', prompt);
  if (session === 'last') throw new TypeError("agent-rx: runCodex with transport 'app-server' cannot resume the 'last' thread; give { resume: id }");
  if (additionalDirectories !== undefined || skipGitRepoCheck !== undefined) {
    throw new TypeError("agent-rx: additionalDirectories and skipGitRepoCheck are for transport 'exec'");
  }
  const commands: Observable<SessionCommand> = of({ type: 'prompt', text: prompt });
  return commands.pipe(codexSession({ ...rest, session }), sessionToRun());
}
