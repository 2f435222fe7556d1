import type { Observable, OperatorFunction } from 'rxjs';
import type { AgentDefinition } from './agents/definition.js';
import type { CliMessage, SessionCommand, SessionMessage } from './messages.js';
import { agentSession } from './sessions/agent-session.js';
import { runAgent } from './sources/run-agent.js';

import { piAgent, type RunPiOptions, type PiSessionOptions } from './agents/pi/index.js';
import { claudeAgent, type RunClaudeCodeOptions, type ClaudeCodeSessionOptions } from './agents/claude/index.js';
import { codexAgent, type RunCodexOptions, type CodexSessionOptions } from './agents/codex/index.js';
import { geminiAgent, type RunGeminiOptions, type GeminiSessionOptions } from './agents/gemini/index.js';
import { qwenAgent, type RunQwenOptions, type QwenSessionOptions } from './agents/qwen/index.js';

export * from './agents/pi/index.js';
export * from './agents/claude/index.js';
export * from './agents/codex/index.js';
export * from './agents/gemini/index.js';
export * from './agents/qwen/index.js';

/**
 * Every supported agent's definition, by name. Adding an agent is a folder in `lib/agents/<name>/`
 * with its {@link AgentDefinition}, and its row here: its entry in this table, its folder's public
 * face (`export *`), and its two functions. The command line (`--agent`), the fleet's run specs and
 * workers, the ACP server, the demo and the web example read this table.
 */
export const AGENTS = {
  pi: piAgent,
  claude: claudeAgent,
  codex: codexAgent,
  gemini: geminiAgent,
  qwen: qwenAgent,
} as const;

/** The name of a supported agent (a key of {@link AGENTS}). */
export type AgentName = keyof typeof AGENTS;

/** The agents' names, in the table's order. */
export const AGENT_NAMES = Object.keys(AGENTS) as readonly AgentName[];

/**
 * Whether `value` names a supported agent.
 *
 * @example
 * const name = process.env['AGENT'] ?? 'pi';
 * if (isAgentName(name)) console.log(AGENTS[name].displayName);
 */
export function isAgentName(value: string): value is AgentName {
  return Object.hasOwn(AGENTS, value);
}

/** A run's options of the agent `name` (`runPi`'s for `pi`, …). */
export type AgentRunOptions<N extends AgentName> = (typeof AGENTS)[N] extends AgentDefinition<string, infer O, infer _S, infer _U, infer _P> ? O : never;

/** A session's options of the agent `name` (`piSession`'s for `pi`, …). */
export type AgentSessionOptions<N extends AgentName> = (typeof AGENTS)[N] extends AgentDefinition<string, infer _O, infer S, infer _U, infer _P> ? S : never;

/**
 * The definition of the agent `name`, for code that chooses the agent at run time and builds its
 * options as data (from flags, a file, a request): its options are checked against the agent's
 * schema when the run or session is made (a `TypeError` names a wrong one), so they are typed as a
 * plain object here.
 *
 * @example
 * runAgent(agentByName('codex'), { prompt: 'Fix the failing test', sandbox: 'workspace-write' }).subscribe(render);
 */
export function agentByName(name: AgentName): AgentDefinition<AgentName, Readonly<Record<string, unknown>>, Readonly<Record<string, unknown>>, unknown> {
  return AGENTS[name] as unknown as AgentDefinition<AgentName, Readonly<Record<string, unknown>>, Readonly<Record<string, unknown>>, unknown>;
}

/**
 * Runs pi once, as a cold Observable of the run's messages: `runAgent(piAgent, options)` (what a
 * pi run does, and its options: {@link piAgent}).
 *
 * @example
 * runPi({ prompt: 'Explain this repo', provider: 'anthropic', model: 'claude-sonnet-4-5' })
 *   .subscribe((message) => {
 *     if (message.type === 'assistant') process.stdout.write(message.text);
 *   });
 */
export function runPi<Output = unknown>(options: RunPiOptions<Output>): Observable<CliMessage<Output>> {
  return runAgent(piAgent, options) as Observable<CliMessage<Output>>;
}

/**
 * pi as an interactive session, an operator from commands to messages: `agentSession(piAgent, options)`
 * (what a pi session does: {@link piAgent}).
 *
 * @example
 * const commands = new Subject<SessionCommand>();
 * commands.pipe(piSession({ provider: 'anthropic', model: 'claude-sonnet-4-5' })).subscribe(render);
 * commands.next({ type: 'prompt', text: 'What does this repo do?' });
 */
export function piSession(options: PiSessionOptions = {}): OperatorFunction<SessionCommand, SessionMessage> {
  return agentSession(piAgent, options);
}

/**
 * Runs Claude Code once, as a cold Observable of the run's messages: `runAgent(claudeAgent, options)` (what a
 * Claude Code run does, and its options: {@link claudeAgent}).
 *
 * @example
 * runClaudeCode({ prompt: 'Fix the failing test', allowedTools: ['Bash', 'Edit'], maxTurns: 10 })
 *   .subscribe((message) => {
 *     if (message.type === 'assistant') process.stdout.write(message.text);
 *   });
 */
export function runClaudeCode<Output = unknown>(options: RunClaudeCodeOptions<Output>): Observable<CliMessage<Output>> {
  return runAgent(claudeAgent, options) as Observable<CliMessage<Output>>;
}

/**
 * Claude Code as an interactive session, an operator from commands to messages: `agentSession(claudeAgent, options)`
 * (what a Claude Code session does: {@link claudeAgent}).
 *
 * @example
 * const commands = new Subject<SessionCommand>();
 * commands.pipe(claudeCodeSession({ allowedTools: ['Bash', 'Edit'] })).subscribe(render);
 * commands.next({ type: 'prompt', text: 'Fix the failing test' });
 */
export function claudeCodeSession(options: ClaudeCodeSessionOptions = {}): OperatorFunction<SessionCommand, SessionMessage> {
  return agentSession(claudeAgent, options);
}

/**
 * Runs Codex once, as a cold Observable of the run's messages: `runAgent(codexAgent, options)` (what a
 * Codex run does, and its options: {@link codexAgent}).
 *
 * @example
 * runCodex({ prompt: 'Fix the failing test', sandbox: 'workspace-write', approvalPolicy: 'never', idleTimeoutMs: 300_000 })
 *   .subscribe((message) => {
 *     if (message.type === 'assistant') console.log(message.text);
 *   });
 */
export function runCodex<Output = unknown>(options: RunCodexOptions<Output>): Observable<CliMessage<Output>> {
  return runAgent(codexAgent, options) as Observable<CliMessage<Output>>;
}

/**
 * Codex as an interactive session, an operator from commands to messages: `agentSession(codexAgent, options)`
 * (what a Codex session does: {@link codexAgent}).
 *
 * @example
 * const commands = new Subject<SessionCommand>();
 * commands.pipe(codexSession({ sandbox: 'workspace-write', approvalPolicy: 'never' })).subscribe(render);
 * commands.next({ type: 'prompt', text: 'Fix the failing test' });
 */
export function codexSession(options: CodexSessionOptions = {}): OperatorFunction<SessionCommand, SessionMessage> {
  return agentSession(codexAgent, options);
}

/**
 * Runs Gemini CLI once, as a cold Observable of the run's messages: `runAgent(geminiAgent, options)` (what a
 * Gemini CLI run does, and its options: {@link geminiAgent}).
 *
 * @example
 * runGemini({ prompt: 'Fix the failing test', approvalMode: 'yolo', idleTimeoutMs: 120_000 })
 *   .subscribe((message) => {
 *     if (message.type === 'assistant') process.stdout.write(message.text);
 *   });
 */
export function runGemini<Output = unknown>(options: RunGeminiOptions<Output>): Observable<CliMessage<Output>> {
  return runAgent(geminiAgent, options) as Observable<CliMessage<Output>>;
}

/**
 * Gemini CLI as an interactive session, an operator from commands to messages: `agentSession(geminiAgent, options)`
 * (what a Gemini CLI session does: {@link geminiAgent}).
 *
 * @example
 * commands.pipe(geminiSession({ approvalMode: 'yolo' })).subscribe(render);
 */
export function geminiSession(options: GeminiSessionOptions = {}): OperatorFunction<SessionCommand, SessionMessage> {
  return agentSession(geminiAgent, options);
}

/**
 * Runs Qwen Code once, as a cold Observable of the run's messages: `runAgent(qwenAgent, options)` (what a
 * Qwen Code run does, and its options: {@link qwenAgent}).
 *
 * @example
 * runQwen({ prompt: 'Fix the failing test', approvalMode: 'yolo', idleTimeoutMs: 120_000 })
 *   .subscribe((message) => {
 *     if (message.type === 'assistant') process.stdout.write(message.text);
 *   });
 */
export function runQwen<Output = unknown>(options: RunQwenOptions<Output>): Observable<CliMessage<Output>> {
  return runAgent(qwenAgent, options) as Observable<CliMessage<Output>>;
}

/**
 * Qwen Code as an interactive session, an operator from commands to messages: `agentSession(qwenAgent, options)`
 * (what a Qwen Code session does: {@link qwenAgent}).
 *
 * @example
 * commands.pipe(qwenSession({ approvalMode: 'yolo' })).subscribe(render);
 */
export function qwenSession(options: QwenSessionOptions = {}): OperatorFunction<SessionCommand, SessionMessage> {
  return agentSession(qwenAgent, options);
}
