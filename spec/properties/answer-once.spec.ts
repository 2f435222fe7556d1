import { describe, expect, it } from '@jest/globals';
import { appliedAnswer } from '../helpers/answer.js';
import fc from 'fast-check';
import { from } from 'rxjs';
import { collectRun, type CliMessage, type ProcessItem, type RunResult } from '../../lib/index.js';
import { piOutputToMessages } from '../../lib/dialects.js';
import { exit } from '../helpers/items.js';

/**
 * Invariant 3 over random pi runs: the answer split into 1–5 assistant messages with a tool turn
 * between consecutive ones, streamed in random chunks in each text shape that pi versions send
 * (PROTOCOL.md Q1, Q2). Applying the `assistant` and `assistant.withdrawn` messages in order gives
 * the messages' own texts concatenated, each character once, and exactly one terminal ends the stream.
 * The lines are modelled on spec/fixtures/pi/tool_call_then_text.jsonl.
 */

const SHAPES = [
  /** pi 0.73: a delta and a snapshot (which may run ahead of it) in every update; message_end has the text. */
  'deltas-and-snapshots',
  /** Snapshots only: no delta in any update. */
  'snapshots-only',
  /** Snapshots only, and every snapshot of a message after a tool turn begins with the earlier messages' text. */
  'snapshots-replayed',
  /** Deltas only: the updates' snapshots have no text; message_end has it. */
  'deltas-only',
  /** Deltas only, and message_end has no text either. */
  'deltas-only-no-end-text',
] as const;
type Shape = (typeof SHAPES)[number];

const char = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('a', 'b', ' ') },
  { weight: 2, arbitrary: fc.constantFrom('é', '🚀', '\n', '"', '\\', '\u2028', '👩‍💻') },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
);

const message = fc.record({
  text: fc.string({ unit: char, maxLength: 10 }),
  /** Where the text is cut into chunks (positions in code points; repeats make empty chunks). */
  cuts: fc.array(fc.nat(12), { maxLength: 5 }),
  /** How many chunks each update's snapshot runs ahead of its delta. */
  ahead: fc.array(fc.nat(2), { maxLength: 6 }),
  /** Snapshots-replayed: whether the replayed text itself streams in chunks, or is whole from the first snapshot. */
  replayStreams: fc.boolean(),
});
type Message = typeof message extends fc.Arbitrary<infer T> ? T : never;

const run = fc.record({ messages: fc.array(message, { minLength: 1, maxLength: 5 }), shape: fc.constantFrom(...SHAPES) });

/** A text cut into chunks at code point positions (a surrogate pair is never split). */
function chunksOf(text: string, cuts: readonly number[]): string[] {
  const points = Array.from(text);
  const at = cuts.map((cut) => cut % (points.length + 1)).sort((a, b) => a - b);
  const chunks: string[] = [];
  let from = 0;
  for (const cut of [...at, points.length]) {
    chunks.push(points.slice(from, cut).join(''));
    from = cut;
  }
  // An empty text with no cuts streams nothing.
  return text === '' && cuts.length === 0 ? [] : chunks;
}

const USAGE = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

/** The pi lines of a run in the given shape. */
function piLines(messages: readonly Message[], shape: Shape): string[] {
  const events: object[] = [
    { type: 'session', version: 3, id: 'S', timestamp: '2026-11-30T05:14:30.732Z', cwd: '/home/dev/project' },
    { type: 'agent_start' },
    { type: 'turn_start' },
    { type: 'message_start', message: { role: 'user', content: [{ type: 'text', text: 'go' }], timestamp: 1 } },
    { type: 'message_end', message: { role: 'user', content: [{ type: 'text', text: 'go' }], timestamp: 1 } },
  ];
  const deltas = shape === 'deltas-and-snapshots' || shape === 'deltas-only' || shape === 'deltas-only-no-end-text';
  const snapshotText = shape !== 'deltas-only' && shape !== 'deltas-only-no-end-text';
  let earlier = '';
  messages.forEach((plan, index) => {
    const last = index === messages.length - 1;
    const timestamp = 1000 + index;
    const callId = `call_${index}`;
    const toolCall = { type: 'toolCall', id: callId, name: 'bash', arguments: { command: 'true' } };
    const prefix = shape === 'snapshots-replayed' ? earlier : '';
    // The text that streams: the message's own text, or with a streaming replay, the replay too.
    const streamed = plan.replayStreams ? prefix + plan.text : plan.text;
    const before = plan.replayStreams ? '' : prefix;
    const chunks = chunksOf(streamed, plan.cuts);
    const assistant = (text: string, extra: object[] = [], stopReason = 'stop') => ({
      role: 'assistant',
      content: [{ type: 'text', text }, ...extra],
      api: 'openai-completions',
      provider: 'fake',
      model: 'm',
      usage: USAGE,
      stopReason,
      timestamp,
    });
    events.push({ type: 'message_start', message: { ...assistant(prefix), content: prefix === '' ? [] : [{ type: 'text', text: prefix }] } });
    const update = (type: string, text: string, fields: object = {}) => {
      const snapshot = assistant(snapshotText ? before + text : '');
      events.push({ type: 'message_update', assistantMessageEvent: { type, contentIndex: 0, ...fields, partial: snapshot }, message: snapshot });
    };
    // text_start and text_end carry snapshots too (text_start's already holds the first chunk); only deltas' updates are text.
    if (chunks.length > 0) update('text_start', chunks[0] ?? '');
    let covered = 0;
    chunks.forEach((chunk, at) => {
      covered = Math.min(chunks.length, Math.max(covered, at + 1 + (plan.ahead[at] ?? 0)));
      update('text_delta', chunks.slice(0, covered).join(''), deltas ? { delta: chunk } : {});
    });
    if (chunks.length > 0) update('text_end', streamed, { content: snapshotText ? before + streamed : '' });
    const full = prefix + plan.text;
    const endText = shape === 'deltas-only-no-end-text' ? '' : full;
    if (!last) {
      const snapshot = assistant(snapshotText ? full : '', [toolCall], 'toolUse');
      events.push({ type: 'message_update', assistantMessageEvent: { type: 'toolcall_end', contentIndex: 1, toolCall, partial: snapshot }, message: snapshot });
    }
    const final = assistant(endText, last ? [] : [toolCall], last ? 'stop' : 'toolUse');
    events.push({ type: 'message_end', message: final });
    if (!last) {
      const result = { content: [{ type: 'text', text: 'ok\n' }] };
      const toolResult = { role: 'toolResult', toolCallId: callId, toolName: 'bash', content: result.content, isError: false, timestamp: timestamp + 0.5 };
      events.push({ type: 'tool_execution_start', toolCallId: callId, toolName: 'bash', args: toolCall.arguments });
      events.push({ type: 'tool_execution_end', toolCallId: callId, toolName: 'bash', result, isError: false });
      events.push({ type: 'message_start', message: toolResult }, { type: 'message_end', message: toolResult });
      events.push({ type: 'turn_end', message: final, toolResults: [toolResult] }, { type: 'turn_start' });
    } else {
      events.push({ type: 'turn_end', message: final, toolResults: [] });
    }
    earlier += plan.text;
  });
  events.push({ type: 'agent_end', messages: [] });
  return events.map((event) => JSON.stringify(event));
}

function replay(lines: readonly string[]): { messages: CliMessage[]; completed: boolean } {
  const messages: CliMessage[] = [];
  let completed = false;
  from<ProcessItem[]>([...lines.map((text): ProcessItem => ({ kind: 'line', text })), exit()])
    .pipe(piOutputToMessages())
    .subscribe({ next: (item) => messages.push(item), complete: () => (completed = true) });
  return { messages, completed };
}

const applied = appliedAnswer;

/** Texts joined as a reader wants them: the empty ones left out, a blank line between two, counting the line breaks already there. */
function apart(texts: readonly string[]): string {
  return texts
    .filter((text) => text !== '')
    .reduce((joined, text) => {
      if (joined === '') return text;
      const breaks = (/\n{0,2}$/.exec(joined)?.[0].length ?? 0) + (/^\n{0,2}/.exec(text)?.[0].length ?? 0);
      return joined + '\n'.repeat(Math.max(0, 2 - breaks)) + text;
    }, '');
}

/**
 * The one ambiguity of the snapshot shapes: without a replay, a message after a tool turn whose own
 * text begins with the whole (non-empty) text of the messages before it looks exactly like a message
 * that replays them, and is read as one. No reader can tell the two apart; such runs are left out
 * for that shape only.
 */
function ambiguous(messages: readonly Message[], shape: Shape): boolean {
  if (shape !== 'snapshots-only') return false;
  let earlier = '';
  for (const plan of messages) {
    if (earlier !== '' && plan.text.startsWith(earlier)) return true;
    earlier += plan.text;
  }
  return false;
}

describe('the answer, once, in every text shape (property-based)', () => {
  it('applying assistant and assistant.withdrawn in order gives the messages\' own texts once; one terminal ends the stream', () => {
    fc.assert(
      fc.property(run, ({ messages, shape }) => {
        fc.pre(!ambiguous(messages, shape));
        const { messages: output, completed } = replay(piLines(messages, shape));
        expect(applied(output)).toBe(messages.map((plan) => plan.text).join(''));
        // Nothing here ever diverges: nothing is withdrawn.
        expect(output.filter((message) => message.type === 'assistant.withdrawn')).toEqual([]);
        const terminals = output.filter((message) => message.type === 'terminal.completed' || message.type === 'terminal.failed');
        expect(terminals).toHaveLength(1);
        expect(output.at(-1)).toBe(terminals[0]);
        expect(terminals[0]?.type).toBe('terminal.completed');
        expect(completed).toBe(true);
        // Every tool turn is there once.
        expect(output.filter((message) => message.type === 'tool.call')).toHaveLength(messages.length - 1);
        expect(output.filter((message) => message.type === 'tool.completed')).toHaveLength(messages.length - 1);
      }),
      { numRuns: 1000 },
    );
  });

  it('collectRun keeps the messages apart: text is their non-empty texts with a blank line between, finalText the last one\'s', () => {
    fc.assert(
      fc.property(run, ({ messages, shape }) => {
        fc.pre(!ambiguous(messages, shape));
        const { messages: output } = replay(piLines(messages, shape));
        let result: RunResult | undefined;
        from(output).pipe(collectRun()).subscribe((value) => (result = value));
        expect(result?.text).toBe(apart(messages.map((plan) => plan.text)));
        expect(result?.finalText).toBe(messages.at(-1)?.text);
      }),
      { numRuns: 500 },
    );
  });

  it('the ambiguity left out above is real: such a run in snapshots only reads as a replay', () => {
    const messages: Message[] = [
      { text: 'ab', cuts: [], ahead: [], replayStreams: false },
      { text: 'abc', cuts: [], ahead: [], replayStreams: false },
    ];
    expect(ambiguous(messages, 'snapshots-only')).toBe(true);
    expect(applied(replay(piLines(messages, 'snapshots-only')).messages)).toBe('abc');
    // In every other shape it is read right.
    for (const shape of SHAPES.filter((other) => other !== 'snapshots-only')) expect(applied(replay(piLines(messages, shape)).messages)).toBe('ababc');
  });
});
