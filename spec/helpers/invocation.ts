import type { AgentDefinition, ProcessRunInvocation } from '../../lib/agents/definition.js';
import { runInvocation } from '../../lib/sources/run-agent.js';

/** A run's invocation as its source builds it: the options checked against the schema (a TypeError), then mapped; a process run only. */
export function processInvocation<RunOptions, SessionOptions, Setup>(
  definition: AgentDefinition<string, RunOptions, SessionOptions, Setup>,
  options: RunOptions,
): ProcessRunInvocation<Setup> {
  const invocation = runInvocation(definition, options);
  if ('asSession' in invocation) throw new Error(`this ${definition.name} run is a session, not a process`);
  return invocation;
}
