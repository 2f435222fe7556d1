import { defer, of, type Observable } from 'rxjs';
import type { AgentDefinition, RunInvocation } from '../agents/definition.js';
import { checkOptions } from '../agents/shared/option-schemas.js';
import { programOf } from '../agents/shared/setup/find-executable.js';
import type { CliMessage, Prompt, SessionCommand } from '../messages.js';
import { outputContract } from '../operators/output-schema.js';
import { contentSummary, promptContent, refuseUnsupported, RUN_PROMPT, type RunPrompt } from '../operators/prompt-parts.js';
import { checkRunOutputWith } from '../operators/turn-output.js';
import { fileReader } from './prompt-files.js';
import { agentOutputToMessages } from '../operators/agent-output-to-messages.js';
import { sessionToRun } from '../operators/session-to-run.js';
import { resolveProcessOptions } from '../process/options.js';
import { agentSession, sessionInvocation } from '../sessions/agent-session.js';
import { runWithOverlay } from './overlay-run.js';
import type { HostTool } from '../tools/host-tool.js';
import { runWithHostTools, toolsTaken, withToolServer, type ToolOptions } from '../tools/with-host-tools.js';
import { processLines } from './process-lines.js';
import { watched, type Watched } from './watch.js';

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
  const { invocation, prompt, tools, options: taken, budget } = runInvocationAndPrompt(definition, options);
  const run$ =
    tools === undefined
      ? invocationRun(definition, invocation, prompt)
      : // The run is made again at each subscription, with the server made for it.
        runWithHostTools(tools, (taken as { readonly permission?: unknown }).permission === undefined, (server) =>
          invocationRun(definition, definition.run(withToolServer(taken as ToolOptions, server) as RunOptions, prompt), prompt),
        );
  return budget === undefined ? run$ : run$.pipe(budget);
}

/** The run of an invocation: its process (or its one-prompt session), its messages checked against the prompt's schema. */
function invocationRun<RunOptions, SessionOptions, Setup>(
  definition: AgentDefinition<string, RunOptions, SessionOptions, Setup>,
  invocation: RunInvocation<Setup, SessionOptions>,
  prompt: RunPrompt,
): Observable<CliMessage> {
  if ('asSession' in invocation) {
    const command = oneShotCommand(definition, invocation.asSession.options, invocation.asSession.prompt);
    return of(command).pipe(agentSession(definition, invocation.asSession.options), sessionToRun());
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
    const cleaned = after === undefined ? run$ : run$.pipe(after);
    return prompt.output === undefined ? cleaned : cleaned.pipe(checkRunOutputWith(prompt.output));
  });
}

/**
 * The one command of a run made as a session of `options`: the prompt made ready, which the
 * session gives to its agent as its protocol takes it. A part its sessions cannot take is refused
 * now (a `TypeError`), not dropped in the stream.
 */
export function oneShotCommand<RunOptions, SessionOptions, Setup>(
  definition: AgentDefinition<string, RunOptions, SessionOptions, Setup>,
  options: SessionOptions,
  request: RunPrompt,
): SessionCommand {
  const { protocol } = sessionInvocation(definition, options);
  refuseUnsupported(request.content, { image: protocol.prompts?.image ?? false, file: true }, `${definition.displayName} runs`);
  return Object.assign({ type: 'prompt' as const, text: contentSummary(request.content) }, { [RUN_PROMPT]: request });
}

/** A run's invocation from its definition, the options checked first (a `TypeError` names the option). */
export function runInvocation<RunOptions, SessionOptions, Setup>(
  definition: AgentDefinition<string, RunOptions, SessionOptions, Setup>,
  options: RunOptions,
): RunInvocation<Setup, SessionOptions> {
  return runInvocationAndPrompt(definition, options).invocation;
}

/**
 * A run's invocation and its prompt made ready: the options checked, the prompt's images and files
 * read (from `cwd`) and checked, its `outputSchema` made ready (each a `TypeError` naming what is
 * wrong).
 */
export function runInvocationAndPrompt<RunOptions, SessionOptions, Setup>(
  definition: AgentDefinition<string, RunOptions, SessionOptions, Setup>,
  options: RunOptions,
): {
  readonly invocation: RunInvocation<Setup, SessionOptions>;
  readonly prompt: RunPrompt;
  readonly tools: readonly HostTool<unknown>[] | undefined;
  /** The options as the agent takes them: `budget` and `telemetry` made into its own. */
  readonly options: RunOptions;
  readonly budget: Watched<RunOptions>['budget'];
} {
  checkOptions(`a ${definition.name} run`, definition.options.run, options);
  const { options: taken, budget } = watched(definition as AgentDefinition<string, never, never, unknown>, options, `a ${definition.name} run`);
  return { ...preparedRun(definition, taken), options: taken, budget };
}

/** A run's invocation and prompt from options without `budget` and `telemetry`. */
function preparedRun<RunOptions, SessionOptions, Setup>(
  definition: AgentDefinition<string, RunOptions, SessionOptions, Setup>,
  options: RunOptions,
): { readonly invocation: RunInvocation<Setup, SessionOptions>; readonly prompt: RunPrompt; readonly tools: readonly HostTool<unknown>[] | undefined } {
  const tools = toolsTaken(definition, 'runs', options as ToolOptions);
  const { prompt, outputSchema, cwd } = options as { readonly prompt: Prompt; readonly outputSchema?: unknown; readonly cwd?: string };
  const content = promptContent(prompt, fileReader(cwd));
  const ready: RunPrompt = outputSchema === undefined ? { content } : { content, output: outputContract(outputSchema) };
  // With host tools, the invocation is checked now with a stand-in for their server, made at each subscription.
  const checked = tools === undefined ? options : (withToolServer(options as ToolOptions) as RunOptions);
  return { invocation: definition.run(checked, ready), prompt: ready, tools };
}
