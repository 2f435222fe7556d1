import { describe, expect, it } from '@jest/globals';
import type { CliMessage, TerminalFailed } from '../../lib/index.js';
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

  it('shows a tool call with its compact input, a progress hint, and the completed output', () => {
    expect(
      render([
        { type: 'assistant', text: 'Let me look.' },
        { type: 'tool.call', toolCallId: 't1', name: 'bash', input: { command: 'ls\n-la' } },
        { type: 'tool.update', toolCallId: 't1', name: 'bash', output: '' },
        { type: 'tool.update', toolCallId: 't1', name: 'bash', output: 'a.txt\n' },
        { type: 'tool.update', toolCallId: 't1', name: 'bash', output: 'a.txt\n' },
        { type: 'tool.completed', toolCallId: 't1', name: 'bash', output: 'a.txt\nb.txt\n' },
        { type: 'tool.call', toolCallId: 't2', name: 'read', input: { path: 'a.txt', offset: 1 } },
        { type: 'tool.completed', toolCallId: 't2', name: 'read', output: 'one line\n' },
        { type: 'assistant', text: 'Done.' },
      ]),
    ).toBe(
      [
        'Let me look.',
        '',
        '▸ bash  ls ⏎ -la',
        '  ⋯ bash  a.txt',
        '  ✓ bash',
        '    a.txt',
        '    b.txt',
        '▸ read  {"path":"a.txt","offset":1}',
        '  ✓ read  one line',
        '',
        'Done.',
      ].join('\n'),
    );
  });

  it('cuts a long tool input and a long output', () => {
    const output = Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n');
    const lines = render([
      { type: 'tool.call', toolCallId: 't1', name: 'write', input: { path: 'x', content: 'y'.repeat(200) } },
      { type: 'tool.completed', toolCallId: 't1', name: 'write', output },
    ]).split('\n');
    expect(lines[0]).toHaveLength('▸ write  '.length + 100);
    expect(lines[0]?.endsWith('yyy…')).toBe(true);
    expect(lines.slice(1)).toEqual(['  ✓ write', '    line 1', '    line 2', '    line 3', '    line 4', '    … 6 more lines', '']);
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
    ).toBe('session s-1\n\nHi.\n\n✓ completed · 150 tokens (120 in, 30 out, 7 cache read, $0.0123) · 2.5s\n');
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
});

describe('colorEnabled', () => {
  it('is on for a terminal, off for a pipe, and off when NO_COLOR is set', () => {
    expect(colorEnabled({ isTTY: true }, {})).toBe(true);
    expect(colorEnabled({ isTTY: true }, { NO_COLOR: '' })).toBe(true);
    expect(colorEnabled({ isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    expect(colorEnabled({}, {})).toBe(false);
  });
});
