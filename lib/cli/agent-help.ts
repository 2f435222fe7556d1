// What the help texts say of the agents, read from their definitions: their names, and where
// each one's program is found when the command line names none.
import { AGENT_NAMES, AGENTS } from '../agent-table.js';
import { helpLine } from './agent-flags.js';

/** `a`, `a or b`, `a, b or c`. */
function either(words: readonly string[]): string {
  return words.length <= 1 ? (words[0] ?? '') : `${words.slice(0, -1).join(', ')} or ${words.at(-1) ?? ''}`;
}

/** The agents by the names people know them by: `pi, Claude Code, Codex or Gemini CLI`. */
export function agentDisplayNames(): string {
  return either(AGENT_NAMES.map((name) => AGENTS[name].displayName));
}

/** The help of `--executable`: each agent's program when none is named (a native binary of its npm package, else a name on PATH). */
export function executableHelp(): string {
  const program = (name: (typeof AGENT_NAMES)[number]): string => AGENTS[name].executable.names[0] ?? name;
  const native = AGENT_NAMES.filter((name) => AGENTS[name].executable.native !== undefined);
  const plain = AGENT_NAMES.filter((name) => AGENTS[name].executable.native === undefined);
  const defaults = [
    ...(plain.length === 0 ? [] : [`${either(plain.map(program))} on PATH`]),
    ...(native.length === 0 ? [] : [`for ${either(native).replace(/ or (\S+)$/, ' and $1')} the native binary of their npm package, else ${either(native.map(program))} on PATH`]),
  ];
  return helpLine('--executable <path>', `the agent executable (default: ${defaults.join('; ')})`);
}
