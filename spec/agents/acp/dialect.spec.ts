import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { from } from 'rxjs';
import { fileURLToPath } from 'node:url';
import { acpDialect } from '../../../lib/dialects.js';
import { agentOutputToMessages, type CliMessage, type ProcessItem } from '../../../lib/index.js';
import { scheduler } from '../../helpers/items.js';

/** The ACP dialect's tool calls, on hand-made updates and on Qwen Code's recorded `qwen --acp` lines. */

const SESSION = 'S1';
const update = (fields: Record<string, unknown>): ProcessItem => ({
  kind: 'line',
  text: JSON.stringify({ jsonrpc: '2.0', method: 'session/update', params: { sessionId: SESSION, update: fields } }),
});
const answer = (id: number, stopReason = 'end_turn'): ProcessItem => ({ kind: 'line', text: JSON.stringify({ jsonrpc: '2.0', id, result: { stopReason } }) });
const call = (id: string, fields: Record<string, unknown> = {}) => update({ sessionUpdate: 'tool_call', toolCallId: id, status: 'pending', title: 'Shell', content: [], kind: 'execute', rawInput: {}, ...fields });
const progress = (id: string, fields: Record<string, unknown> = {}) => update({ sessionUpdate: 'tool_call_update', toolCallId: id, status: 'in_progress', content: [], ...fields });
const done = (id: string, text: string, status = 'completed') => update({ sessionUpdate: 'tool_call_update', toolCallId: id, status, content: [{ type: 'content', content: { type: 'text', text } }] });
const meta = { _meta: { toolName: 'run_shell_command' } };

/** The content messages of a turn's lines (the terminal message at the end of the lines left out). */
function contentOf(items: readonly ProcessItem[]): CliMessage[] {
  const messages: CliMessage[] = [];
  from(items)
    .pipe(agentOutputToMessages(acpDialect('Agent')))
    .subscribe((message) => messages.push(message));
  return messages.filter((message) => !message.type.startsWith('terminal.'));
}

describe('ACP dialect: tool calls', () => {
  it('holds a call announced with an empty input until the update that carries it, named by _meta.toolName', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold<ProcessItem>('-c-p-d-|', {
        c: call('T1', meta),
        p: progress('T1', { title: 'Shell: echo hello', rawInput: { command: 'echo hello' }, ...meta }),
        d: done('T1', 'hello'),
      });
      const messages = source.pipe(agentOutputToMessages(acpDialect('Agent')));
      expectObservable(messages).toBe('---p-d-(t|)', {
        p: { type: 'tool.call', toolCallId: 'T1', name: 'run_shell_command', input: { command: 'echo hello' }, kind: 'execute' },
        d: { type: 'tool.completed', toolCallId: 'T1', name: 'run_shell_command', output: 'hello' },
        t: expect.objectContaining({ type: 'terminal.failed' }) as unknown as CliMessage,
      });
    });
  });

  it('takes the name from a later update when the announcement had none, and the kind otherwise', () => {
    const messages = contentOf([call('T1', { _meta: {} }), progress('T1', { rawInput: { command: 'ls' }, ...meta }), done('T1', 'a b')]);
    expect(messages[0]).toEqual({ type: 'tool.call', toolCallId: 'T1', name: 'run_shell_command', input: { command: 'ls' }, kind: 'execute' });
    const unnamed = contentOf([call('T2', { _meta: {} }), progress('T2', { rawInput: { command: 'ls' } })]);
    expect(unnamed).toEqual([{ type: 'tool.call', toolCallId: 'T2', name: 'execute', input: { command: 'ls' }, kind: 'execute' }]);
  });

  it('announces a call with an input at once, as before', () => {
    const messages = contentOf([call('T1', { rawInput: { command: 'ls' } }), done('T1', 'a b')]);
    expect(messages).toEqual([
      { type: 'tool.call', toolCallId: 'T1', name: 'execute', input: { command: 'ls' }, kind: 'execute' },
      { type: 'tool.completed', toolCallId: 'T1', name: 'execute', output: 'a b' },
    ]);
  });

  it('a held call whose input never comes goes out with its result, its latest title as the input', () => {
    const messages = contentOf([call('T1', meta), progress('T1', { title: 'Shell: touch x' }), done('T1', 'denied', 'failed')]);
    expect(messages).toEqual([
      { type: 'tool.call', toolCallId: 'T1', name: 'run_shell_command', input: { title: 'Shell: touch x' }, kind: 'execute' },
      { type: 'tool.failed', toolCallId: 'T1', name: 'run_shell_command', output: 'denied' },
    ]);
  });

  it('a held call goes out before its first output', () => {
    const messages = contentOf([call('T1', meta), update({ sessionUpdate: 'tool_call_update', toolCallId: 'T1', content: [{ type: 'content', content: { type: 'text', text: 'partial' } }] })]);
    expect(messages).toEqual([
      { type: 'tool.call', toolCallId: 'T1', name: 'run_shell_command', input: { title: 'Shell' }, kind: 'execute' },
      { type: 'tool.update', toolCallId: 'T1', name: 'run_shell_command', output: 'partial' },
    ]);
  });

  it('the answer that ends the turn lets every held call out: none is held for ever', () => {
    const messages = contentOf([call('T1', meta), call('T2'), answer(3, 'cancelled')]);
    expect(messages).toEqual([
      { type: 'tool.call', toolCallId: 'T1', name: 'run_shell_command', input: { title: 'Shell' }, kind: 'execute' },
      { type: 'tool.call', toolCallId: 'T2', name: 'execute', input: { title: 'Shell' }, kind: 'execute' },
    ]);
  });

  it('a kind that is not one of the contract\'s is left out', () => {
    expect(contentOf([call('T1', { kind: 'teleport', rawInput: { to: 'x' } })])).toEqual([{ type: 'tool.call', toolCallId: 'T1', name: 'teleport', input: { to: 'x' } }]);
  });

  it('two subscriptions do not share held calls', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold<ProcessItem>('-c-p-|', { c: call('T1', meta), p: progress('T1', { rawInput: { command: 'ls' } }) });
      const messages = source.pipe(agentOutputToMessages(acpDialect('Agent')));
      const expected = { type: 'tool.call', toolCallId: 'T1', name: 'run_shell_command', input: { command: 'ls' }, kind: 'execute' };
      const terminal = expect.objectContaining({ type: 'terminal.failed' }) as unknown as CliMessage;
      expectObservable(messages).toBe('---p-(t|)', { p: expected, t: terminal });
      expectObservable(messages).toBe('---p-(t|)', { p: expected, t: terminal });
    });
  });

  it("Qwen Code's recorded session (echo, then a failing ls): each call once, with its command, named run_shell_command", () => {
    const path = fileURLToPath(new URL('../../fixtures/acp/qwen-tool.jsonl', import.meta.url));
    const items = readFileSync(path, 'utf8')
      .split('\n')
      .filter((text) => text !== '')
      .map((text): ProcessItem => ({ kind: 'line', text }));
    const tools = contentOf(items).filter((message) => message.type.startsWith('tool.'));
    expect(tools).toEqual([
      { type: 'tool.call', toolCallId: 'call_bash_tool_1', name: 'run_shell_command', input: { command: 'echo hello', description: 'Run echo hello' }, kind: 'execute' },
      expect.objectContaining({ type: 'tool.completed', toolCallId: 'call_bash_tool_1', name: 'run_shell_command', output: expect.stringContaining('Output: hello') }),
      { type: 'tool.call', toolCallId: 'call_fail_tool_1', name: 'run_shell_command', input: { command: 'ls /nonexistent-dir', description: 'Run ls /nonexistent-dir' }, kind: 'execute' },
      expect.objectContaining({ type: 'tool.failed', toolCallId: 'call_fail_tool_1', name: 'run_shell_command', output: expect.stringContaining('Exit Code: 2') }),
    ]);
  });
});

describe('ACP dialect: what a tool gave back besides text (tool.completed.content)', () => {
  const diff = { type: 'diff', path: '/w/a.txt', oldText: 'old\n', newText: 'new\n' };
  const image = { type: 'content', content: { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' } };
  const text = { type: 'content', content: { type: 'text', text: 'wrote a.txt' } };
  const edit = (fields: Record<string, unknown> = {}) => call('E1', { kind: 'edit', title: 'Edit a.txt', rawInput: { file_path: '/w/a.txt' }, _meta: { toolName: 'edit' }, ...fields });

  it('a completed edit carries its diff, and an image a tool gave back is carried as base64 with its type; the text stays the output', () => {
    const messages = contentOf([edit(), update({ sessionUpdate: 'tool_call_update', toolCallId: 'E1', status: 'completed', content: [text, diff, image] })]);
    expect(messages.at(-1)).toEqual({
      type: 'tool.completed',
      toolCallId: 'E1',
      name: 'edit',
      output: 'wrote a.txt',
      content: [
        { type: 'diff', path: '/w/a.txt', oldText: 'old\n', newText: 'new\n' },
        { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
      ],
    });
  });

  it("a new file's diff has oldText null (Gemini CLI sends none); the latest content is what counts: an update's content replaces the one before, one without content keeps it", () => {
    const created = { type: 'diff', path: '/w/b.txt', newText: 'b\n' };
    const kept = contentOf([edit({ content: [created] }), progress('E1', { content: undefined }), update({ sessionUpdate: 'tool_call_update', toolCallId: 'E1', status: 'completed' })]);
    expect(kept.at(-1)).toMatchObject({ type: 'tool.completed', content: [{ type: 'diff', path: '/w/b.txt', oldText: null, newText: 'b\n' }] });
    const replaced = contentOf([edit({ content: [created] }), progress('E1'), update({ sessionUpdate: 'tool_call_update', toolCallId: 'E1', status: 'completed' })]);
    expect(replaced.at(-1)).toEqual({ type: 'tool.completed', toolCallId: 'E1', name: 'edit', output: '' });
  });

  it('a failed call carries no content (its diff was never written); text-only content gives none', () => {
    const failed = contentOf([edit({ content: [diff] }), update({ sessionUpdate: 'tool_call_update', toolCallId: 'E1', status: 'failed', content: [text, diff] })]);
    expect(failed.at(-1)).toEqual({ type: 'tool.failed', toolCallId: 'E1', name: 'edit', output: 'wrote a.txt' });
    expect(contentOf([call('T1', { rawInput: { command: 'ls' } }), done('T1', 'a b')]).at(-1)).not.toHaveProperty('content');
  });

  it('malformed blocks are left out: a diff without its path or new text, an image without data', () => {
    const messages = contentOf([
      edit(),
      update({ sessionUpdate: 'tool_call_update', toolCallId: 'E1', status: 'completed', content: [{ type: 'diff', newText: 'x' }, { type: 'diff', path: '/w/a.txt' }, { type: 'content', content: { type: 'image', mimeType: 'image/png' } }, { type: 'terminal', terminalId: 't' }] }),
    ]);
    expect(messages.at(-1)).toEqual({ type: 'tool.completed', toolCallId: 'E1', name: 'edit', output: '' });
  });
});
