import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { type CliMessage, type ProcessItem } from '../../../lib/index.js';
import { claudeOutputToMessages } from '../../../lib/dialects.js';
import { claudeFacts } from '../../helpers/claude-transcripts.js';
import { CLAUDE_DERIVED, derivedReadme, derivedText, DIFFERENT_FALLBACK, fixtureLines, TEXT_PARTIAL, TOOL_PARTIAL } from '../../helpers/derive-transcripts.js';
import { from, lastValueFrom, toArray } from 'rxjs';
import { appliedAnswer, replayLines } from '../../helpers/answer.js';
import { exit } from '../../helpers/items.js';
import { fixture } from '../../helpers/processes.js';

/**
 * Claude Code abandoning a stalled stream (PROTOCOL.md §5, `hang`): a synthetic end with
 * `abandoned_blocks`, then the non-streaming fallback as block-level lines under a new message id.
 * Replayed from transcripts derived from the recorded ones (spec/fixtures/claude/derived/README.md).
 */

function replay(name: string): Promise<CliMessage[]> {
  return replayLines(fixtureLines(name), claudeOutputToMessages());
}

const applied = appliedAnswer;

const notText = (messages: readonly CliMessage[]) => messages.filter((message) => message.type !== 'assistant' && message.type !== 'assistant.withdrawn' && message.type !== 'assistant.thought');
const texts = (messages: readonly CliMessage[]) =>
  messages.flatMap((message) => (message.type === 'assistant' ? [message.text] : message.type === 'assistant.withdrawn' ? [`<withdrawn ${message.text}>`] : []));
const derived = (name: string) => `claude/derived/${name}.jsonl`;

describe('Claude Code: a stream abandoned for a non-streaming fallback, from derived transcripts', () => {
  it.each(CLAUDE_DERIVED.map((item) => [item.name, item] as const))('%s is what its derivation gives', (_name, item) => {
    expect(readFileSync(fixture(item.name), 'utf8')).toBe(derivedText(item));
  });

  it('the README of the derived transcripts says how each was made', () => {
    expect(readFileSync(fixture('claude/derived/README.md'), 'utf8')).toBe(derivedReadme('claude'));
  });

  it('a fallback that repeats the streamed text and continues it gives the full answer once, with nothing withdrawn', async () => {
    const messages = await replay(derived('text-partial.abandoned-continued'));
    expect(texts(messages)).toEqual(['Hello ', 'from the ', 'fake server.']);
    expect(applied(messages)).toBe(claudeFacts('text-partial').answer);
    expect(notText(messages)).toEqual(notText(await replay(TEXT_PARTIAL)));
  });

  it('a fallback that differs withdraws exactly the streamed text after the common prefix, then gives the new text', async () => {
    const messages = await replay(derived('text-partial.abandoned-different'));
    // Streamed "Hello from the ", the fallback says "Hello from a different answer.".
    expect(texts(messages)).toEqual(['Hello ', 'from the ', '<withdrawn the >', 'a different answer.']);
    expect(messages.filter((message) => message.type === 'assistant.withdrawn')).toHaveLength(1);
    expect(applied(messages)).toBe(DIFFERENT_FALLBACK);
    expect(notText(messages)).toEqual(notText(await replay(TEXT_PARTIAL)));
  });

  it('a stream abandoned after a tool turn: the answer of both messages once, the tool and the terminal as recorded', async () => {
    const messages = await replay(derived('tool-partial.abandoned-after-tool'));
    expect(texts(messages)).toEqual(['I will run ', 'a command.', 'The command ', 'printed: hello']);
    expect(applied(messages)).toBe(claudeFacts('tool-partial').answer);
    const recorded = notText(await replay(TOOL_PARTIAL));
    expect(notText(messages)).toEqual(recorded);
    expect(recorded.map((message) => message.type)).toEqual(['session.started', 'tool.call', 'tool.completed', 'terminal.completed']);
  });

  it('a stream abandoned before its tool call: the fallback\'s text block continues the streamed one, its tool_use is the same tool call', async () => {
    const messages = await replay(derived('tool-partial.abandoned-before-tool'));
    expect(texts(messages)).toEqual(['I will run ', 'a command.', 'The command ', 'printed: hello']);
    expect(applied(messages)).toBe(claudeFacts('tool-partial').answer);
    expect(notText(messages)).toEqual(notText(await replay(TOOL_PARTIAL)));
  });

  it('without the abandoned_blocks line, a fallback under a new id is a new message (what the marker is for)', async () => {
    const lines = fixtureLines(derived('text-partial.abandoned-continued')).filter((line) => !line.includes('"abandoned_blocks"'));
    const messages = await lastValueFrom(
      from([...lines.map((text): ProcessItem => ({ kind: 'line', text })), exit()]).pipe(claudeOutputToMessages(), toArray()),
    );
    expect(applied(messages)).toBe('Hello from the Hello from the fake server.');
  });

  it('a fallback whose earlier block grows keeps that block\'s new text in its place, before the later blocks', async () => {
    // Streamed: text block 0 (whole, with its block-level line), a tool_use, then text block 2 cut after "After".
    // The fallback says block 0 is "Before the tool. Really." and block 2 "After it.".
    const line = (value: object): ProcessItem => ({ kind: 'line', text: JSON.stringify(value) });
    const stream = (event: object, extra: object = {}) => line({ type: 'stream_event', event, session_id: 'S', parent_tool_use_id: null, api_message_id: 'msg_A', ...extra });
    const block = (id: string, content: object, stopReason: string | null) =>
      line({ type: 'assistant', message: { id, type: 'message', role: 'assistant', content: [content], stop_reason: stopReason }, parent_tool_use_id: null, session_id: 'S' });
    const toolUse = { type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'true' } };
    const items: ProcessItem[] = [
      line({ type: 'system', subtype: 'init', session_id: 'S' }),
      stream({ type: 'message_start', message: { id: 'msg_A', content: [] } }),
      stream({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Before the tool.' } }),
      block('msg_A', { type: 'text', text: 'Before the tool.' }, null),
      block('msg_A', toolUse, null),
      stream({ type: 'content_block_delta', index: 2, delta: { type: 'text_delta', text: 'After' } }),
      stream({ type: 'content_block_stop', index: 2 }),
      stream({ type: 'message_delta', delta: { stop_reason: null } }),
      stream({ type: 'message_stop' }, { abandoned_blocks: { api_message_id: 'msg_A', from_block_index: 2 } }),
      block('msg_F', { type: 'text', text: 'Before the tool. Really.' }, 'tool_use'),
      block('msg_F', toolUse, 'tool_use'),
      block('msg_F', { type: 'text', text: 'After it.' }, 'tool_use'),
      line({ type: 'result', subtype: 'success', is_error: false, stop_reason: 'tool_use', session_id: 'S' }),
      exit(),
    ];
    const messages = await lastValueFrom(from(items).pipe(claudeOutputToMessages(), toArray()));
    expect(applied(messages)).toBe('Before the tool. Really.After it.');
  });
});
