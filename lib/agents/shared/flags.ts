// The usual shapes of an agent's command-line flags.
import type { AgentFlag } from '../definition.js';

/** A flag whose value is the option's text (`--provider anthropic`). */
export function textFlag(name: string, option: string, value: string, help: string, takes: AgentFlag['takes'] = 'both'): AgentFlag {
  return { name, value, help, takes, options: (text) => ({ [option]: text }) };
}

/** A flag whose value is a comma-separated list (`--allowed-tools Bash,Edit`). */
export function listFlag(name: string, option: string, value: string, help: string, takes: AgentFlag['takes'] = 'both'): AgentFlag {
  return {
    name,
    value,
    help,
    takes,
    options: (text) => ({
      [option]: text
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item !== ''),
    }),
  };
}

/** A flag whose value is one of `choices` (`--sandbox read-only`). */
export function choiceFlag(name: string, option: string, choices: readonly string[], value: string, help: string, takes: AgentFlag['takes'] = 'both'): AgentFlag {
  return {
    name,
    value,
    help,
    takes,
    options: (text) => (choices.includes(text) ? { [option]: text } : `--${name} must be one of ${choices.join(', ')}; got '${text}'`),
  };
}

/**
 * `--session <s>` of a run: the named choices as they are (`new`, `continue`), anything else an id
 * (the option `{ [key]: id }`).
 */
export function sessionFlag(named: readonly string[], key: string, help: string): AgentFlag {
  return {
    name: 'session',
    value: '<s>',
    help,
    takes: 'run',
    options: (text) => ({ session: named.includes(text) ? text : { [key]: text } }),
  };
}
