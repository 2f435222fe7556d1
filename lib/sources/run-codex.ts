import { defer, type Observable } from 'rxjs';
import { delimiter } from 'node:path';
import { buildCodexInvocation } from '../agents/codex/args.js';
import { codexOutputToMessages } from '../agents/codex/dialect.js';
import { findCodexExecutable } from '../agents/codex/executable.js';
import type { RunCodexOptions } from '../agents/codex/options.js';
import type { CliMessage } from '../messages.js';
import { resolveProcessOptions } from '../process/options.js';
import { processLines } from './process-lines.js';

/**
 * Runs the Codex CLI (`codex exec --experimental-json`) as a cold Observable of `CliMessage`s: the
 * same contract as `runPi`. Each subscription starts one process; the stream ends with exactly one
 * terminal message. Unsubscribing sends SIGTERM (Codex then ends its tool commands and exits), and
 * SIGKILLs the whole tree after the grace period.
 *
 * Codex prints whole messages, not deltas: each `assistant` message is one whole message of the
 * agent. Its usage is the thread's total so far. Its own retries are `agent.retry` messages; an
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
  const { executable, args, processOptions, resuming } = buildCodexInvocation(options);
  const toMessages = codexOutputToMessages({ resuming });
  // Every option is checked now, whichever executable is found later.
  resolveProcessOptions(executable ?? 'codex', args, processOptions);
  if (executable !== undefined) return processLines(executable, args, processOptions).pipe(toMessages);
  return defer(() => {
    const found = findCodexExecutable({ ...process.env, ...processOptions.env });
    if (found.pathDir === undefined) return processLines(found.command, args, processOptions).pipe(toMessages);
    // The programs the package ships for Codex (its `rg`) come first on PATH, as its launcher does.
    // A PATH the caller set (or removed, with `undefined`) wins over the host's.
    const path = processOptions.env !== undefined && Object.hasOwn(processOptions.env, 'PATH') ? processOptions.env['PATH'] : process.env['PATH'];
    const env = { ...processOptions.env, PATH: path === undefined || path === '' ? found.pathDir : `${found.pathDir}${delimiter}${path}` };
    return processLines(found.command, args, { ...processOptions, env }).pipe(toMessages);
  });
}
