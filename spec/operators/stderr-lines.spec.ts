import { describe, expect, it } from '@jest/globals';
import { firstMeaningfulLine, meaningfulLines, quoted } from '../../lib/operators/stderr-lines.js';

// What of an agent's stderr explains a failed exit: the generic reading every dialect starts from.

describe('meaningfulLines', () => {
  it('leaves out blank lines, stack frames, Node\'s version line, bare links and paths, and "see …" hints', () => {
    const stderr = [
      '',
      'Error: the config file is not valid JSON',
      '    at parse (file:///opt/agent/config.js:10:3)',
      '    at async main (file:///opt/agent/cli.js:2:1)',
      'See the configuration docs:',
      '  https://agent.example/docs/config',
      '  /opt/agent/docs/config.md',
      '  ~/.agent/config.json',
      '  ./docs/config.md',
      'For more information, run agent --help',
      '',
      'Node.js v22.11.0',
    ].join('\n');
    expect(meaningfulLines(stderr)).toEqual(['Error: the config file is not valid JSON']);
  });

  it('leaves out what Node prints around an uncaught error and a warning: the source line and its marker', () => {
    // As Node 20 prints an uncaught error thrown by an ES module, after a process warning.
    const stderr = [
      '(node:4242) ExperimentalWarning: VM Modules is an experimental feature',
      '(Use `node --trace-warnings ...` to show where the warning was created)',
      'file:///opt/agent/cli.mjs:2',
      "throw new Error('boom: config missing');",
      '      ^',
      '',
      'Error: boom: config missing',
      '    at file:///opt/agent/cli.mjs:2:7',
      '',
      'Node.js v20.20.2',
    ].join('\n');
    expect(meaningfulLines(stderr)).toEqual(['Error: boom: config missing']);
  });

  it("also leaves out what the agent's own noise patterns match, and keeps lines that merely contain a path or a link", () => {
    const stderr = 'Loading plugins…\nError: cannot read /etc/agent.json\nUpdate your environment and try again (see https://agent.example)!\n';
    expect(meaningfulLines(stderr, [/^Loading plugins/])).toEqual(['Error: cannot read /etc/agent.json', 'Update your environment and try again (see https://agent.example)!']);
  });

  it('trims each line, and gives nothing for nothing', () => {
    expect(meaningfulLines('  spaced out \r\n')).toEqual(['spaced out']);
    expect(meaningfulLines('')).toEqual([]);
    expect(meaningfulLines('\n   \n\t\n')).toEqual([]);
  });
});

describe('firstMeaningfulLine', () => {
  it('is the first line that says what is wrong, not the last one', () => {
    expect(firstMeaningfulLine('Error: first\nError: second\n/opt/docs/errors.md\n')).toBe('Error: first');
    expect(firstMeaningfulLine('    at x (y.js:1:1)\nNode.js v20.1.0\n')).toBeUndefined();
  });

  it('cuts a long line at 500 characters', () => {
    const long = `Error: ${'x'.repeat(600)}`;
    expect(firstMeaningfulLine(`${long}\n`)).toBe(`${long.slice(0, 500)}…`);
    expect(quoted(undefined)).toBeUndefined();
  });
});
