import { defer, type OperatorFunction } from 'rxjs';
import type { AgentDefinition, SessionInvocation } from '../agents/definition.js';
import { checkOptions } from '../agents/shared/option-schemas.js';
import type { SessionCommand, SessionMessage } from '../messages.js';
import { resolveProcessOptions } from '../process/options.js';
import { programOf } from '../agents/shared/setup/find-executable.js';
import { processSession } from './process-session.js';

/**
 * Any agent's interactive session from its definition: what `piSession`, `claudeCodeSession`,
 * `codexSession`, `geminiSession` and `qwenSession` do for theirs. An operator from a stream of commands to the
 * session's messages; each subscription starts one process (its program found at that moment when
 * the options name none), with what the agent's setup makes. Invalid options throw a `TypeError`
 * now, naming the option.
 *
 * @example
 * commands.pipe(agentSession(AGENTS.pi, { model: 'claude-sonnet-4-5' })).subscribe(render);
 */
export function agentSession<RunOptions, SessionOptions, Setup>(
  definition: AgentDefinition<string, RunOptions, SessionOptions, Setup>,
  options: SessionOptions,
): OperatorFunction<SessionCommand, SessionMessage> {
  const invocation = sessionInvocation(definition, options);
  const { args, processOptions, protocol, setup, permission, permissionTimeoutMs } = invocation;
  const dialect = invocation.dialect ?? definition.dialect({ resuming: invocation.resuming });
  const overlay = setup === undefined ? undefined : definition.setup?.overlay?.(setup);
  const spec = {
    args,
    protocol,
    dialect,
    ...(overlay === undefined ? {} : { overlay }),
    ...(permission === undefined ? {} : { permission }),
    ...(permissionTimeoutMs === undefined ? {} : { permissionTimeoutMs }),
  };
  const named = invocation.executable;
  // Every option is checked now, whichever program is found later.
  if (named !== undefined) return processSession({ ...spec, command: named, processOptions });
  resolveProcessOptions(definition.executable.names[0] ?? definition.name, args, processOptions);
  return (commands) =>
    defer(() => {
      const program = programOf(definition, undefined, processOptions);
      return commands.pipe(processSession({ ...spec, args: [...program.args, ...args], command: program.command, processOptions: program.processOptions }));
    });
}

/** A session's invocation from its definition, the options checked first (a `TypeError` names the option). */
export function sessionInvocation<RunOptions, SessionOptions, Setup>(
  definition: AgentDefinition<string, RunOptions, SessionOptions, Setup>,
  options: SessionOptions,
): SessionInvocation<Setup> {
  checkOptions(`a ${definition.name} session`, definition.options.session, options ?? {});
  return definition.session(options);
}
