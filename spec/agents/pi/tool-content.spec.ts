import { describe, expect, it } from '@jest/globals';
import { CliMessageSchema, type CliMessage } from '../../../lib/index.js';
import { piOutputToMessages } from '../../../lib/dialects.js';
import { replayLines } from '../../helpers/answer.js';
import { fixtureLines } from '../../helpers/derive-transcripts.js';
import { testPng } from '../../conformance/scenarios.js';

/**
 * What pi's tools give back besides text, in `tool.completed.content`, from recorded runs of the
 * real pi (spec/fixtures/pi/read_image, edit_file, write_file; their .meta.json say how).
 */

const replay = (lines: readonly string[]): Promise<CliMessage[]> => replayLines(lines, piOutputToMessages());
const results = (messages: readonly CliMessage[]) => messages.filter((message) => message.type === 'tool.completed' || message.type === 'tool.failed');

const HEADER = '{"type":"session","version":3,"id":"s-1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}';
const end = (result: unknown, isError = false): string =>
  JSON.stringify({ type: 'tool_execution_end', toolCallId: 'call_1', toolName: 'read', result, isError });

describe("pi's tool results as tool.completed content", () => {
  it("read of an image file: the image pi gives the model is in content, base64 with its type; the text stays the output", async () => {
    const messages = await replay(fixtureLines('pi/read_image.jsonl'));
    const done = results(messages);
    expect(done).toEqual([
      {
        type: 'tool.completed',
        toolCallId: 'call_read_image_1',
        name: 'read',
        output: 'Read image file [image/png]',
        content: [{ type: 'image', data: testPng().base64, mimeType: 'image/png' }],
      },
    ]);
    for (const message of messages) expect(CliMessageSchema.safeParse(message).success).toBe(true);
    expect(messages.at(-1)).toMatchObject({ type: 'terminal.completed' });
  });

  it("edit: no diff, since pi reports only a display diff (details.diff, context elided), not the text before and after", async () => {
    const lines = fixtureLines('pi/edit_file.jsonl');
    // What pi says of the edit: numbered changed lines, not the file's text.
    const recorded = lines.map((line) => JSON.parse(line) as { type: string; result?: { details?: unknown } }).find((event) => event.type === 'tool_execution_end');
    expect(recorded?.result?.details).toEqual({ diff: '-1 agent-rx notes: the magic number is 4217.\n+1 agent-rx notes: the magic number is 4218.\n 2 Second line ✓', firstChangedLine: 1 });
    expect(results(await replay(lines))).toEqual([
      { type: 'tool.completed', toolCallId: 'call_edit_file_1', name: 'edit', output: 'Successfully replaced 1 block(s) in notes.txt.' },
    ]);
  });

  it('write: no content either (pi does not say whether the file existed)', async () => {
    expect(results(await replay(fixtureLines('pi/write_file.jsonl')))).toEqual([
      { type: 'tool.completed', toolCallId: 'call_write_file_1', name: 'write', output: 'Successfully wrote 11 bytes to new.txt' },
    ]);
  });

  it('several images in order; blocks that are not images, or lack their data or type, are left out', async () => {
    const messages = await replay([
      HEADER,
      end({
        content: [
          { type: 'image', data: 'AAAA', mimeType: 'image/png' },
          { type: 'text', text: 'two images' },
          { type: 'image', data: '', mimeType: 'image/png' },
          { type: 'image', data: 'BBBB' },
          { type: 'image', data: 'CCCC', mimeType: 'image/jpeg' },
        ],
      }),
    ]);
    expect(results(messages)).toEqual([
      {
        type: 'tool.completed',
        toolCallId: 'call_1',
        name: 'read',
        output: 'two images',
        content: [
          { type: 'image', data: 'AAAA', mimeType: 'image/png' },
          { type: 'image', data: 'CCCC', mimeType: 'image/jpeg' },
        ],
      },
    ]);
  });

  it('a failed tool result is tool.failed, without content', async () => {
    const messages = await replay([HEADER, end({ content: [{ type: 'text', text: 'no' }, { type: 'image', data: 'AAAA', mimeType: 'image/png' }] }, true)]);
    expect(results(messages)).toEqual([{ type: 'tool.failed', toolCallId: 'call_1', name: 'read', output: 'no' }]);
  });

  it('a result with no image has no content field', async () => {
    const messages = await replay([HEADER, end({ content: [{ type: 'text', text: 'plain' }] })]);
    expect(results(messages)).toEqual([{ type: 'tool.completed', toolCallId: 'call_1', name: 'read', output: 'plain' }]);
  });
});
