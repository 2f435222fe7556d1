/**
 * Which agent CLI the conformance specs run: the pinned devDependency, unless an environment
 * variable names another program (`AGENT_RX_CLAUDE_BIN=/path/to/claude`, see `CLI_BIN_VARIABLES`).
 * `npm run conformance:latest` sets them to the newest published versions. A JavaScript file
 * (`.js`, `.mjs`, `.cjs`) is run by this process's Node; anything else is run as it is.
 */
import { existsSync } from 'node:fs';
import { isAbsolute } from 'node:path';

/** The agents with conformance specs against their real CLI. */
export type ConformanceAgent = 'pi' | 'claude' | 'codex' | 'gemini' | 'qwen';

/** The variable that names each agent's program, instead of the pinned one. */
export const CLI_BIN_VARIABLES: Readonly<Record<ConformanceAgent, string>> = {
  pi: 'AGENT_RX_PI_BIN',
  claude: 'AGENT_RX_CLAUDE_BIN',
  codex: 'AGENT_RX_CODEX_BIN',
  gemini: 'AGENT_RX_GEMINI_BIN',
  qwen: 'AGENT_RX_QWEN_BIN',
};

/** A program and the arguments that go before the agent's own. */
export interface CliCommand {
  readonly command: string;
  readonly args: readonly string[];
}

/** The program named by the agent's variable, or undefined when it is unset or empty. */
export function cliOverride(agent: ConformanceAgent): CliCommand | undefined {
  const variable = CLI_BIN_VARIABLES[agent];
  const path = process.env[variable];
  if (path === undefined || path === '') return undefined;
  if (!isAbsolute(path) || !existsSync(path)) throw new Error(`${variable} must name an existing file by its absolute path, not ${path}`);
  return /\.[cm]?js$/.test(path) ? { command: process.execPath, args: [path] } : { command: path, args: [] };
}

/** The agent's program: the one its variable names, else `pinned()`. */
export function cliUnderTest(agent: ConformanceAgent, pinned: () => CliCommand): CliCommand {
  return cliOverride(agent) ?? pinned();
}

/**
 * Run options that name the program of the agent's variable, or none, for specs whose runs find
 * the pinned CLI themselves (without `executable`).
 */
export function executableOptions(agent: ConformanceAgent): { readonly executable?: string; readonly executableArgs?: readonly string[] } {
  const found = cliOverride(agent);
  return found === undefined ? {} : { executable: found.command, executableArgs: found.args };
}
