import type { OperatorFunction } from 'rxjs';
import { piAgent } from '../agents/pi/definition.js';
import type { PiSessionOptions } from '../agents/pi/options.js';
import type { SessionCommand, SessionMessage } from '../messages.js';
import { agentSession } from '../sessions/agent-session.js';

/**
 * An interactive pi session (`pi --mode rpc`): one pi process for a stream of commands, many
 * turns. Each subscription starts one process; completing the commands ends the session after
 * the running turn, unsubscribing stops pi (SIGTERM, then SIGKILL of its whole tree).
 *
 * ```
 * commands: -p1------s------p2---------|          p = prompt, s = steer
 * messages: -a(S)-x-x-a-x-(C)(S)-x-x-(C)(T|)     a = input.accepted, S = turn.started,
 *                                                 x = content, C = turn.completed, T = terminal
 * ```
 *
 * A steer goes into the running turn (pi delivers it after the current message and its tools);
 * an abort ends the turn in milliseconds and keeps the process; follow-ups are kept by agent-rx
 * and sent as later turns' prompts. Invalid options throw `TypeError` now.
 *
 * @example
 * const commands = new Subject<SessionCommand>();
 * commands.pipe(piSession({ provider: 'anthropic', model: 'claude-sonnet-4-5' })).subscribe(render);
 * commands.next({ type: 'prompt', text: 'What does this repo do?' });
 */
export function piSession(options: PiSessionOptions = {}): OperatorFunction<SessionCommand, SessionMessage> {
  return agentSession(piAgent, options);
}
