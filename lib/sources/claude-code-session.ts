import { defer, type OperatorFunction } from 'rxjs';
import { buildClaudeSessionInvocation } from '../agents/claude/args.js';
import { findClaudeExecutable } from '../agents/claude/executable.js';
import { claudeDialect } from '../agents/claude/dialect.js';
import type { ClaudeCodeSessionOptions } from '../agents/claude/options.js';
import { claudeSessionProtocol } from '../agents/claude/session.js';
import type { SessionCommand, SessionMessage } from '../messages.js';
import { runSession } from '../sessions/run-session.js';

/**
 * An interactive Claude Code session (stream-json in and out): one process for a stream of
 * commands, many turns, the same contract as `piSession`. Each subscription starts one process;
 * completing the commands ends the session after the running turn, unsubscribing stops Claude
 * Code (SIGINT, then SIGKILL of its whole tree).
 *
 * A steer is a user line sent into the running turn: Claude Code folds it in at the next tool
 * boundary, or answers it right after the current answer, within the same agent-rx turn. An abort
 * cancels the lines it has not taken yet and interrupts the turn; the process stays. Without
 * `executable`, the native binary is found as for `runClaudeCode`.
 *
 * @example
 * const commands = new Subject<SessionCommand>();
 * commands.pipe(claudeCodeSession({ allowedTools: ['Bash', 'Edit'] })).subscribe(render);
 * commands.next({ type: 'prompt', text: 'Fix the failing test' });
 */
export function claudeCodeSession(options: ClaudeCodeSessionOptions = {}): OperatorFunction<SessionCommand, SessionMessage> {
  const { command, args, processOptions, resuming } = buildClaudeSessionInvocation(options);
  const resume = typeof options.session === 'object' ? { resume: options.session.resume } : {};
  const spec = { args, processOptions, dialect: claudeDialect({ resuming }), protocol: claudeSessionProtocol({ newSession: !resuming, ...resume }) };
  // Every option is checked now, whichever executable is found later.
  const session = runSession({ ...spec, command });
  if (options.executable !== undefined) return session;
  return (commands) => defer(() => commands.pipe(runSession({ ...spec, command: findClaudeExecutable({ ...process.env, ...processOptions.env }).command })));
}
