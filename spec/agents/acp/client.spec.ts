import { describe, expect, it } from '@jest/globals';
import { acpPromptBlocks, acpClientProtocol } from '../../../lib/agents/acp/client.js';
import type { PromptContent } from '../../../lib/operators/prompt-parts.js';
import type { SessionInput } from '../../../lib/sessions/session-machine.js';
import { acpByHand } from '../../helpers/acp-by-hand.js';
import type { ProtocolReaction } from '../../../lib/operators/session-protocol.js';

/** The ACP client's prompts: the blocks of `session/prompt`, and what it sends an agent by what `initialize` said it takes. */

const IMAGE = { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png', bytes: 8 } as const;
const FILE = { type: 'file', path: '/w/brief notes.txt', text: 'The code is ZEBRA.\n' } as const;
const input = (text: string, content?: PromptContent, kind: SessionInput['kind'] = 'prompt'): SessionInput => ({ kind, text, ...(content === undefined ? {} : { content }) });
const EMBED = { embeddedContext: true };

describe('acpPromptBlocks', () => {
  it('text alone: one text block, as before parts existed', () => {
    expect(acpPromptBlocks([input('hello')], EMBED)).toEqual([{ type: 'text', text: 'hello' }]);
    expect(acpPromptBlocks([input('')], EMBED)).toEqual([{ type: 'text', text: '' }]);
  });

  it('parts in order: text, an image block (base64 and type), a file as an embedded resource (file:// URI as it is, its text, text/plain)', () => {
    const blocks = acpPromptBlocks([input('Look', [{ type: 'text', text: 'Look' }, FILE, { type: 'text', text: 'then answer.' }])], EMBED);
    expect(blocks).toEqual([
      // Both agents write the resource into the text as @<uri>, glued: line breaks keep it apart.
      { type: 'text', text: 'Look\n' },
      { type: 'resource', resource: { uri: 'file:///w/brief notes.txt', text: 'The code is ZEBRA.\n', mimeType: 'text/plain' } },
      { type: 'text', text: '\nthen answer.' },
    ]);
    expect(acpPromptBlocks([input('See', [{ type: 'text', text: 'See' }, IMAGE])], EMBED)).toEqual([
      { type: 'text', text: 'See' },
      { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
    ]);
  });

  it('beside an image, a file goes as text (Gemini CLI leaves the images out of a prompt with embedded context); so it does for an agent without embeddedContext', () => {
    const expected = [
      { type: 'text', text: 'Both\n\n<file path="/w/brief notes.txt">\nThe code is ZEBRA.\n</file>' },
      { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
    ];
    expect(acpPromptBlocks([input('Both', [{ type: 'text', text: 'Both' }, FILE, IMAGE])], EMBED)).toEqual(expected);
    expect(acpPromptBlocks([input('Both', [{ type: 'text', text: 'Both' }, FILE])], { embeddedContext: false })).toEqual([expected[0]]);
  });

  it('the steers that cut a prompt go as one prompt: their blocks in order, adjacent texts joined by a blank line', () => {
    const blocks = acpPromptBlocks([input('first', undefined, 'steer'), input('second', [{ type: 'text', text: 'second' }, IMAGE], 'steer'), input('third', undefined, 'steer')], EMBED);
    expect(blocks).toEqual([{ type: 'text', text: 'first\n\nsecond' }, { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' }, { type: 'text', text: 'third' }]);
  });
});

/** A protocol driven by hand: the SDK's lines written to `written`, the agent's answers fed to `read`. */
async function opened(promptCapabilities: Record<string, unknown> | undefined) {
  const { protocol, state, written, reactions, settle, answer } = acpByHand();
  await answer('initialize', { protocolVersion: 1, agentCapabilities: promptCapabilities === undefined ? {} : { promptCapabilities } });
  await answer('session/new', { sessionId: 'S1' });
  expect(reactions.flatMap((reaction) => reaction.facts ?? []).some((fact) => fact.type === 'opened')).toBe(true);
  const prompts = () => written.filter((message) => message['method'] === 'session/prompt').map((message) => (message['params'] as { prompt: unknown }).prompt);
  return { protocol, state, prompts, settle };
}

describe('acpClientProtocol: what the agent said it takes', () => {
  it('declares images and files for its sessions, the schema told in the prompt', () => {
    expect(acpClientProtocol({ name: 'Agent', cwd: '/w' }).prompts).toEqual({ image: true, file: true });
  });

  it('an agent that takes images and embedded context gets the blocks as they are', async () => {
    const { protocol, state, prompts, settle } = await opened({ image: true, embeddedContext: true });
    expect(protocol.act(state, { type: 'start', turn: 1, input: input('Look', [{ type: 'text', text: 'Look' }, FILE]) })).toEqual({});
    await settle();
    expect(prompts()).toEqual([[{ type: 'text', text: 'Look\n' }, { type: 'resource', resource: { uri: 'file:///w/brief notes.txt', text: 'The code is ZEBRA.\n', mimeType: 'text/plain' } }]]);
    protocol.close?.(state);
  });

  it('an agent that says nothing of its prompts gets files as text, and no image: the turn fails, a steer is dropped (unsupported); nothing is sent', async () => {
    const { protocol, state, prompts, settle } = await opened(undefined);
    const failed = protocol.act(state, { type: 'start', turn: 1, input: input('See', [{ type: 'text', text: 'See' }, IMAGE]) });
    expect(failed.facts).toEqual([{ type: 'turnEnded', outcome: { kind: 'failed', reason: 'agent-error', message: expect.stringContaining('takes no image') as unknown } }]);
    protocol.act(state, { type: 'start', turn: 2, input: input('Read', [{ type: 'text', text: 'Read' }, FILE]) });
    const steer = input('See', [{ type: 'text', text: 'See' }, IMAGE], 'steer');
    expect(protocol.act(state, { type: 'steer', turn: 2, input: steer }).facts).toEqual([{ type: 'inputRejected', input: steer, reason: 'unsupported', message: expect.stringContaining('takes no image') as unknown }]);
    await settle();
    expect(prompts()).toEqual([[{ type: 'text', text: 'Read\n\n<file path="/w/brief notes.txt">\nThe code is ZEBRA.\n</file>' }]]);
    protocol.close?.(state);
  });
});

describe('acpClientProtocol: a session the agent keeps, loaded (resume)', () => {
  const facts = (reactions: readonly ProtocolReaction[]) => reactions.flatMap((reaction) => reaction.facts ?? []);

  it('sends session/load for that session in place of session/new, and announces it resumed once the agent answered', async () => {
    const { protocol, state, written, reactions, answer } = acpByHand({ resume: 'S9' });
    await answer('initialize', { protocolVersion: 1, agentCapabilities: { loadSession: true }, agentInfo: { name: 'a', version: '1.2.3' } });
    expect(written.map((message) => message['method'])).toEqual(['initialize', 'session/load']);
    expect(written[1]?.['params']).toEqual({ sessionId: 'S9', cwd: '/w', mcpServers: [] });
    expect(facts(reactions)).toEqual([]);
    await answer('session/load', {});
    expect(facts(reactions)).toEqual([{ type: 'content', message: { type: 'session.resumed', sessionId: 'S9', agentVersion: '1.2.3' } }, { type: 'opened' }]);
    protocol.close?.(state);
  });

  it("an agent that does not say loadSession is asked nothing more: the session opens, and its first turn fails saying why", async () => {
    const { protocol, state, written, reactions, answer } = acpByHand({ resume: 'S9' });
    await answer('initialize', { protocolVersion: 1, agentCapabilities: {} });
    expect(written.map((message) => message['method'])).toEqual(['initialize']);
    expect(facts(reactions)).toEqual([{ type: 'opened' }]);
    const failed = protocol.act(state, { type: 'start', turn: 1, input: input('hello') });
    expect(failed.facts).toEqual([
      { type: 'turnEnded', outcome: { kind: 'failed', reason: 'agent-error', message: 'the Agent could not load the session S9: its initialize answer does not say loadSession' } },
    ]);
    protocol.close?.(state);
  });
});
