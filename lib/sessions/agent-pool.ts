import { of, type Observable } from 'rxjs';
import type { AgentDefinition } from '../agents/definition.js';
import type { CliMessage, OutputSchema, Prompt } from '../messages.js';
import { outputContract } from '../operators/output-schema.js';
import { promptContent, type RunPrompt } from '../operators/prompt-parts.js';
import { sessionToRun } from '../operators/session-to-run.js';
import { fileReader } from '../sources/prompt-files.js';
import { oneShotCommand } from '../sources/run-agent.js';
import type { ConversationOptions } from './conversation-snapshot.js';
import { agentSession, sessionInvocation } from './agent-session.js';
import { poolSessions, type SessionPool, type SessionPoolOptions } from './session-pool.js';

/** What {@link createAgentPool} takes. */
export interface AgentPoolOptions<RunOptions, SessionOptions, Setup> extends SessionPoolOptions {
  /** The agent: its definition (`AGENTS.claude`, …). */
  readonly agent: AgentDefinition<string, RunOptions, SessionOptions, Setup>;
  /**
   * The options of every process the pool starts: the agent's session options (model, `cwd`,
   * permission, tools, MCP servers, …). A session that resumes a conversation cannot be pooled.
   */
  readonly options?: SessionOptions;
}

/** What a run taken from an {@link AgentPool} takes besides its prompt. */
export interface PooledRunOptions<Output> {
  /** The schema its answer must satisfy: `terminal.completed.output`, else `terminal.failed` (`output-schema`). */
  readonly outputSchema?: OutputSchema<Output> | undefined;
}

/** Agent processes kept started: sessions and runs that skip the agent's start-up. Made by {@link createAgentPool}. */
export interface AgentPool extends SessionPool {
  /**
   * A one-shot run on a process of the pool: a cold Observable of `CliMessage`s like `runAgent`'s.
   * Each subscription takes one waiting process (or starts one), gives it the prompt (text,
   * images, files) and its schema, and ends it after the answer; unsubscribing stops that process
   * only. The run is a one-prompt session of the pool's options, so it follows the session's
   * permission rules and transport. Invalid prompts and schemas throw a `TypeError` now.
   */
  run<Output = unknown>(prompt: Prompt, options?: PooledRunOptions<Output>): Observable<CliMessage<Output>>;
}

/**
 * Keeps processes of one agent started and ready for a first prompt, so that the first word of a
 * session or run taken from the pool comes at the model's speed, not after the agent's start-up
 * (about 0.4 s for Codex to 2.2 s for Qwen Code on a small machine). Each process serves one
 * conversation and is replaced in the background; the prompt, its images and files and a per-run
 * schema still reach the agent, since they come with the first command. Unsubscribing from a taken
 * session or run stops that process only; `close()` ends the waiting ones. Any agent, with the
 * options its sessions take; invalid options throw a `TypeError` now, naming the option.
 *
 * @example
 * const pool = createAgentPool({ agent: AGENTS.claude, options: { model: 'sonnet' }, size: 2 });
 * // A chat: the agent is up before the user presses Enter.
 * commands.pipe(pool.session()).subscribe(render);
 * // A one-shot run, typed:
 * const result = await collectRunResult(pool.run('Review the diff', { outputSchema: z.object({ verdict: z.string() }) }));
 * if (result.ok) console.log(result.output.verdict);
 * await pool.close();
 */
export function createAgentPool<RunOptions, SessionOptions, Setup>(config: AgentPoolOptions<RunOptions, SessionOptions, Setup>): AgentPool {
  const { agent, options = {} as SessionOptions } = config;
  if (sessionInvocation(agent, options).resuming) {
    throw new TypeError(`agent-rx: a pool starts new conversations; ${agent.displayName} session options that resume one cannot be pooled`);
  }
  const { idleMs, conversationId, store } = options as ConversationOptions;
  if (idleMs !== undefined || conversationId !== undefined || store !== undefined) {
    throw new TypeError('agent-rx: a pooled process serves one conversation for its life: idleMs, conversationId and store cannot be pooled');
  }
  if ((options as { readonly budget?: unknown }).budget !== undefined) {
    throw new TypeError("agent-rx: a pooled process waits before it serves: a budget is not pooled; pipe budget() on what the pool's session() or run() returns");
  }
  const pool = poolSessions(agentSession(agent, options), config);
  const cwd = (options as { readonly cwd?: string }).cwd;
  return {
    session: () => pool.session(),
    get waiting() {
      return pool.waiting;
    },
    close: () => pool.close(),
    run: <Output = unknown>(prompt: Prompt, runOptions: PooledRunOptions<Output> = {}): Observable<CliMessage<Output>> => {
      const content = promptContent(prompt, fileReader(cwd));
      const request: RunPrompt = runOptions.outputSchema === undefined ? { content } : { content, output: outputContract(runOptions.outputSchema) };
      const command = oneShotCommand(agent, options, request);
      return of(command).pipe(pool.session(), sessionToRun()) as Observable<CliMessage<Output>>;
    },
  };
}
