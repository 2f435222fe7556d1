import type { OperatorFunction } from 'rxjs';
import { claudeAgent } from '../agents/claude/definition.js';
import type { ClaudeCodeSessionOptions } from '../agents/claude/options.js';
import type { SessionCommand, SessionMessage } from '../messages.js';
import { agentSession } from '../sessions/agent-session.js';

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
  return agentSession(claudeAgent, options);
}
