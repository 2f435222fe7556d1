import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { lastValueFrom, from, toArray } from 'rxjs';
import { parsePiLine } from '../../../lib/agents/pi/events.js';
import { type ProcessItem } from '../../../lib/index.js';
import { piOutputToMessages } from '../../../lib/dialects.js';
import { exit, line } from '../../helpers/items.js';
import { fixture } from '../../helpers/processes.js';

/** What JSON.parse does with a line: its value, or the message it throws. */
function reference(text: string): { value: unknown } | { error: string } {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

function actual(text: string): { value: unknown } | { error: string } {
  try {
    return { value: parsePiLine(text) };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

/** A message_update line in pi's exact shape: the same message serialized twice. */
function update(message: unknown, event: Record<string, unknown> = { type: 'text_delta', contentIndex: 0, delta: 'x' }): string {
  const snapshot = JSON.stringify(message);
  const head = JSON.stringify({ type: 'message_update', assistantMessageEvent: event }).slice(0, -2);
  return `${head},"partial":${snapshot}},"message":${snapshot}}`;
}

const assistant = (text: string): Record<string, unknown> => ({
  role: 'assistant',
  content: [{ type: 'text', text }],
  api: 'openai-completions',
  stopReason: 'stop',
  timestamp: 1,
});

/** True when the fast path was taken: the two snapshots are one object. */
function sharedSnapshot(value: unknown): boolean {
  const event = value as { assistantMessageEvent: { partial: unknown }; message: unknown };
  return event.assistantMessageEvent.partial === event.message;
}

describe('parsePiLine', () => {
  it('gives what JSON.parse gives for every line of every recorded pi transcript', () => {
    const files = readdirSync(fixture('pi')).filter((name) => name.endsWith('.jsonl'));
    expect(files.length).toBeGreaterThan(5);
    let updates = 0;
    for (const name of files) {
      for (const text of readFileSync(fixture(`pi/${name}`), 'utf8').split('\n')) {
        if (text === '') continue;
        const value = parsePiLine(text);
        expect(value).toEqual(JSON.parse(text));
        if (text.startsWith('{"type":"message_update"')) {
          updates += 1;
          // Real pi lines repeat the message byte for byte: every one takes the fast path.
          expect(sharedSnapshot(value)).toBe(true);
        }
      }
    }
    expect(updates).toBeGreaterThan(100);
  });

  it('parses the repeated message once and keeps key order, partial included', () => {
    const text = update(assistant('Hello'));
    const value = parsePiLine(text);
    expect(value).toEqual(JSON.parse(text));
    expect(sharedSnapshot(value)).toBe(true);
    expect(Object.keys(value as object)).toEqual(['type', 'assistantMessageEvent', 'message']);
    expect(Object.keys((value as { assistantMessageEvent: object }).assistantMessageEvent)).toEqual(['type', 'contentIndex', 'delta', 'partial']);
  });

  it('handles braces, brackets, quotes, escaped quotes and backslashes inside the snapshot and the delta', () => {
    const nasty = [
      '{"k":[1]}',
      '}],"message":{"x":1}}',
      'she said "hi"',
      'escaped \\" quote',
      'ends with a backslash \\',
      '\\\\"',
      'line\nbreak\ttab',
      'u2028\u2028 and é ✓ 🚀',
      '"partial":{',
      '},"message":',
    ];
    for (const piece of nasty) {
      for (const text of [
        update(assistant(piece)),
        update(assistant(piece), { type: 'text_delta', contentIndex: 0, delta: piece }),
        update({ ...assistant('x'), content: [{ type: 'toolCall', id: 'c1', name: 'bash', arguments: { command: piece }, partialArgs: piece }] }, {
          type: 'toolcall_end',
          contentIndex: 0,
          toolCall: { id: 'c1', name: 'bash', arguments: { command: piece } },
        }),
      ]) {
        const value = parsePiLine(text);
        expect(value).toEqual(JSON.parse(text));
        expect(sharedSnapshot(value)).toBe(true);
      }
    }
  });

  it('parses both snapshots when they differ (the snapshot may run ahead; nothing is assumed)', () => {
    const head = '{"type":"message_update","assistantMessageEvent":{"type":"text_delta","contentIndex":0,"delta":"He"';
    const text = `${head},"partial":${JSON.stringify(assistant('Hello'))}},"message":${JSON.stringify(assistant('Hellp'))}}`;
    const value = parsePiLine(text);
    expect(value).toEqual(JSON.parse(text));
    expect(sharedSnapshot(value)).toBe(false);
  });

  it('falls back to JSON.parse for other shapes: whitespace, other key orders, extra members, other events', () => {
    const snapshot = JSON.stringify(assistant('a'));
    const texts = [
      `{"type":"message_update","assistantMessageEvent":{"type":"text_delta","partial": ${snapshot}},"message": ${snapshot}}`,
      `{"type":"message_update","assistantMessageEvent":{"partial":${snapshot},"type":"text_delta"},"message":${snapshot}}`,
      `{"type":"message_update","assistantMessageEvent":{"type":"text_delta","partial":${snapshot}},"message":${snapshot},"extra":1}`,
      `{"type":"message_update","assistantMessageEvent":{"type":"text_delta","partial":${snapshot}},"message":${snapshot}} `,
      `{"type":"message_update","message":${snapshot},"assistantMessageEvent":{"type":"text_delta","partial":${snapshot}}}`,
      `{"type":"message_update","assistantMessageEvent":{"type":"text_delta"},"other":{"partial":${snapshot}},"message":${snapshot}}`,
      `{"type":"message_update","assistantMessageEvent":{"type":"text_delta","partial":1},"message":1}`,
      // Same lengths as the real shape, different member names.
      update(assistant('a')).replace('},"message":', '},"massage":'),
      update(assistant('a')).replace('"partial":', '"partizl":'),
      `{"type":"message_end","message":${snapshot}}`,
      '{"type":"session","id":"s"}',
    ];
    for (const text of texts) expect(actual(text)).toEqual(reference(text));
  });

  it('follows JSON.parse for duplicate keys (the last one wins)', () => {
    const first = JSON.stringify(assistant('first'));
    const last = JSON.stringify(assistant('last'));
    const texts = [
      `{"type":"message_update","assistantMessageEvent":{"type":"text_delta","partial":${first},"partial":${last}},"message":${last}}`,
      `{"type":"message_update","message":${first},"assistantMessageEvent":{"type":"text_delta","partial":${last}},"message":${last}}`,
      `{"type":"message_update","assistantMessageEvent":{"type":"a"},"assistantMessageEvent":{"type":"b","partial":${last}},"message":${last}}`,
    ];
    for (const text of texts) {
      expect(actual(text)).toEqual(reference(text));
      expect(Object.keys((actual(text) as { value: object }).value)).toEqual(Object.keys(JSON.parse(text) as object));
    }
  });

  it('throws what JSON.parse throws for broken lines', () => {
    const good = update(assistant('Hello "x" {y}'));
    const broken = [
      good.slice(0, -1),
      `${good.slice(0, -1)}]`,
      `${good.slice(0, -1)} `,
      `${good}}`,
      `${good}x`,
      good.replace('"partial":', '"partial":{'),
      good.replace('"delta":"x"', '"delta":"x'),
      good.replace('"type":"text_delta"', '"type":text_delta'),
      '{"type":"message_update","assistantMessageEvent":{"type":"t","partial":{"a":1}},"message":{"a":1}',
      '{"type":"message_update","assistantMessageEvent":{"type":"t","partial":{"a":1},"message":{"a":1}}',
      '{"type":"message_update","assistantMessageEvent":{"type":"t","partial":{"a":1}}},"message":{"a":1}}}',
      '{"type":"message_update","assistantMessageEvent":{',
      '',
    ];
    for (const text of broken) {
      const expected = reference(text);
      expect('error' in expected).toBe(true);
      expect(actual(text)).toEqual(expected);
    }
  });

  it('equals JSON.parse for generated pi lines and for every cut or corruption of them', () => {
    const piece = fc.oneof(fc.string(), fc.constantFrom('"', '\\', '\\"', '{', '}', '[', ']', '},"message":', '"partial":', 'é', '🚀', '\n'));
    fc.assert(
      fc.property(
        fc.array(piece, { maxLength: 6 }).map((parts) => parts.join('')),
        fc.string(),
        fc.jsonValue({ maxDepth: 2 }),
        fc.nat(),
        fc.string({ maxLength: 3 }),
        (text, delta, extra, at, insert) => {
          const line = update({ ...assistant(text), extra }, { type: 'text_delta', contentIndex: 0, delta });
          expect(actual(line)).toEqual(reference(line));
          const cut = line.slice(0, at % (line.length + 1));
          expect(actual(cut)).toEqual(reference(cut));
          const position = at % (line.length + 1);
          const corrupted = line.slice(0, position) + insert + line.slice(position);
          expect(actual(corrupted)).toEqual(reference(corrupted));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('is what piOutputToMessages uses: a long answer comes out whole, also when a snapshot runs ahead', async () => {
    const deltas = ['He', 'llo ', '"wo', 'rld" ', '{ok}', ' \\o/'];
    const lines: ProcessItem[] = [line('{"type":"agent_start"}')];
    lines.push(line('{"type":"message_start","message":{"role":"assistant","content":[],"stopReason":"stop","timestamp":7}}'));
    let sofar = '';
    deltas.forEach((delta, i) => {
      sofar += delta;
      // The snapshot of the second update already holds the third delta.
      const snapshot = i === 1 ? sofar + (deltas[2] ?? '') : sofar;
      lines.push(line(update({ ...assistant(snapshot), timestamp: 7 }, { type: 'text_delta', contentIndex: 0, delta })));
    });
    lines.push(line(`{"type":"message_end","message":${JSON.stringify({ ...assistant(sofar), timestamp: 7 })}}`));
    lines.push(line('{"type":"agent_end"}'), exit());
    const messages = await lastValueFrom(from(lines).pipe(piOutputToMessages(), toArray()));
    const answer = messages.map((message) => (message.type === 'assistant' ? message.text : '')).join('');
    expect(answer).toBe(deltas.join(''));
    expect(messages.at(-1)).toEqual(expect.objectContaining({ type: 'terminal.completed' }));
  });
});
