import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { type CliMessage, type ProcessItem } from '../../../lib/index.js';
import { piOutputToMessages } from '../../../lib/dialects.js';
import { derivedReadme, derivedText, fixtureLines, PI_DERIVED, THINKING_TEXT, TOOL_THEN_TEXT } from '../../helpers/derive-transcripts.js';
import { from, lastValueFrom, toArray } from 'rxjs';
import { appliedAnswer, replayLines } from '../../helpers/answer.js';
import { exit } from '../../helpers/items.js';
import { transcriptFacts } from '../../helpers/pi-transcripts.js';
import { fixture } from '../../helpers/processes.js';

/**
 * The text shapes pi versions send (PROTOCOL.md Q1, Q2), replayed from transcripts derived from the
 * recorded ones (spec/fixtures/pi/derived/README.md): snapshots only, snapshots only that repeat
 * the earlier messages' text after a tool turn, deltas only, and deltas only with no final text.
 * Whatever the shape, the answer is the same, each character once.
 */

function replay(name: string): Promise<CliMessage[]> {
  return replayLines(fixtureLines(name), piOutputToMessages());
}

const applied = appliedAnswer;

const textTypes = new Set<string>(['assistant', 'assistant.withdrawn', 'assistant.thought']);
const notText = (messages: readonly CliMessage[]) => messages.filter((message) => !textTypes.has(message.type));
const thoughts = (messages: readonly CliMessage[]) => messages.flatMap((message) => (message.type === 'assistant.thought' ? [message.text] : []));
const withdrawals = (messages: readonly CliMessage[]) => messages.filter((message) => message.type === 'assistant.withdrawn');
const derived = (name: string) => `pi/derived/${name}.jsonl`;


const assistantTexts = (messages: readonly CliMessage[]): string[] => messages.flatMap((message) => (message.type === 'assistant' ? [message.text] : []));
describe('pi text shapes, from derived transcripts', () => {
  it.each(PI_DERIVED.map((item) => [item.name, item] as const))('%s is what its derivation gives', (_name, item) => {
    expect(readFileSync(fixture(item.name), 'utf8')).toBe(derivedText(item));
  });

  it('the README of the derived transcripts says how each was made', () => {
    expect(readFileSync(fixture('pi/derived/README.md'), 'utf8')).toBe(derivedReadme('pi'));
  });

  describe.each(['snapshots-only', 'replayed-prefix', 'deltas-only', 'deltas-only-no-end-text'])('tool_call_then_text, %s', (shape) => {
    it('gives the answer of both assistant messages, each character once, with nothing withdrawn', async () => {
      const messages = await replay(derived(`tool_call_then_text.${shape}`));
      expect(applied(messages)).toBe(transcriptFacts('tool_call_then_text').answer);
      expect(applied(messages)).toBe('Let me run a tool first.The tool returned: "hello\\n". Done.');
      expect(withdrawals(messages)).toEqual([]);
    });

    it('gives the same session, tool messages and terminal as the recorded run', async () => {
      const recorded = await replay(TOOL_THEN_TEXT);
      expect(notText(await replay(derived(`tool_call_then_text.${shape}`)))).toEqual(notText(recorded));
      expect(notText(recorded).map((message) => message.type)).toEqual(['session.started', 'tool.call', 'tool.update', 'tool.completed', 'terminal.completed']);
    });
  });

  // The snapshot shapes stream the recorded snapshots' growth: the same pieces with or without a replayed prefix.
  const SNAPSHOT_PIECES = ['Let ', 'me run ', 'a ', 'tool ', 'first.', 'The ', 'tool ', 'returned: ', '"hello\\n". ', 'Done.'];

  it('streams a snapshots-only message as it grows, not at its end', async () => {
    const messages = await replay(derived('tool_call_then_text.snapshots-only'));
    expect(assistantTexts(messages)).toEqual(SNAPSHOT_PIECES);
  });

  it('recognises the replayed first message at once and streams only the second message\'s own text', async () => {
    const messages = await replay(derived('tool_call_then_text.replayed-prefix'));
    expect(assistantTexts(messages)).toEqual(SNAPSHOT_PIECES);
  });

  it('streams the deltas of a deltas-only message as they come', async () => {
    const messages = await replay(derived('tool_call_then_text.deltas-only-no-end-text'));
    expect(assistantTexts(messages)).toEqual([
      'Let ',
      'me ',
      'run ',
      'a ',
      'tool ',
      'first.',
      'The ',
      'tool ',
      'returned: ',
      '"hello\\n". ',
      'Done.',
    ]);
  });

  describe.each(['snapshots-only', 'deltas-only', 'deltas-only-no-end-text'])('thinking_text, %s', (shape) => {
    it('gives the thought once, before the terminal, and the answer once', async () => {
      const messages = await replay(derived(`thinking_text.${shape}`));
      const facts = transcriptFacts('thinking_text');
      expect(thoughts(messages)).toEqual(facts.thinking);
      expect(thoughts(messages)).toEqual(['The user wants a greeting. I will think briefly, step by step, then answer politely.']);
      expect(applied(messages)).toBe(facts.answer);
      expect(withdrawals(messages)).toEqual([]);
      expect(notText(messages)).toEqual(notText(await replay(THINKING_TEXT)));
      expect(messages.at(-1)?.type).toBe('terminal.completed');
    });
  });
});

describe('pi snapshots only, synthetic runs', () => {
  // A run of assistant messages with a tool turn between consecutive ones, in pi's snapshots-only
  // shape (no delta): thinking grows character by character, then text; message_end is final.
  function snapshotsOnlyRun(plan: readonly { readonly thinking: string; readonly text: string }[]): ProcessItem[] {
    const message = (timestamp: number, thinking: string, text: string, stopReason: string) => ({
      role: 'assistant',
      content: [{ type: 'thinking', thinking }, { type: 'text', text }, ...(stopReason === 'toolUse' ? [{ type: 'toolCall', id: `call_${timestamp}`, name: 'bash', arguments: {} }] : [])],
      stopReason,
      timestamp,
    });
    const events: object[] = [{ type: 'session', version: 3, id: 'S', timestamp: 't', cwd: '/w' }, { type: 'agent_start' }];
    plan.forEach(({ thinking, text }, index) => {
      const timestamp = 1000 + index;
      const stopReason = index === plan.length - 1 ? 'stop' : 'toolUse';
      events.push({ type: 'message_start', message: { ...message(timestamp, '', '', 'stop'), content: [] } });
      for (let n = 1; n <= thinking.length; n += 1) {
        const snapshot = message(timestamp, thinking.slice(0, n), '', 'stop');
        events.push({ type: 'message_update', assistantMessageEvent: { type: 'thinking_delta', contentIndex: 0, partial: snapshot }, message: snapshot });
      }
      for (let n = 1; n <= text.length; n += 1) {
        const snapshot = message(timestamp, thinking, text.slice(0, n), 'stop');
        events.push({ type: 'message_update', assistantMessageEvent: { type: 'text_delta', contentIndex: 1, partial: snapshot }, message: snapshot });
      }
      events.push({ type: 'message_end', message: message(timestamp, thinking, text, stopReason) });
      if (stopReason === 'toolUse') {
        events.push({ type: 'tool_execution_start', toolCallId: `call_${timestamp}`, toolName: 'bash', args: {} });
        events.push({ type: 'tool_execution_end', toolCallId: `call_${timestamp}`, toolName: 'bash', result: { content: [] }, isError: false });
      }
    });
    events.push({ type: 'agent_end', messages: [] });
    return [...events.map((event): ProcessItem => ({ kind: 'line', text: JSON.stringify(event) })), exit()];
  }

  const replaySynthetic = (items: readonly ProcessItem[]) => lastValueFrom(from(items).pipe(piOutputToMessages(), toArray()));

  it('a message whose whole answer is a proper prefix of the answer before it is still given, once', async () => {
    const messages = await replaySynthetic(snapshotsOnlyRun([{ thinking: '', text: 'one' }, { thinking: '', text: 'on' }, { thinking: '', text: 'three' }]));
    expect(applied(messages)).toBe('oneonthree');
    expect(withdrawals(messages)).toEqual([]);
  });

  it('a message whose whole thinking is a proper prefix of the thinking before it keeps its own place in the released thought', async () => {
    const messages = await replaySynthetic(
      snapshotsOnlyRun([
        { thinking: 'abc', text: 'one' },
        { thinking: 'ab', text: 'two' },
        { thinking: 'xyz', text: 'three' },
      ]),
    );
    expect(applied(messages)).toBe('onetwothree');
    // The thinking of the three messages, each in its place: "ab" is the second message's, not the start of the third's.
    expect(thoughts(messages)).toEqual(['abc\n\nab\n\nxyz']);
  });
});
