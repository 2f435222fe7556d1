import { describe, expect, it } from '@jest/globals';
import { piSessionProtocol } from '../../../lib/agents/pi/session.js';
import { promptContent, type PromptContent, type PromptReader } from '../../../lib/operators/prompt-parts.js';
import type { SessionAsk } from '../../../lib/operators/session-protocol.js';
import type { SessionInput } from '../../../lib/sessions/session-machine.js';
import { testPng } from '../../conformance/scenarios.js';

const png = testPng();
const files: Record<string, Uint8Array> = {
  '/work/pixel.png': png.bytes,
  '/work/brief.txt': new TextEncoder().encode('The launch code is ZEBRA-7731.\n'),
};
const reader: PromptReader = {
  readFile: (path) => {
    const bytes = files[path];
    if (bytes === undefined) throw Object.assign(new Error('no such file'), { code: 'ENOENT' });
    return bytes;
  },
  resolve: (path) => (path.startsWith('/') ? path : `/work/${path}`),
};

function contentOf(...parts: Parameters<typeof promptContent>[0] & unknown[]): PromptContent {
  return promptContent(parts, reader, 'parts');
}

/** The lines pi's protocol writes for a `start` then a `steer` (its first line is the state request of `open`). */
function linesFor(...asks: SessionAsk[]): unknown[] {
  const protocol = piSessionProtocol();
  const state = protocol.createState();
  const lines: unknown[] = [];
  for (const ask of asks) {
    for (const output of protocol.act(state, ask).outputs ?? []) if (output.type === 'write') lines.push(output.line);
  }
  return lines;
}

const input = (text: string, content?: PromptContent, kind: SessionInput['kind'] = 'prompt'): SessionInput => ({ kind, text, ...(content === undefined ? {} : { content }) });

describe("pi's RPC prompts with parts: text and files in `message`, images as bytes in `images`", () => {
  it('declares that its prompts take images and files, and no native schema', () => {
    expect(piSessionProtocol().prompts).toEqual({ image: true, file: true });
  });

  it('a prompt without parts is its text, with no images', () => {
    expect(linesFor({ type: 'start', turn: 1, input: input('hello') })).toEqual([{ id: 'agent-rx-prompt-1', type: 'prompt', message: 'hello' }]);
  });

  it('a prompt with an image (a file) and bytes: the text in message, each image in order, base64 with its type', () => {
    const content = contentOf('What differs?', { type: 'image', path: 'pixel.png' }, { type: 'image', data: png.bytes, mimeType: 'image/png' });
    const [line] = linesFor({ type: 'start', turn: 1, input: input('What differs?', content) });
    expect(line).toEqual({
      id: 'agent-rx-prompt-1',
      type: 'prompt',
      message: 'What differs?',
      images: [
        { type: 'image', data: png.base64, mimeType: 'image/png' },
        { type: 'image', data: png.base64, mimeType: 'image/png' },
      ],
    });
  });

  it("a file's text is inlined in message as a <file> block, in the parts' order; the schema's instruction last", () => {
    const content: PromptContent = [...contentOf('Summarize', { type: 'file', path: 'brief.txt' }, 'briefly.'), { type: 'text', text: 'Answer with JSON only.' }];
    const [line] = linesFor({ type: 'start', turn: 1, input: input('Summarize', content) });
    expect(line).toEqual({
      id: 'agent-rx-prompt-1',
      type: 'prompt',
      message: 'Summarize\n\n<file path="/work/brief.txt">\nThe launch code is ZEBRA-7731.\n</file>\n\nbriefly.\n\nAnswer with JSON only.',
    });
  });

  it('a steer carries its images too, as a prompt that steers the running turn', () => {
    const lines = linesFor(
      { type: 'start', turn: 1, input: input('first') },
      { type: 'steer', turn: 1, input: input('look at this', contentOf('look at this', { type: 'image', path: 'pixel.png' }), 'steer') },
    );
    expect(lines[1]).toEqual({
      id: 'agent-rx-steer-2',
      type: 'prompt',
      message: 'look at this',
      images: [{ type: 'image', data: png.base64, mimeType: 'image/png' }],
      streamingBehavior: 'steer',
    });
  });

  it('a follow-up (sent as the next turn) carries its parts the same way; an image alone has an empty message', () => {
    const [line] = linesFor({ type: 'start', turn: 2, input: input('', contentOf({ type: 'image', path: 'pixel.png' }), 'follow-up') });
    expect(line).toEqual({ id: 'agent-rx-prompt-1', type: 'prompt', message: '', images: [{ type: 'image', data: png.base64, mimeType: 'image/png' }] });
  });
});
