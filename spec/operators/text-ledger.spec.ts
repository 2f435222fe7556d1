import { describe, expect, it } from '@jest/globals';
import { from, pipe } from 'rxjs';
import {
  bufferThinkingUntilTurnEnd,
  mapToCliMessage,
  snapshotToDelta,
  type AgentEvent,
  type MessageMapping,
  type PipelineItem,
  type TextChannel,
  type TextReading,
  type TurnEnd,
} from '../../lib/index.js';
import { ev, exit, scheduler, sourceMarble, text, withdraw } from '../helpers/items.js';

/**
 * The text ledger behind snapshotToDelta, through the operator: a replayed prefix (a new key
 * whose snapshots begin by repeating the channel's earlier text), withdrawals, eviction; and where
 * a withdrawal goes next (bufferThinkingUntilTurnEnd, mapToCliMessage).
 */

// A tiny dialect: `snap` events carry a snapshot, `delta` events a delta, of a key on a channel.
const read = (event: AgentEvent): TextReading | null => {
  const key = String(event['key']);
  const channel: TextChannel = event['channel'] === 'thought' ? 'thought' : 'assistant';
  if (event.type === 'snap') return { channel, key, snapshot: String(event['text']) };
  if (event.type === 'delta') return { channel, key, delta: String(event['delta']) };
  return null;
};
const snap = (value: string, key: string, channel: TextChannel = 'assistant') => ev('snap', { text: value, key, channel });
const delta = (value: string, key: string, channel: TextChannel = 'assistant') => ev('delta', { delta: value, key, channel });
const thought = (value: string) => text(value, 'thought');

const replaying = (maxKeys?: number) => snapshotToDelta({ createReader: () => read, replayedPrefix: true, ...(maxKeys === undefined ? {} : { maxKeys }) });

/** `values` through `replaying()`, marbled as `expected` (each event preceded by what it derives), the derived items named in `derived`. */
function expectReplaying(values: Record<string, PipelineItem>, expected: string, derived: Record<string, PipelineItem>): void {
  scheduler().run(({ cold, expectObservable }) => {
    expectObservable(cold<PipelineItem>(sourceMarble(expected), values).pipe(replaying())).toBe(expected, { ...values, ...derived });
  });
}

describe('snapshotToDelta with replayedPrefix', () => {
  it('holds back a snapshot that may be the replayed earlier text, then emits only what follows it', () => {
    const values = { a: snap('Let me.', 'm1'), b: snap('Let', 'm2'), c: snap('Let me.Done', 'm2'), d: snap('Let me.Done!', 'm2') };
    expectReplaying(values, '-(1a)-b-(2c)-(3d)|', { 1: text('Let me.'), 2: text('Done'), 3: text('!') });
  });

  it('recognises a replay that comes whole in the first snapshot, and one that equals the earlier text exactly', () => {
    const values = { a: snap('one', 'm1'), b: snap('one', 'm2'), c: snap('onetwo', 'm2'), d: snap('onetwothree', 'm3') };
    expectReplaying(values, '-(1a)-b-(2c)-(3d)|', { 1: text('one'), 2: text('two'), 3: text('three') });
  });

  it('emits a held snapshot whole when it departs from the earlier text', () => {
    const values = { a: snap('abc', 'm1'), b: snap('ab', 'm2'), c: snap('abX', 'm2'), d: snap('abXY', 'm2') };
    expectReplaying(values, '-(1a)-b-(2c)-(3d)|', { 1: text('abc'), 2: text('abX'), 3: text('Y') });
  });

  it('emits a first snapshot that departs from the earlier text at once, whole', () => {
    const values = { a: snap('abc', 'm1'), b: snap('Other', 'm2') };
    expectReplaying(values, '-(1a)-(2b)|', { 1: text('abc'), 2: text('Other') });
  });

  it('emits a held snapshot whole when another key of the channel arrives', () => {
    // m3's earlier text is then "abcab", which "Q" departs from.
    const values = { a: snap('abc', 'm1'), b: snap('ab', 'm2'), c: snap('Q', 'm3') };
    expectReplaying(values, '-(1a)-b-(23c)|', { 1: text('abc'), 2: text('ab'), 3: text('Q') });
  });

  it('counts a released key in the earlier text of the keys after it', () => {
    const values = { a: snap('abc', 'm1'), b: snap('ab', 'm2'), c: snap('abcab!', 'm3') };
    expectReplaying(values, '-(1a)-b-(23c)|', { 1: text('abc'), 2: text('ab'), 3: text('!') });
  });

  it('emits a held snapshot just before the exit item', () => {
    const values = { a: snap('abc', 'm1'), b: snap('ab', 'm2'), x: exit() };
    expectReplaying(values, '-(1a)-b-(2x)|', { 1: text('abc'), 2: text('ab') });
  });

  it('emits a held snapshot at completion', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const values = { a: snap('abc', 'm1'), b: snap('ab', 'm2') };
      expectObservable(cold<PipelineItem>('-a----b-|', values).pipe(replaying())).toBe('-(1a)-b-(2|)', { ...values, 1: text('abc'), 2: text('ab') });
    });
  });

  it('a delta for a held key releases it: the held snapshot was its own text', () => {
    const values = { a: snap('abc', 'm1'), b: snap('ab', 'm2'), c: delta('!', 'm2') };
    expectReplaying(values, '-(1a)-b-(23c)|', { 1: text('abc'), 2: text('ab'), 3: text('!') });
  });

  it('a key that streams deltas is never taken for a replay', () => {
    const values = { a: snap('abc', 'm1'), b: delta('ab', 'm2'), c: delta('c', 'm2') };
    expectReplaying(values, '-(1a)-(2b)-(3c)|', { 1: text('abc'), 2: text('ab'), 3: text('c') });
  });

  it('over several tool turns, a message may replay all the messages before it', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const values = {
        a: snap('one ', 'm1'),
        b: snap('one two ', 'm2'),
        c: snap('one t', 'm3'),
        d: snap('one two three', 'm3'),
        e: snap('one two three', 'm3'),
      };
      const expected = '-(1a)-(2b)-c-(3d)-e|';
      expectObservable(cold<PipelineItem>(sourceMarble(expected), values).pipe(replaying())).toBe(expected, {
        ...values,
        1: text('one '),
        2: text('two '),
        3: text('three'),
      });
    });
  });

  it('a message with no text before the tool leaves nothing to replay: the next one is emitted at once', () => {
    // m1 said nothing on the assistant channel (it only thought): "a" cannot be a replay.
    const values = { a: snap('', 'm1'), b: snap('hmm', 'm1', 'thought'), c: snap('a', 'm2'), d: snap('ab', 'm2') };
    expectReplaying(values, '-a-(1b)-(2c)-(3d)|', { 1: thought('hmm'), 2: text('a'), 3: text('b') });
  });

  it('keeps each channel\'s earlier text and held snapshot apart', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const values = {
        a: snap('plan', 'm1', 'thought'),
        b: snap('Answer', 'm1'),
        // Held on the assistant channel; the thought of the same key does not release it.
        c: snap('Ans', 'm2'),
        d: snap('plan, then', 'm2', 'thought'),
        e: snap('Answer. More', 'm2'),
        // "pl" is no replay on the assistant channel, whose earlier text is "Answer. More".
        f: snap('pl', 'm3'),
      };
      const expected = '-(1a)-(2b)-c-(3d)-(4e)-(5f)|';
      expectObservable(cold<PipelineItem>(sourceMarble(expected), values).pipe(replaying())).toBe(expected, {
        ...values,
        1: thought('plan'),
        2: text('Answer'),
        3: thought(', then'),
        4: text('. More'),
        5: text('pl'),
      });
    });
  });

  it('when an earlier key diverges, withdraws the later keys\' text with it and emits that text again after the new text', () => {
    const values = { a: snap('abc', 'm1'), b: snap('abcX', 'm2'), c: snap('abD', 'm1'), d: snap('abcXY', 'm2') };
    expectReplaying(values, '-(1a)-(2b)-(345c)-(6d)|', { 1: text('abc'), 2: text('X'), 3: withdraw('cX'), 4: text('D'), 5: text('X'), 6: text('Y') });
  });

  it('withdraws and emits whole characters: a divergence inside a surrogate pair takes back the whole pair', () => {
    // 😀 and 😁 share their high surrogate (\uD83D): a text item must never hold half a character.
    const values = { a: snap('Done 😀', 'm1'), b: snap('Done 😁', 'm1') };
    expectReplaying(values, '-(1a)-(23b)|', { 1: text('Done 😀'), 2: withdraw('😀'), 3: text('😁') });
  });

  it('when an earlier key grows after later keys emitted, its new text goes in its place, not at the end', () => {
    // k1 "one ", k2 "two", then k1 "one more ": the answer is "one more two", so "two" is taken back and given again after "more ".
    const values = { a: snap('one ', 'k1'), b: snap('two', 'k2'), c: snap('one more ', 'k1') };
    expectReplaying(values, '-(1a)-(2b)-(345c)|', { 1: text('one '), 2: text('two'), 3: withdraw('two'), 4: text('more '), 5: text('two') });
  });

  it('a forgotten key\'s text is no longer earlier text that a replay repeats', () => {
    scheduler().run(({ cold, expectObservable }) => {
      // With maxKeys 2, m3 makes m1 forgotten: m4's earlier text is "two three ".
      const values = { a: snap('one ', 'm1'), b: snap('two ', 'm2'), c: delta('three ', 'm3'), d: snap('two three four', 'm4') };
      const expected = '-(1a)-(2b)-(3c)-(4d)|';
      expectObservable(cold<PipelineItem>(sourceMarble(expected), values).pipe(replaying(2))).toBe(expected, {
        ...values,
        1: text('one '),
        2: text('two '),
        3: text('three '),
        4: text('four'),
      });
    });
  });

  it('forgets the oldest key beyond maxKeys: a late snapshot of it is new text', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const values = { a: snap('one ', 'm1'), b: snap('two ', 'm2'), c: snap('three', 'm3'), d: snap('two ', 'm2'), e: snap('one ', 'm1') };
      const expected = '-(1a)-(2b)-(3c)-d-(4e)|';
      expectObservable(cold<PipelineItem>(sourceMarble(expected), values).pipe(replaying(2))).toBe(expected, {
        ...values,
        1: text('one '),
        2: text('two '),
        3: text('three'),
        4: text('one '),
      });
    });
  });

  it('forgets the oldest key first, also when the oldest never had text (a tool-only message)', () => {
    scheduler().run(({ cold, expectObservable }) => {
      // maxKeys 2: m1 (empty), m2 "x", m3 "y". m1 is the oldest and is forgotten; m2 is remembered.
      const values = { a: snap('', 'm1'), b: snap('x', 'm2'), c: snap('y', 'm3'), d: snap('x', 'm2') };
      const expected = '-a-(1b)-(2c)-d|';
      const result = cold<PipelineItem>(sourceMarble(expected), values).pipe(snapshotToDelta({ createReader: () => read, maxKeys: 2 }));
      expectObservable(result).toBe(expected, { ...values, 1: text('x'), 2: text('y') });
    });
  });

  it('completes empty, and stays silent on never, even while a snapshot is held', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<PipelineItem>('|').pipe(replaying())).toBe('|');
      expectObservable(cold<PipelineItem>('-').pipe(replaying())).toBe('-');
      const values = { a: snap('abc', 'm1'), b: snap('ab', 'm2') };
      expectObservable(cold<PipelineItem>('-a----b-', values).pipe(replaying())).toBe('-(1a)-b-', { ...values, 1: text('abc') });
    });
  });

  it('forwards an error, and drops a held snapshot with it', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const values = { a: snap('abc', 'm1'), b: snap('ab', 'm2') };
      expectObservable(cold<PipelineItem>('-a----b-#', values).pipe(replaying())).toBe('-(1a)-b-#', { ...values, 1: text('abc') });
    });
  });

  it('emits nothing held after an early unsubscribe, and leaves the source', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const values = { a: snap('abc', 'm1'), b: snap('ab', 'm2'), c: snap('Q', 'm3') };
      const source = cold<PipelineItem>('-a----b-----c|', values);
      expectObservable(source.pipe(replaying()), '^-------!').toBe('-(1a)-b-', { ...values, 1: text('abc') });
      expectSubscriptions(source.subscriptions).toBe('^-------!');
    });
  });

  it('two subscriptions share nothing: each holds and recognises the replay on its own', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const values = { a: snap('abc', 'm1'), b: snap('ab', 'm2'), c: snap('abcd', 'm2') };
      const expected = '-(1a)-b-(2c)|';
      const result = cold<PipelineItem>(sourceMarble(expected), values).pipe(replaying());
      expectObservable(result).toBe(expected, { ...values, 1: text('abc'), 2: text('d') });
      expectObservable(result).toBe(expected, { ...values, 1: text('abc'), 2: text('d') });
    });
  });
});

const turnEnd = (event: AgentEvent): TurnEnd => (event.type === 'end' ? 'final' : event.type === 'tool-end' ? 'tool-use' : null);
const E = ev('end');
const U = ev('tool-end');

describe('a withdrawal of thinking, in bufferThinkingUntilTurnEnd', () => {
  it('trims the held thinking, and what follows takes its place', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const values = { a: thought('Let me think'), w: withdraw('think', 'thought'), b: thought('see.'), E };
      expectObservable(cold<PipelineItem>('-a-w-b-E---|', values).pipe(bufferThinkingUntilTurnEnd({ turnEnd }))).toBe('-------(TE)|', {
        E,
        T: thought('Let me see.'),
      });
    });
  });

  it('withdrawn thinking never reaches the messages, and assistant text passes by untouched', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const values = { a: thought('abc'), t: text('Hi'), w: withdraw('abc', 'thought'), E };
      expectObservable(cold<PipelineItem>('-a-t-w-E|', values).pipe(bufferThinkingUntilTurnEnd({ turnEnd }))).toBe('---t---E|', { t: text('Hi'), E });
    });
  });

  it('a withdrawal of assistant text passes through', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const values = { w: withdraw('lo'), a: thought('hmm'), E };
      expectObservable(cold<PipelineItem>('-w-a-E---|', values).pipe(bufferThinkingUntilTurnEnd({ turnEnd }))).toBe('-w---(TE)|', { w: withdraw('lo'), E, T: thought('hmm') });
    });
  });

  it('with snapshotToDelta: a thought snapshot that diverges is corrected in the thought released at the turn end', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const values = { a: snap('I think so', 'm1', 'thought'), b: snap('I think not', 'm1', 'thought'), E };
      const pipeline = pipe(replaying(), bufferThinkingUntilTurnEnd({ turnEnd }));
      expectObservable(cold<PipelineItem>('-a-b-E---|', values).pipe(pipeline)).toBe('-a-b-(TE)|', { ...values, T: thought('I think not') });
    });
  });

  it('with snapshotToDelta: a late revision of a message\'s thinking stays in that message, after a tool-use turn', () => {
    scheduler().run(({ cold, expectObservable }) => {
      // m1 thought "abc", ended in tool use; m2 thought "de"; then m1's thinking is revised to "abX".
      // The released thought is each message's thinking, joined: "abX", then "de".
      const values = { a: snap('abc', 'm1', 'thought'), U, b: snap('de', 'm2', 'thought'), c: snap('abX', 'm1', 'thought'), E };
      const pipeline = pipe(replaying(), bufferThinkingUntilTurnEnd({ turnEnd }));
      expectObservable(cold<PipelineItem>('-a-U-b-c-E---|', values).pipe(pipeline)).toBe('-a-U-b-c-(TE)|', { ...values, T: thought('abX\n\nde') });
    });
  });
});

describe('a withdrawal in mapToCliMessage', () => {
  const mapping: MessageMapping<null> = {
    name: 'toy',
    createState: () => null,
    map: () => [],
    conclude: () => ({ kind: 'completed', stopReason: 'end_turn' }),
    lastError: () => undefined,
    sessionId: () => undefined,
  };

  it('becomes assistant.withdrawn on the assistant channel, and nothing on the thought channel', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const values = { a: text('Hello'), w: withdraw('lo'), v: withdraw('hm', 'thought'), b: text('p!'), x: exit() };
      expectObservable(cold<PipelineItem>('-a-w-v-b-x|', values).pipe(mapToCliMessage(mapping))).toBe('-a-w---b-(x|)', {
        a: { type: 'assistant', text: 'Hello' },
        w: { type: 'assistant.withdrawn', text: 'lo' },
        b: { type: 'assistant', text: 'p!' },
        x: { type: 'terminal.completed', stopReason: 'end_turn' },
      });
    });
  });

  it('with snapshotToDelta: a diverged snapshot becomes assistant.withdrawn and the new text', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const values = { a: snap('one ', 'm1'), b: snap('two', 'm2'), c: snap('uno ', 'm1'), x: exit() };
      const result = cold<PipelineItem>('-a-b-c-----x|', values).pipe(replaying(), mapToCliMessage(mapping));
      expectObservable(result).toBe('-a-b-(cde)-(x|)', {
        a: { type: 'assistant', text: 'one ' },
        b: { type: 'assistant', text: 'two' },
        c: { type: 'assistant.withdrawn', text: 'one two' },
        d: { type: 'assistant', text: 'uno ' },
        e: { type: 'assistant', text: 'two' },
        x: { type: 'terminal.completed', stopReason: 'end_turn' },
      });
    });
  });

  it('with snapshotToDelta: applying the messages in order gives each key\'s last snapshot, once', () => {
    const items: PipelineItem[] = [snap('one ', 'm1'), snap('two', 'm2'), snap('uno ', 'm1'), snap('two!', 'm2'), snap('une', 'm1'), exit()];
    let answer = '';
    from(items)
      .pipe(replaying(), mapToCliMessage(mapping))
      .subscribe((message) => {
        if (message.type === 'assistant') answer += message.text;
        if (message.type === 'assistant.withdrawn') {
          expect(answer.endsWith(message.text)).toBe(true);
          answer = answer.slice(0, answer.length - message.text.length);
        }
      });
    expect(answer).toBe('unetwo!');
  });
});
