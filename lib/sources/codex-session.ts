import type { OperatorFunction } from 'rxjs';
import { codexAgent } from '../agents/codex/definition.js';
import type { CodexSessionOptions } from '../agents/codex/options.js';
import type { SessionCommand, SessionMessage } from '../messages.js';
import { agentSession } from '../sessions/agent-session.js';

/**
 * An interactive Codex session over `codex app-server` (JSON-RPC on stdio): one process and one
 * thread for a stream of commands, many turns, the same contract as `piSession`. Its text streams
 * as true deltas.
 *
 * A steer is `turn/steer`: Codex stops the model's answer in flight and answers again with the
 * steer (the cut answer's text stays in the stream); while a command runs, the steer waits for
 * it. An abort is `turn/interrupt`, after which agent-rx kills the command Codex leaves running;
 * the process and the thread stay. Requests for approval are declined (use `approvalPolicy:
 * 'never'`). Without `executable`, the native binary is found as for `runCodex`.
 *
 * @example
 * const commands = new Subject<SessionCommand>();
 * commands.pipe(codexSession({ sandbox: 'workspace-write', approvalPolicy: 'never' })).subscribe(render);
 * commands.next({ type: 'prompt', text: 'Fix the failing test' });
 */
export function codexSession(options: CodexSessionOptions = {}): OperatorFunction<SessionCommand, SessionMessage> {
  return agentSession(codexAgent, options);
}
