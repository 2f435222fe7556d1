import { describe, expect, it } from '@jest/globals';
import { claudeSessionProtocol, claudeUserContent } from '../../../lib/agents/claude/session.js';
import type { ProtocolReaction } from '../../../lib/operators/session-protocol.js';
import type { SessionInput } from '../../../lib/sessions/session-machine.js';
import { promptFor } from '../../../lib/sessions/prepare-command.js';
import { outputContract } from '../../../lib/operators/output-schema.js';
import * as z from 'zod';

const protocol = claudeSessionProtocol();
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEklEQVR4nGP4z8DAAMIM/4EAAB/uBfsL2WiLAAAAAElFTkSuQmCC';

const input: SessionInput = {
  kind: 'prompt',
  text: 'Compare these.',
  content: [
    { type: 'text', text: 'Compare these.' },
    { type: 'image', data: PNG, mimeType: 'image/png', bytes: 75, path: '/w/a.png' },
    { type: 'file', path: '/w/notes.md', text: 'line one\n' },
    { type: 'text', text: '' },
    { type: 'text', text: 'Briefly.' },
  ],
};

function written(reaction: ProtocolReaction): { readonly uuid: string; readonly message: { readonly content: unknown } } {
  const output = reaction.outputs?.[0];
  if (output?.type !== 'write') throw new Error(`nothing written: ${JSON.stringify(reaction)}`);
  return output.line as never;
}

describe('Claude Code session user lines', () => {
  it('takes images and files; a schema goes in the prompt (no native route per turn)', () => {
    expect(protocol.prompts).toEqual({ image: true, file: true });
  });

  it('a prompt with parts: text, base64 image and file-as-text blocks in its order, empty texts left out', () => {
    const line = written(protocol.act(protocol.createState(), { type: 'start', turn: 1, input }));
    expect(line).toMatchObject({ type: 'user', session_id: '', parent_tool_use_id: null, message: { role: 'user' } });
    expect(line.message.content).toEqual([
      { type: 'text', text: 'Compare these.' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
      { type: 'text', text: '<file path="/w/notes.md">\nline one\n</file>' },
      { type: 'text', text: 'Briefly.' },
    ]);
  });

  it('a plain prompt is one text block; a steer with an image goes the same way', () => {
    const state = protocol.createState();
    expect(written(protocol.act(state, { type: 'start', turn: 1, input: { kind: 'prompt', text: 'hello' } })).message.content).toEqual([{ type: 'text', text: 'hello' }]);
    const steer = written(protocol.act(state, { type: 'steer', turn: 1, input: { ...input, kind: 'steer' } }));
    expect(steer.message.content).toEqual(claudeUserContent(input));
  });

  it("a turn's schema is its prompt's last text (the session appends the instruction)", () => {
    const prepared = promptFor([{ type: 'text', text: 'Answer.' }], outputContract(z.object({ n: z.number() })), protocol.prompts ?? { image: false, file: false });
    if (!('content' in prepared)) throw new Error('refused');
    const blocks = claudeUserContent({ kind: 'prompt', text: 'Answer.', content: prepared.content });
    expect(blocks).toHaveLength(2);
    expect(blocks[1]).toMatchObject({ type: 'text', text: expect.stringContaining('"required":["n"]') });
  });

  it('says so when the replay shows an image Claude Code could not take (it puts a text in its place)', () => {
    const state = protocol.createState();
    const { uuid } = written(protocol.act(state, { type: 'start', turn: 1, input }));
    const refusal = '[Image could not be processed: Image file is empty (0 bytes)]';
    const replay = { type: 'user', isReplay: true, uuid, message: { role: 'user', content: [{ type: 'text', text: 'Compare these.' }, { type: 'text', text: refusal }] } };
    expect(protocol.read(state, replay)).toEqual({
      facts: [{ type: 'content', message: { type: 'agent.warning', message: `Claude Code could not take an image of the prompt, and gave the model this instead: ${refusal}` } }],
    });
    // A line without images says nothing, whatever its text.
    const plain = protocol.createState();
    const second = written(protocol.act(plain, { type: 'start', turn: 1, input: { kind: 'prompt', text: refusal } }));
    expect(protocol.read(plain, { type: 'user', isReplay: true, uuid: second.uuid, message: { role: 'user', content: [{ type: 'text', text: refusal }] } })).toEqual({});
  });
});
