import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { from, lastValueFrom, toArray } from 'rxjs';
import * as z from 'zod';
import { checkRunOutput, CliMessageSchema, isTerminal, type CliMessage, type ProcessItem, type ToolCompleted } from '../../../lib/index.js';
import { claudeOutputToMessages } from '../../../lib/dialects.js';
import { applyPatch, claudeEdit } from '../../../lib/agents/claude/tool-content.js';
import { claudeSchemaIssues } from '../../../lib/agents/claude/dialect.js';
import { exit } from '../../helpers/items.js';
import { fixture } from '../../helpers/processes.js';

// Runs of Claude Code 2.1.197 (spec/fixtures/claude/2.1.197/README.md), replayed through the dialect.
function replay(name: string): Promise<CliMessage[]> {
  const lines = readFileSync(fixture(`claude/2.1.197/${name}.jsonl`), 'utf8').split('\n').filter((text) => text !== '');
  const meta = JSON.parse(readFileSync(fixture(`claude/2.1.197/${name}.meta.json`), 'utf8')) as { exit_code: number };
  const items: ProcessItem[] = [...lines.map((text): ProcessItem => ({ kind: 'line', text })), exit({ exitCode: meta.exit_code })];
  return lastValueFrom(from(items).pipe(claudeOutputToMessages(), toArray()));
}

/** The 2x2 PNG the recorded Read read, in base64. */
const PIXEL_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEklEQVR4nGP4z8DAAMIM/4EAAB/uBfsL2WiLAAAAAElFTkSuQmCC';

const Answer = z.object({ answer: z.string(), n: z.number() });
const toolTypes = (messages: readonly CliMessage[]) => messages.filter((message) => message.type.startsWith('tool.'));
const completed = (messages: readonly CliMessage[]) => messages.filter((message): message is ToolCompleted => message.type === 'tool.completed');

describe('Claude Code structured answers (--json-schema), replayed', () => {
  it('the StructuredOutput call is the answer, not a tool call: the terminal carries it as output, the stop is end_turn', async () => {
    const messages = await replay('structured-ok');
    for (const message of messages) expect(CliMessageSchema.safeParse(message).success).toBe(true);
    expect(toolTypes(messages)).toEqual([]);
    expect(messages.at(-1)).toMatchObject({ type: 'terminal.completed', stopReason: 'end_turn', agentStopReason: 'tool_use', output: { answer: 'forty-two', n: 42 } });
    // The run's check takes that value, not the text ("Here it is.").
    const checked = await lastValueFrom(from(messages).pipe(checkRunOutput(Answer), toArray()));
    expect(checked.at(-1)).toMatchObject({ type: 'terminal.completed', output: { answer: 'forty-two', n: 42 } });
  });

  it('prose after the nudge: a completion without output, which the run\'s check fails with output-schema and the prose', async () => {
    const messages = await replay('structured-prose');
    expect(messages.at(-1)).toMatchObject({ type: 'terminal.completed', stopReason: 'end_turn' });
    expect(messages.at(-1)).not.toHaveProperty('output');
    const checked = await lastValueFrom(from(messages).pipe(checkRunOutput(Answer), toArray()));
    expect(checked.at(-1)).toMatchObject({ type: 'terminal.failed', reason: 'output-schema', outputIssues: [{ path: '', message: 'the answer holds no JSON value' }] });
    expect((checked.at(-1) as { answer?: string }).answer).toContain('The answer is forty-two, as everyone knows.');
  });

  it('five refused answers: output-schema (not an agent error, although the CLI exits 1), the issues as Claude Code said them, the last answer', async () => {
    const messages = await replay('structured-bad');
    expect(toolTypes(messages)).toEqual([]);
    expect(messages.filter(isTerminal)).toHaveLength(1);
    expect(messages.at(-1)).toEqual({
      type: 'terminal.failed',
      reason: 'output-schema',
      message: "the answer does not satisfy outputSchema: n: must have required property 'n' (and 1 more) (Claude Code: Failed to provide valid structured output after 5 attempts)",
      exitCode: 1,
      signal: null,
      stderr: '',
      stderrTruncatedBytes: 0,
      invalidOutputLines: [],
      invalidOutputLinesOmitted: 0,
      agentError: 'Failed to provide valid structured output after 5 attempts',
      sessionId: expect.any(String),
      outputIssues: [
        { path: 'n', message: "must have required property 'n'" },
        { path: 'answer', message: 'must be string' },
      ],
      answer: '{"answer":42}',
    });
    // The run's check lets the agent's own output-schema failure pass as it is.
    const checked = await lastValueFrom(from(messages).pipe(checkRunOutput(Answer), toArray()));
    expect(checked.at(-1)).toEqual(messages.at(-1));
  });

  it("reads Claude Code's schema refusals: JSON pointers made dotted, a missing property's path, other text at the root", () => {
    expect(claudeSchemaIssues("Output does not match required schema: root: must NOT have additional properties, /n: must be number, /a~1b/0: must be string, /x: must have required property 'y'")).toEqual([
      { path: '', message: 'must NOT have additional properties' },
      { path: 'n', message: 'must be number' },
      { path: 'a/b.0', message: 'must be string' },
      { path: 'x.y', message: "must have required property 'y'" },
    ]);
    expect(claudeSchemaIssues('Failed to provide valid structured output after 5 attempts')).toEqual([{ path: '', message: 'Failed to provide valid structured output after 5 attempts' }]);
  });
});

describe('Claude Code tool content: the files Write and Edit changed, the images a tool gave back (replayed)', () => {
  it('Write of a new file, Write over it, Edit, Edit of every occurrence: diffs of whole texts; Read of text and a failed Edit: none; Read of an image: the image', async () => {
    const messages = await replay('edit-write');
    for (const message of messages) expect(CliMessageSchema.safeParse(message).success).toBe(true);
    const path = '/scratch/work/new.txt';
    expect(completed(messages).map((message) => [message.name, message.content])).toEqual([
      ['Write', [{ type: 'diff', path, oldText: null, newText: 'alpha\nbeta\n' }]],
      ['Write', [{ type: 'diff', path, oldText: 'alpha\nbeta\n', newText: 'alpha\nbeta\ngamma\n' }]],
      ['Read', undefined],
      ['Edit', [{ type: 'diff', path, oldText: 'alpha\nbeta\ngamma\n', newText: 'alpha\nBETA\ngamma\n' }]],
      ['Edit', [{ type: 'diff', path, oldText: 'alpha\nBETA\ngamma\n', newText: 'AlphA\nBETA\ngAmmA\n' }]],
      ['Read', [{ type: 'image', mimeType: 'image/png', data: PIXEL_PNG }]],
    ]);
    expect(messages.filter((message) => message.type === 'tool.failed')).toEqual([
      expect.objectContaining({ name: 'Edit', output: expect.stringContaining('String to replace not found in file.') }),
    ]);
  });

  it('tabs, no final newline, an Edit that makes a file, an empty Write: each diff is what the file became', async () => {
    const messages = await replay('edit-tabs');
    const t = '/scratch/work/t.txt';
    expect(completed(messages).map((message) => message.content)).toEqual([
      [{ type: 'diff', path: t, oldText: null, newText: 'one\n\tTAB & $x $$\nthree\r\nfour' }],
      [{ type: 'diff', path: t, oldText: 'one\n\tTAB & $x $$\nthree\nfour', newText: 'one\n\tTAB & $x $$\nthree\nFOUR\nfive\n' }],
      [{ type: 'diff', path: t, oldText: 'one\n\tTAB & $x $$\nthree\nFOUR\nfive\n', newText: 'one\n\t\tTAB2 && $$y\nthree\nFOUR\nfive\n' }],
      [{ type: 'diff', path: t, oldText: 'one\n\t\tTAB2 && $$y\nthree\nFOUR\nfive\n', newText: 'one\n\t\tTAB2 && $$y\nthree\nFOUR\nfive' }],
      [{ type: 'diff', path: '/scratch/work/fresh.txt', oldText: '', newText: 'made by edit\n' }],
      [{ type: 'diff', path: t, oldText: 'one\n\t\tTAB2 && $$y\nthree\nFOUR\nfive', newText: '' }],
    ]);
  });

  it('leaves out an Edit whose patch does not give the replacement (Claude Code adjusted the strings), and a Write without its old text', async () => {
    const user = (toolUseResult: unknown, name: string): ProcessItem[] => [
      { kind: 'line', text: JSON.stringify({ type: 'assistant', message: { id: 'm', content: [{ type: 'tool_use', id: 't1', name, input: {} }] } }) },
      { kind: 'line', text: JSON.stringify({ type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: 't1', content: 'ok' }] }, tool_use_result: toolUseResult }) },
    ];
    const replayed = (items: ProcessItem[]) => lastValueFrom(from([...items, exit()]).pipe(claudeOutputToMessages(), toArray()));
    // Curly quotes in the file: the patch's new line is not the straight-quoted replacement.
    const curly = { filePath: '/f', oldString: "say 'hi'", newString: "say 'ho'", originalFile: 'say ‘hi’\n', structuredPatch: [{ oldStart: 1, oldLines: 1, newStart: 1, newLines: 1, lines: ['-say ‘hi’', '+say ‘ho’'] }], replaceAll: false };
    expect(completed(await replayed(user(curly, 'Edit')))[0]).not.toHaveProperty('content');
    // As Claude Code keeps a Write over a file in its transcripts: no old text.
    const stored = { type: 'update', filePath: '/f', content: '', structuredPatch: [], originalFile: null };
    expect(completed(await replayed(user(stored, 'Write')))[0]).not.toHaveProperty('content');
  });

  it("does an Edit's replacement as Claude Code does, and applies its patches", () => {
    expect(claudeEdit('a b a', 'a', 'c', false)).toBe('c b a');
    expect(claudeEdit('a b a', 'a', 'c', true)).toBe('c b c');
    expect(claudeEdit('x $& y', 'x', '$&$1', false)).toBe('$&$1 $& y');
    // Deleting a line's text takes its newline along.
    expect(claudeEdit('keep\ndrop\nkeep\n', 'drop', '', false)).toBe('keep\nkeep\n');
    expect(claudeEdit('abc', 'x', 'y', false)).toBeUndefined();
    expect(claudeEdit('', '', 'new\n', false)).toBe('new\n');
    expect(applyPatch('a\nb\n', [{ oldStart: 1, oldLines: 2, lines: [' a', '-b', '+c'] }])).toBe('a\nc\n');
    expect(applyPatch('a\nb', [{ oldStart: 1, oldLines: 2, lines: [' a', '-b', '\\ No newline at end of file', '+b'] }])).toBe('a\nb\n');
    expect(applyPatch('a\nb\n', [{ oldStart: 1, oldLines: 2, lines: [' a', '-b', '+b', '\\ No newline at end of file'] }])).toBe('a\nb');
    expect(applyPatch('1\n2\n3\n4\n5\n6\n7\n8\n9\n', [{ oldStart: 1, oldLines: 2, lines: ['-1', '+one', ' 2'] }, { oldStart: 8, oldLines: 2, lines: [' 8', '-9', '+nine'] }])).toBe('one\n2\n3\n4\n5\n6\n7\n8\nnine\n');
    // A context line that is not in the text: it does not apply.
    expect(applyPatch('a\n', [{ oldStart: 1, oldLines: 1, lines: [' z', '+b'] }])).toBeUndefined();
  });
});
