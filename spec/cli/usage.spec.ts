import { describe, expect, it } from '@jest/globals';
import { AGENT_NAMES } from '../../lib/agent-table.js';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parseArgsProblem } from '../../lib/cli/usage.js';
import { builtCli } from '../helpers/built-cli.js';

/**
 * What the command prints for `--help` and for a usage error, through real `agent-rx` processes:
 * the whole help on stdout for `--help`; on stderr only the error's line and where the help is.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = [await builtCli()];

interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function cli(args: readonly string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [...CLI, ...args], { cwd: ROOT, env: { ...process.env, NO_COLOR: '' } }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr });
    });
    child.stdin?.end();
  });
}

/**
 * Where a help text's description column is broken: in every paragraph, the lines with a term and
 * a description (two or more spaces between them) and the lines that continue a description must
 * start their description at one column. A continuation may go deeper only inside a bracket that
 * the description opened (the worker's JSON example). One problem per line, with its line number.
 */
function alignmentProblems(text: string): string[] {
  const problems: string[] = [];
  const lines = text.split('\n');
  let column: number | undefined;
  let open = 0;
  lines.forEach((line, index) => {
    const at = `line ${index + 1} (${JSON.stringify(line)})`;
    if (line.trim() === '') {
      column = undefined;
      return;
    }
    const entry = /^(\s*\S.*?\S?)( {2,})(\S.*)$/.exec(line);
    const indent = line.length - line.trimStart().length;
    if (entry !== null && indent < 3) {
      const start = (entry[1] ?? '').length + (entry[2] ?? '').length;
      if (column !== undefined && start !== column) problems.push(`${at}: its description starts at column ${start}, not ${column}`);
      column ??= start;
      open = depth(entry[3] ?? '');
    } else if (indent >= 3 && column !== undefined) {
      const nested = open > 0 && indent > column;
      if (indent !== column && !nested) problems.push(`${at}: it continues a description at column ${indent}, not ${column}`);
      open += depth(line);
    } else if (entry !== null && indent >= 3) {
      // A paragraph's first two-column line may be indented (the second `usage:` line).
      column = (entry[1] ?? '').length + (entry[2] ?? '').length;
      open = depth(entry[3] ?? '');
    } else {
      open = 0;
    }
  });
  return problems;
}

// How many brackets `text` leaves open.
function depth(text: string): number {
  return (text.match(/[{[]/g)?.length ?? 0) - (text.match(/[}\]]/g)?.length ?? 0);
}

const COMMANDS = ['run', 'chat', 'acp', 'worker'] as const;

describe('agent-rx --help', () => {
  it('finds a description out of column, and a continuation out of column, and lets a nested one be', () => {
    const aligned = 'options:\n  --a <x>     does a\n  --bb        does b, and\n              more of b\n  --long-name <value>\n              does c\n';
    expect(alignmentProblems(aligned)).toEqual([]);
    expect(alignmentProblems('options:\n  --a <x>     does a\n  --bb         does b\n')).toEqual(['line 3 ("  --bb         does b"): its description starts at column 15, not 14']);
    expect(alignmentProblems('options:\n  --a <x>     does a, and\n             more\n')).toEqual(['line 3 ("             more"): it continues a description at column 13, not 14']);
    expect(alignmentProblems('options:\n  --c <f>     a file:\n              { "a": 1,\n                "b": 2 }\n  --d         does d\n')).toEqual([]);
    expect(alignmentProblems('options:\n  --c <f>     a file:\n              "a": 1,\n                "b": 2\n')).toHaveLength(1);
  });

  it.each([['agent-rx', ''], ...COMMANDS.map((command) => [`agent-rx ${command}`, command])])('%s --help: the whole help on stdout, exit 0, every description in its column', async (name, command) => {
    const result = await cli(command === '' ? ['--help'] : [command, '--help']);
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(command === '' ? /^usage: agent-rx <command>\n/ : new RegExp(`^usage: ${name} `));
    expect(result.stdout.split('\n').length).toBeGreaterThan(8);
    expect(alignmentProblems(result.stdout)).toEqual([]);
  });
});

describe('a usage error', () => {
  it.each<[string, readonly string[], string]>([
    ['run: an unknown option', ['run', '--bogus', 'hi'], 'agent-rx run: unknown option --bogus'],
    ['run: an option without its value', ['run', 'hi', '--timeout'], 'agent-rx run: --timeout needs a value'],
    ['run: a value given to a switch', ['run', '--json=yes', 'hi'], 'agent-rx run: --json takes no value'],
    ['run: a bad value', ['run', '--agent', 'gpt', 'hi'], `agent-rx run: --agent must be one of ${AGENT_NAMES.join(', ')}; got gpt`],
    ['chat: an unknown option', ['chat', '--timeout', '5s'], 'agent-rx chat: unknown option --timeout'],
    ['acp: an argument', ['acp', 'hello'], 'agent-rx acp: unexpected argument hello: this command takes options only'],
    ['worker: an unknown option', ['worker', '--bogus'], 'agent-rx worker: unknown option --bogus'],
    ['an unknown command', ['frob'], 'agent-rx: unknown command "frob"'],
  ])('%s: its line, then where the help is, on stderr; exit 2', async (_name, args, line) => {
    const result = await cli(args);
    const command = args[0] === 'frob' ? 'agent-rx' : `agent-rx ${args[0] ?? ''}`;
    expect(result).toEqual({ code: 2, stdout: '', stderr: `${line}\nsee '${command} --help'\n` });
  });
});

describe('parseArgsProblem', () => {
  const OPTIONS = { timeout: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } as const;
  const problem = (args: readonly string[], allowPositionals = true): string => {
    try {
      parseArgs({ args: [...args], options: OPTIONS, allowPositionals });
    } catch (error) {
      return parseArgsProblem(error);
    }
    throw new Error(`parseArgs took ${JSON.stringify(args)}`);
  };

  it("says what parseArgs refused in the command's words, whatever its own text", () => {
    expect(problem(['--bogus'])).toBe('unknown option --bogus');
    expect(problem(['--bogus'], false)).toBe('unknown option --bogus');
    expect(problem(['-5'])).toBe('unknown option -5 (an argument that starts with a dash goes after --)');
    expect(problem(['--timeout'])).toBe('--timeout needs a value');
    expect(problem(['--timeout', '--json'])).toBe('--timeout needs a value (one that starts with a dash is written --timeout=<value>)');
    expect(problem(['--json=yes'])).toBe('--json takes no value');
    expect(problem(['--help=1'])).toBe('--help takes no value');
    expect(problem(['hello'], false)).toBe('unexpected argument hello: this command takes options only');
  });

  it('keeps the message of an error it does not know', () => {
    expect(parseArgsProblem(new Error('something else'))).toBe('something else');
    expect(parseArgsProblem('a string')).toBe('a string');
  });
});
