// The agents' own flags on the command line, read from their definitions: what parseArgs must know,
// the help lines, and the options a given flag sets for the chosen agent.
import type { AgentFlag } from '../agents/definition.js';
import { AGENT_NAMES, AGENTS, type AgentName } from '../agent-table.js';

/** Which commands a flag is for: a run's (`run`) or a session's (`chat`, `acp`). */
export type FlagUse = 'run' | 'session';

const takes = (flag: AgentFlag, use: FlagUse): boolean => use === 'run' || flag.takes === 'both';

/** Every agent's flags of one use, by flag name, with the agents that have each (in the table's order). */
function flagsOf(use: FlagUse): Map<string, { readonly value: string; readonly by: { readonly agent: AgentName; readonly flag: AgentFlag }[] }> {
  const flags = new Map<string, { readonly value: string; readonly by: { readonly agent: AgentName; readonly flag: AgentFlag }[] }>();
  for (const agent of AGENT_NAMES) {
    for (const flag of AGENTS[agent].flags) {
      if (!takes(flag, use)) continue;
      const known = flags.get(flag.name) ?? { value: flag.value, by: [] };
      known.by.push({ agent, flag });
      flags.set(flag.name, known);
    }
  }
  return flags;
}

/** What node:util's parseArgs must know of the agents' flags of one use. */
export function agentFlagOptions(use: FlagUse): Record<string, { readonly type: 'string' }> {
  return Object.fromEntries([...flagsOf(use).keys()].map((name) => [name, { type: 'string' as const }]));
}

/** The help lines of the agents' flags of one use: each flag once, what it does for each agent that has it. */
export function agentFlagHelp(use: FlagUse): string {
  return [...flagsOf(use)].map(([name, { value, by }]) => helpLine(`--${name} ${value}`, by.map(({ flag }) => flag.help).join('; '))).join('');
}

/** The column where a help line's description starts, and how wide the help is. */
const COLUMN = 26;
const WIDTH = 104;

/** One option of a help text: the flag, then its description in the column, wrapped under itself. */
export function helpLine(flag: string, description: string): string {
  const head = `  ${flag}`;
  const lines: string[] = [];
  let line = '';
  for (const word of description.split(' ')) {
    if (line !== '' && COLUMN + line.length + 1 + word.length > WIDTH) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  lines.push(line);
  const first = head.length + 2 <= COLUMN ? `${head.padEnd(COLUMN)}${lines[0] ?? ''}` : `${head}\n${' '.repeat(COLUMN)}${lines[0] ?? ''}`;
  return `${[first, ...lines.slice(1).map((rest) => `${' '.repeat(COLUMN)}${rest}`)].join('\n')}\n`;
}

/**
 * The options the agents' flags given on the command line set for `agent`, or what is wrong: a
 * flag that is not one of its own (`--sandbox is codex's, not pi's`), or a value it does not take.
 */
export function agentFlagValues(agent: AgentName, values: Readonly<Record<string, unknown>>, use: FlagUse): Readonly<Record<string, unknown>> | string {
  const own = new Map(AGENTS[agent].flags.filter((flag) => takes(flag, use)).map((flag) => [flag.name, flag]));
  let options: Readonly<Record<string, unknown>> = {};
  for (const [name, { by }] of flagsOf(use)) {
    const value = values[name];
    if (typeof value !== 'string') continue;
    const flag = own.get(name);
    if (flag === undefined) {
      const owners = by.map((entry) => AGENTS[entry.agent].displayName).join(' and ');
      return `--${name} is not an option of ${AGENTS[agent].displayName} (${owners} ${by.length === 1 ? 'has' : 'have'} it)`;
    }
    const set = flag.options(value);
    if (typeof set === 'string') return set;
    options = { ...options, ...set };
  }
  return options;
}
