import type { Observable, OperatorFunction } from 'rxjs';
import type { CliMessage, SessionCommand, SessionMessage } from '../messages.js';
import type { Dialect } from '../operators/dialect.js';
import { runClaudeCode } from '../sources/run-claude-code.js';
import { runCodex } from '../sources/run-codex.js';
import { runGemini } from '../sources/run-gemini.js';
import { runPi } from '../sources/run-pi.js';
import { piSession } from '../sources/pi-session.js';
import { claudeCodeSession } from '../sources/claude-code-session.js';
import { codexSession } from '../sources/codex-session.js';
import { geminiSession } from '../sources/acp-session.js';
import type { ProcessItem } from '../process/items.js';
import { claudeDialect, claudeOutputToMessages, type ClaudeState } from './claude/dialect.js';
import type { RunClaudeCodeOptions } from './claude/options.js';
import { codexDialect, codexOutputToMessages, type CodexState } from './codex/dialect.js';
import type { CodexSessionOptions, RunCodexOptions } from './codex/options.js';
import { geminiDialect, geminiOutputToMessages, type GeminiState } from './gemini/dialect.js';
import type { GeminiSessionOptions, RunGeminiOptions } from './gemini/options.js';
import { piDialect, piOutputToMessages, type PiState } from './pi/dialect.js';
import type { RunPiOptions } from './pi/options.js';
import { recognizesPiOutput } from './pi/recognize.js';
import { recognizesClaudeOutput } from './claude/recognize.js';
import { recognizesCodexOutput } from './codex/recognize.js';
import { recognizesGeminiOutput } from './gemini/recognize.js';

/** One supported agent: what a command line, a demo or a server needs to offer it. */
export interface AgentEntry<O, S, SO = Omit<O, 'prompt'>> {
  /** The name to choose it by (`--agent pi`). */
  readonly name: string;
  /** The name people know it by, for messages. */
  readonly displayName: string;
  /** The executable found on PATH when none is given. */
  readonly executable: string;
  /** Its dialect. */
  readonly dialect: (options?: { readonly resuming?: boolean }) => Dialect<S>;
  /** Its whole pipeline, `agentOutputToMessages(dialect(options))`: for replaying recorded output. */
  readonly output: (options?: { readonly resuming?: boolean }) => OperatorFunction<ProcessItem, CliMessage>;
  /** Its source: one run per subscription. */
  readonly run: (options: O) => Observable<CliMessage>;
  /** Its interactive session: one process per subscription, many turns. */
  readonly session: (options: SO) => OperatorFunction<SessionCommand, SessionMessage>;
  /** Whether a line of stdout is one only this agent prints (its header, mostly): how a recording's agent is told. */
  readonly recognizesOutput: (line: string) => boolean;
}

/**
 * Every supported agent, by name. Adding an agent is a folder in `lib/agents/<name>/`, its source,
 * and one entry here; the command line's `--agent`, the demo and the web example read this table.
 * Each entry is an {@link AgentEntry}.
 */
export const AGENTS = {
  pi: {
    name: 'pi',
    displayName: 'pi',
    executable: 'pi',
    dialect: piDialect,
    output: piOutputToMessages,
    run: runPi,
    session: piSession,
    recognizesOutput: recognizesPiOutput,
  } satisfies AgentEntry<RunPiOptions, PiState>,
  claude: {
    name: 'claude',
    displayName: 'Claude Code',
    executable: 'claude',
    dialect: claudeDialect,
    output: claudeOutputToMessages,
    run: runClaudeCode,
    session: claudeCodeSession,
    recognizesOutput: recognizesClaudeOutput,
  } satisfies AgentEntry<RunClaudeCodeOptions, ClaudeState>,
  codex: {
    name: 'codex',
    displayName: 'Codex',
    executable: 'codex',
    dialect: codexDialect,
    output: codexOutputToMessages,
    run: runCodex,
    session: codexSession,
    recognizesOutput: recognizesCodexOutput,
  } satisfies AgentEntry<RunCodexOptions, CodexState, CodexSessionOptions>,
  gemini: {
    name: 'gemini',
    displayName: 'Gemini CLI',
    executable: 'gemini',
    dialect: geminiDialect,
    output: geminiOutputToMessages,
    run: runGemini,
    session: geminiSession,
    recognizesOutput: recognizesGeminiOutput,
  } satisfies AgentEntry<RunGeminiOptions, GeminiState, GeminiSessionOptions>,
} as const;

/** The name of a supported agent: `pi`, `claude`, `codex` or `gemini` (a key of {@link AGENTS}). */
export type AgentName = keyof typeof AGENTS;

/** The agents' names, in the table's order. */
export const AGENT_NAMES = Object.keys(AGENTS) as readonly AgentName[];

/**
 * Whether `value` names a supported agent.
 *
 * @example
 * const name = process.argv[2] ?? 'pi';
 * if (!isAgentName(name)) throw new TypeError(`not an agent: ${name} (one of ${AGENT_NAMES.join(', ')})`);
 * console.log(AGENTS[name].displayName); // `name` is an AgentName here
 */
export function isAgentName(value: string): value is AgentName {
  return Object.hasOwn(AGENTS, value);
}
