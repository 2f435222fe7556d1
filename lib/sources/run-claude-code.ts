import type { Observable } from 'rxjs';
import { buildClaudeInvocation } from '../agents/claude/args.js';
import type { RunClaudeCodeOptions } from '../agents/claude/options.js';
import { claudeOutputToMessages } from '../agents/claude/dialect.js';
import type { CliMessage } from '../messages.js';
import { processLines } from './process-lines.js';

/**
 * Runs Claude Code (`claude -p --output-format stream-json --verbose`) as a cold Observable of
 * `CliMessage`s: the same contract as `runPi`. Each subscription starts one process; the stream
 * ends with exactly one terminal message. Unsubscribing sends SIGINT (Claude Code then kills its
 * tool's process group), and SIGKILLs the whole tree, tool commands included, after the grace period.
 *
 * @example
 * runClaudeCode({ prompt: 'Fix the failing test', allowedTools: ['Bash', 'Edit'], maxTurns: 10 })
 *   .subscribe((message) => {
 *     if (message.type === 'assistant') process.stdout.write(message.text);
 *   });
 */
export function runClaudeCode(options: RunClaudeCodeOptions): Observable<CliMessage> {
  const { command, args, processOptions, resuming } = buildClaudeInvocation(options);
  return processLines(command, args, processOptions).pipe(claudeOutputToMessages({ resuming }));
}
