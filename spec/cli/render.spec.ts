import { describe, expect, it } from '@jest/globals';
import { AGENTS, type CliMessage, type TerminalFailed } from '../../lib/index.js';
import { colorEnabled } from '../../lib/cli/ansi.js';
import { createRenderer, renderIntro } from '../../lib/cli/render.js';
import { terminalFailed } from '../helpers/items.js';

// Renders messages in order with colours off, each at the same elapsed time.
function render(messages: readonly CliMessage[], elapsedMs = 2500): string {
  const renderer = createRenderer({ color: false });
  return messages.map((message) => renderer.render(message, elapsedMs)).join('');
}

const usage = { inputTokens: 120, outputTokens: 30, cacheReadTokens: 0, cacheWriteTokens: 0, totalTokens: 150 };
const failure: TerminalFailed = terminalFailed({ message: 'pi reported an error: 500 fake internal server error' });

describe('createRenderer', () => {
  it('streams assistant deltas inline as one paragraph, after the session line', () => {
    expect(
      render([
        { type: 'session.started', sessionId: 's-1' },
        { type: 'assistant', text: 'Hello ' },
        { type: 'assistant', text: 'wor' },
        { type: 'assistant', text: 'ld.' },
      ]),
    ).toBe('session s-1\n\nHello world.');
  });

  it('writes each delta as soon as it comes, with nothing held back', () => {
    const renderer = createRenderer({ color: false });
    expect(renderer.render({ type: 'assistant', text: 'Hel' }, 0)).toBe('Hel');
    expect(renderer.render({ type: 'assistant', text: 'lo' }, 0)).toBe('lo');
  });

  it('shows a thought under a "thinking" header, each line behind a bar', () => {
    expect(render([{ type: 'assistant.thought', text: 'First this.\nThen that.\n' }])).toBe('thinking\n│ First this.\n│ Then that.\n');
  });

  it('shows a tool call with a summary of its input, and its output once: streamed by its updates, the rest with the result', () => {
    expect(
      render([
        { type: 'assistant', text: 'Let me look.' },
        { type: 'tool.call', toolCallId: 't1', name: 'bash', input: { command: 'ls\n-la' } },
        { type: 'tool.update', toolCallId: 't1', name: 'bash', output: '' },
        { type: 'tool.update', toolCallId: 't1', name: 'bash', output: 'a.txt\n' },
        { type: 'tool.update', toolCallId: 't1', name: 'bash', output: 'a.txt\n' },
        { type: 'tool.completed', toolCallId: 't1', name: 'bash', output: 'a.txt\nb.txt\n' },
        { type: 'tool.call', toolCallId: 't2', name: 'read', input: { path: 'a.txt', offset: 1 }, kind: 'read', summary: 'a.txt' },
        { type: 'tool.completed', toolCallId: 't2', name: 'read', output: 'one line\n' },
        { type: 'assistant', text: 'Done.' },
      ]),
    ).toBe(
      [
        'Let me look.',
        '',
        '▸ bash  ls ⏎ -la',
        '    a.txt',
        '    b.txt',
        '  ✓ bash',
        '▸ read  a.txt',
        '  ✓ read  one line',
        '',
        'Done.',
      ].join('\n'),
    );
  });

  it('cuts a long tool input and a long output', () => {
    const output = Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n');
    const lines = render([
      { type: 'tool.call', toolCallId: 't1', name: 'upload', input: { path: 'x', content: 'y'.repeat(200) } },
      { type: 'tool.completed', toolCallId: 't1', name: 'upload', output },
    ]).split('\n');
    expect(lines[0]).toHaveLength('▸ upload  '.length + 100);
    expect(lines[0]?.endsWith('yyy…')).toBe(true);
    expect(lines.slice(1)).toEqual(['  ✓ upload', '    line 1', '    line 2', '    line 3', '    line 4', '    … 6 more lines', '']);
    expect(render([{ type: 'tool.call', toolCallId: 't1', name: 'Bash', input: { command: `echo ${'z'.repeat(200)}` } }]).trimEnd()).toHaveLength('▸ Bash  '.length + 100);
  });

  it('marks a failed tool with ✗ and its output, and an empty output as such', () => {
    expect(
      render([
        { type: 'tool.call', toolCallId: 't1', name: 'read', input: { path: 'missing.txt' } },
        { type: 'tool.failed', toolCallId: 't1', name: 'read', output: 'ENOENT: no such file or directory\n' },
        { type: 'tool.completed', toolCallId: 't2', name: 'bash', output: '' },
      ]),
    ).toBe('▸ read  missing.txt\n  ✗ read  ENOENT: no such file or directory\n  ✓ bash  (no output)\n');
  });

  it('announces a retry of the agent with attempt, delay and reason', () => {
    expect(
      render([
        { type: 'session.started', sessionId: 's-1' },
        { type: 'agent.retry', attempt: 1, maxAttempts: 3, delayMs: 2000, reason: '500 fake internal server error' },
      ]),
    ).toBe('session s-1\n⟳ retry 1/3 in 2.0s · 500 fake internal server error\n');
  });

  it('ends a completed run with a status line: stop reason, tokens and duration, after a blank line', () => {
    expect(
      render([
        { type: 'session.started', sessionId: 's-1' },
        { type: 'assistant', text: 'Hi.' },
        { type: 'terminal.completed', stopReason: 'end_turn', usage: { ...usage, cacheReadTokens: 7, cost: 0.01234 }, sessionId: 's-1' },
      ]),
    ).toBe('session s-1\n\nHi.\n\n✓ completed · 150 tokens (120 in, 30 out, 7 cache read, $0.0123) · 2.5s · first token 2.5s\n');
  });

  it('says where the time went: the first text, and the tools (overlapping calls counted once)', () => {
    const renderer = createRenderer({ color: false });
    const at = (elapsedMs: number, message: CliMessage): string => renderer.render(message, elapsedMs);
    at(0, { type: 'session.started', sessionId: 's-1' });
    at(1100, { type: 'assistant', text: 'Let me look.' });
    at(1200, { type: 'tool.call', toolCallId: 't1', name: 'bash', input: { command: 'sleep 1' } });
    at(1700, { type: 'tool.call', toolCallId: 't2', name: 'bash', input: { command: 'sleep 2' } });
    at(2200, { type: 'tool.completed', toolCallId: 't1', name: 'bash', output: '' });
    at(3200, { type: 'tool.failed', toolCallId: 't2', name: 'bash', output: 'killed' });
    at(3500, { type: 'assistant', text: 'Done.' });
    // t3 never completes: it counts until the end.
    at(3600, { type: 'tool.call', toolCallId: 't3', name: 'read', input: { path: 'a' } });
    const last = at(4200, { type: 'terminal.completed', stopReason: 'end_turn' }).trimEnd().split('\n').at(-1);
    // 1.2–3.2 s (t1 and t2 overlap) and 3.6–4.2 s.
    expect(last).toBe('✓ completed · 4.2s · first token 1.1s · tools 2.6s (3 calls)');
  });

  it('says nothing of a first token or tools the run did not have, in a failure too', () => {
    expect(render([{ type: 'terminal.completed', stopReason: 'end_turn' }], 850)).toBe('✓ completed · 850ms\n');
    const renderer = createRenderer({ color: false });
    renderer.render({ type: 'tool.call', toolCallId: 't1', name: 'bash', input: { command: 'x' } }, 100);
    renderer.render({ type: 'tool.completed', toolCallId: 't1', name: 'bash', output: 'x' }, 600);
    expect(renderer.render(failure, 1000).trimEnd().split('\n').at(-1)).toBe('✗ failed · agent-error: pi reported an error: 500 fake internal server error · 1.0s · tools 500ms (1 call)');
    // Each renderer times its own run.
    expect(createRenderer({ color: false }).render({ type: 'terminal.completed', stopReason: 'end_turn' }, 1000)).toBe('✓ completed · 1.0s\n');
  });

  it.each([
    ['claude', 'Bash', { command: 'npm test', description: 'Run the tests' }, 'npm test'],
    ['claude', 'Read', { file_path: '/src/a.ts', offset: 10 }, '/src/a.ts'],
    ['claude', 'Write', { file_path: '/src/b.ts', content: 'x\ny' }, '/src/b.ts'],
    ['claude', 'Edit', { file_path: '/src/c.ts', old_string: 'a', new_string: 'b' }, '/src/c.ts'],
    ['claude', 'Grep', { pattern: 'TODO', path: 'lib', output_mode: 'content' }, 'TODO  in lib'],
    ['claude', 'Glob', { pattern: '**/*.ts' }, '**/*.ts'],
    ['claude', 'WebFetch', { url: 'https://example.invalid/', prompt: 'Summarise' }, 'https://example.invalid/'],
    ['pi', 'bash', { command: 'ls -la', timeout: 5 }, 'ls -la'],
    ['pi', 'read', { path: 'README.md', limit: 20 }, 'README.md'],
    ['pi', 'edit', { path: 'a.txt', oldText: 'x', newText: 'y' }, 'a.txt'],
    ['codex', 'command_execution', { command: "/bin/bash -lc 'echo it'\\''s here'" }, "echo it's here"],
    ['codex', 'command_execution', { command: ['git', 'status'] }, 'git status'],
    ['gemini', 'run_shell_command', { command: 'echo hello', description: 'Run echo hello' }, 'echo hello'],
    ['gemini', 'read_file', { file_path: 'missing.txt' }, 'missing.txt'],
    ['gemini', 'write_file', { file_path: 'out.txt', content: 'x' }, 'out.txt'],
    ['gemini', 'list_directory', { dir_path: '.' }, '.'],
    ['claude', 'Bash', {}, '{}'],
    ['claude', 'Read', { file_path: 42 }, '{"file_path":42}'],
    ['claude', 'mcp__calc__add', { a: 1, b: 2 }, '{"a":1,"b":2}'],
    ['pi', 'upload', { name: 'one\ntwo' }, 'one ⏎ two'],
  ] as const)("shows %s's %s call on one line, as its definition summarises it", (agent, name, input, summary) => {
    // What the dialect gives each tool.call (mapToCliMessage): its kind and its summary.
    const vocabulary = AGENTS[agent].dialect().tools;
    const described = vocabulary?.summary(name, input);
    const call = { type: 'tool.call', toolCallId: 't', name, input, ...(described === undefined ? {} : { summary: described }) } as const;
    expect(render([call])).toBe(`▸ ${name}  ${summary}\n`);
  });

  it('streams a growing output line by line, holds a line until it ends, and shows the head once with what was left out', () => {
    const lines = Array.from({ length: 7 }, (_, i) => `line ${i + 1}\n`);
    expect(
      render([
        { type: 'tool.call', toolCallId: 't1', name: 'bash', input: { command: 'seq' } },
        { type: 'tool.update', toolCallId: 't1', name: 'bash', output: 'line 1\nli' },
        { type: 'tool.update', toolCallId: 't1', name: 'bash', output: lines.slice(0, 3).join('') },
        { type: 'tool.update', toolCallId: 't1', name: 'bash', output: lines.slice(0, 6).join('') },
        { type: 'tool.completed', toolCallId: 't1', name: 'bash', output: lines.join('') },
      ]).split('\n'),
    ).toEqual(['▸ bash  seq', '    line 1', '    line 2', '    line 3', '    line 4', '    … 3 more lines', '  ✓ bash', '']);
  });

  it('names the tool above its streamed lines when another tool wrote in between; a failed result is marked', () => {
    expect(
      render([
        { type: 'tool.call', toolCallId: 'a', name: 'Bash', input: { command: 'make' } },
        { type: 'tool.call', toolCallId: 'b', name: 'Bash', input: { command: 'npm test' } },
        { type: 'tool.update', toolCallId: 'a', name: 'Bash', output: 'cc main.c\n' },
        { type: 'tool.update', toolCallId: 'a', name: 'Bash', output: 'cc main.c\ncc util.c\n' },
        { type: 'tool.update', toolCallId: 'b', name: 'Bash', output: 'PASS one\n' },
        { type: 'tool.failed', toolCallId: 'a', name: 'Bash', output: 'cc main.c\ncc util.c\nerror: oops\n' },
        { type: 'tool.completed', toolCallId: 'b', name: 'Bash', output: 'PASS one\n' },
      ]).split('\n'),
    ).toEqual([
      '▸ Bash  make',
      '▸ Bash  npm test',
      '  ⋯ Bash',
      '    cc main.c',
      '    cc util.c',
      '  ⋯ Bash',
      '    PASS one',
      '  ⋯ Bash',
      '    error: oops',
      '  ✗ Bash',
      '  ✓ Bash',
      '',
    ]);
  });

  it('an update that rewrites the output is a progress hint; the result then shows the whole output', () => {
    expect(
      render([
        { type: 'tool.call', toolCallId: 't1', name: 'todo_list', input: { items: [] } },
        { type: 'tool.update', toolCallId: 't1', name: 'todo_list', output: '[ ] a\n[ ] b\n' },
        { type: 'tool.update', toolCallId: 't1', name: 'todo_list', output: '[x] a\n[ ] b\n' },
        { type: 'tool.update', toolCallId: 't1', name: 'todo_list', output: '[x] a\n[ ] b\n' },
        { type: 'tool.completed', toolCallId: 't1', name: 'todo_list', output: '[x] a\n[x] b\n' },
      ]).split('\n'),
    ).toEqual(['▸ todo_list  {"items":[]}', '    [ ] a', '    [ ] b', '  ⋯ todo_list  [ ] b', '  ✓ todo_list', '    [x] a', '    [x] b', '']);
  });

  it('names the session in the status line when no session message came before', () => {
    expect(render([{ type: 'terminal.completed', stopReason: 'max_tokens', agentStopReason: 'length' }], 850)).toBe('✓ completed · max_tokens · 850ms\n');
    expect(render([{ type: 'terminal.completed', stopReason: 'other', agentStopReason: 'pause_turn' }], 850)).toBe('✓ completed · pause_turn · 850ms\n');
    expect(render([{ type: 'terminal.completed', stopReason: 'end_turn', sessionId: 's-2' }], 850)).toBe(
      '✓ completed · 850ms · session s-2\n',
    );
  });

  it('ends a failed run with the reason and message', () => {
    expect(render([{ type: 'session.started', sessionId: 's-1' }, failure], 61_000)).toBe(
      'session s-1\n\n✗ failed · agent-error: pi reported an error: 500 fake internal server error · 1m 01s\n',
    );
  });

  it('adds the exit code, the signal, the end of stderr and unreadable output to a failure', () => {
    const failed: TerminalFailed = {
      ...failure,
      reason: 'exit',
      message: 'pi exited with code 1',
      exitCode: 1,
      signal: null,
      stderr: 'one\ntwo\nthree\nfour\nfive\nsix\n',
      invalidOutputLines: [{ lineNumber: 3, reason: 'not-json', detail: 'Unexpected token', text: 'oops', bytes: 4, truncated: false }],
      invalidOutputLinesOmitted: 1,
      agentError: 'rate limited',
    };
    expect(render([failed], 100).split('\n')).toEqual([
      '✗ failed · exit: pi exited with code 1 · exit 1 · 100ms',
      '  agent error: rate limited',
      '  stderr │ two',
      '  stderr │ three',
      '  stderr │ four',
      '  stderr │ five',
      '  stderr │ six',
      '  2 unreadable output lines, first: line 3 (not-json) oops',
      '',
    ]);
    expect(render([{ ...failure, reason: 'exit', message: 'pi was killed', exitCode: null, signal: 'SIGKILL' }], 100)).toBe(
      '✗ failed · exit: pi was killed · SIGKILL · 100ms\n',
    );
  });

  it('closes a paragraph cut short by an interrupt, then reports the stop', () => {
    const renderer = createRenderer({ color: false });
    const report = { pid: 1, requested: true, cause: 'unsubscribe' as const, exitedGracefully: true, killed: [], confirmed: true, survivors: [], durationMs: 25, errors: [] };
    expect(renderer.render({ type: 'assistant', text: 'Half a sen' }, 0) + renderer.interrupted(1200) + renderer.stopped(report)).toBe(
      'Half a sen\n\n⏹ interrupted after 1.2s, stopping the agent\n  agent stopped gracefully in 25ms\n',
    );
  });

  it('names a signal other than Ctrl-C in the stop line', () => {
    const renderer = createRenderer({ color: false });
    expect(renderer.interrupted(1200, 'SIGTERM')).toBe('⏹ SIGTERM received after 1.2s, stopping the agent\n');
    expect(renderer.interrupted(1200, 'SIGINT')).toBe(renderer.interrupted(1200));
  });

  it('keeps no state between renderers', () => {
    const first = createRenderer({ color: false });
    first.render({ type: 'assistant', text: 'Hi' }, 0);
    expect(createRenderer({ color: false }).render({ type: 'tool.completed', toolCallId: 't', name: 'bash', output: 'x' }, 0)).toBe(
      '  ✓ bash  x\n',
    );
  });

  it('colours with ANSI codes only when asked', () => {
    const message: CliMessage = { type: 'tool.completed', toolCallId: 't', name: 'bash', output: 'ok' };
    expect(createRenderer({ color: true }).render(message, 0)).toBe('  \u001b[32m✓\u001b[39m bash  \u001b[2mok\u001b[22m\n');
    expect(render([message, failure])).not.toContain('\u001b');
    expect(renderIntro('agent-rx demo · pi', 'Fix\nit', { color: false })).toBe('agent-rx demo · pi\n> Fix ⏎ it\n');
  });

  it('shows what goes with the prompt under it: images, files, the schema', () => {
    expect(renderIntro('agent-rx · pi', 'Look', { color: false }, ['image shot.png', 'output-schema answer.json'])).toBe('agent-rx · pi\n> Look\n+ image shot.png\n+ output-schema answer.json\n');
  });

  it("lists an answer's schema issues under the failure when there are several, five at most", () => {
    const issues = ['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((path) => ({ path, message: `${path} is wrong` }));
    const lines = render([terminalFailed({ reason: 'output-schema', message: 'the answer does not satisfy outputSchema: a: a is wrong (and 6 more)', exitCode: null, outputIssues: issues })]).split('\n');
    expect(lines.slice(1)).toEqual(['  issue │ a: a is wrong', '  issue │ b: b is wrong', '  issue │ c: c is wrong', '  issue │ d: d is wrong', '  issue │ e: e is wrong', '  … 2 more issues', '']);
    // One issue is the message's own.
    expect(render([terminalFailed({ reason: 'output-schema', message: 'the answer does not satisfy outputSchema: the answer holds no JSON value', exitCode: null, outputIssues: [{ path: '', message: 'the answer holds no JSON value' }] })]).split('\n')).toHaveLength(2);
  });
});

describe('colorEnabled', () => {
  it('is on for a terminal, off for a pipe, and off when NO_COLOR is set', () => {
    expect(colorEnabled({ isTTY: true }, {})).toBe(true);
    expect(colorEnabled({ isTTY: true }, { NO_COLOR: '' })).toBe(true);
    expect(colorEnabled({ isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    expect(colorEnabled({}, {})).toBe(false);
  });
});
