import { defer, of, type Observable } from 'rxjs';
import type { AgentDefinition, RunInvocation } from '../agents/definition.js';
import { checkOptions } from '../agents/shared/option-schemas.js';
import { programOf } from '../agents/shared/setup/find-executable.js';
import type { CliMessage, SessionCommand } from '../messages.js';
import { agentOutputToMessages } from '../operators/agent-output-to-messages.js';
import { sessionToRun } from '../operators/session-to-run.js';
import { resolveProcessOptions } from '../process/options.js';
import { agentSession } from '../sessions/agent-session.js';
import { runWithOverlay } from './overlay-run.js';
import { processLines } from './process-lines.js';

/**
 * Runs any agent from its definition as a cold Observable of `CliMessage`s: what `runPi`,
 * `runClaudeCode`, `runCodex`, `runGemini` and `runQwen` do for theirs. Each subscription starts one process
 * (its program found at that moment when the options name none), with what the agent's setup
 * makes; the stream ends with exactly one terminal message and completes; unsubscribing stops the
 * agent and its whole process tree. Invalid options throw a `TypeError` now, naming the option.
 *
 * @example
 * runAgent(AGENTS.claude, { prompt: 'Fix the failing test', allowedTools: ['Bash', 'Edit'] }).subscribe(render);
 */
export function runAgent<RunOptions, SessionOptions, Setup>(definition: AgentDefinition<string, RunOptions, SessionOptions, Setup>, options: RunOptions): Observable<CliMessage> {
  const invocation = runInvocation(definition, options);
  if ('asSession' in invocation) {
    const commands: Observable<SessionCommand> = of({ type: 'prompt', text: invocation.asSession.prompt });
    return commands.pipe(agentSession(definition, invocation.asSession.options), sessionToRun());
  }
  const toMessages = agentOutputToMessages(definition.dialect({ resuming: invocation.resuming }));
  const { args, processOptions, setup } = invocation;
  // Every process option is checked now, whichever program is found later.
  resolveProcessOptions(invocation.executable ?? definition.executable.names[0] ?? definition.name, args, processOptions);
  const overlay = setup === undefined ? undefined : definition.setup?.overlay?.(setup);
  return defer(() => {
    const program = programOf(definition, invocation.executable, processOptions);
    const run$ =
      overlay === undefined
        ? processLines(program.command, [...program.args, ...args], program.processOptions).pipe(toMessages)
        : runWithOverlay(program.command, [...program.args, ...args], program.processOptions, overlay, toMessages);
    const after = setup === undefined ? undefined : definition.setup?.messages?.(setup, { ...process.env, ...processOptions.env });
    return after === undefined ? run$ : run$.pipe(after);
  });
}

/** A run's invocation from its definition, the options checked first (a `TypeError` names the option). */
export function runInvocation<RunOptions, SessionOptions, Setup>(
  definition: AgentDefinition<string, RunOptions, SessionOptions, Setup>,
  options: RunOptions,
): RunInvocation<Setup, SessionOptions> {
  checkOptions(`a ${definition.name} run`, definition.options.run, options);
  return definition.run(options);
}
