import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { parsePiBytes } from '../../../lib/dialects.js';
import { byteByByte, cutAt, cutPositions, piTranscriptNames, printedLines } from '../../helpers/byte-chunks.js';

type Json = Record<string, unknown>;

/**
 * What parsePiBytes must return for a line that JSON.parse reads as `value`, when it reads the line
 * itself: the event without `partial`, and the message reduced to its timestamp. Any other member
 * of the line would be in the projection, so a result without it does not match.
 */
function projection(value: unknown): unknown {
  const { assistantMessageEvent, message, ...rest } = value as Json;
  const { partial: _partial, ...event } = assistantMessageEvent as Json;
  return { ...rest, assistantMessageEvent: event, message: { timestamp: (message as Json | undefined)?.timestamp } };
}

/**
 * parsePiBytes on the line in these pieces: `undefined`, or exactly the projection of what
 * JSON.parse gives for the line (which must then parse). Says which.
 */
function check(text: string, chunks: readonly Buffer[]): 'read' | 'declined' {
  const result = parsePiBytes(chunks);
  if (result === undefined) return 'declined';
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error(`read a line that JSON.parse rejects: ${text}`);
  }
  expect(result).toStrictEqual(projection(value));
  return 'read';
}

/** `check` of the line whole, one byte per piece, and cut at these positions; the same answer for all. */
function checkPieces(text: string, cuts: readonly (readonly number[])[]): 'read' | 'declined' {
  const bytes = Buffer.from(text);
  const outcomes = [[bytes], byteByByte(bytes), ...cuts.map((positions) => cutAt(bytes, positions))].map((chunks) => check(text, chunks));
  const [first] = outcomes as ['read' | 'declined'];
  expect(outcomes).toEqual(outcomes.map(() => first));
  return first;
}

const DELTA_EVENTS = new Set(['text_delta', 'thinking_delta']);

/**
 * Whether a recorded line is one parsePiBytes must read: a message_update printed in pi's exact
 * shape (the partial last in the event, the same message twice), with a numeric timestamp, and a
 * string delta for the delta events.
 */
function mustRead(text: string): boolean {
  const value = JSON.parse(text) as Json;
  if (value['type'] !== 'message_update' || JSON.stringify(value) !== text) return false;
  const event = value['assistantMessageEvent'] as Json;
  if (Object.keys(value).join() !== 'type,assistantMessageEvent,message' || Object.keys(event).at(-1) !== 'partial') return false;
  if (JSON.stringify(event['partial']) !== JSON.stringify(value['message'])) return false;
  if (typeof (value['message'] as Json)['timestamp'] !== 'number') return false;
  return !(DELTA_EVENTS.has(event['type'] as string) && typeof event['delta'] !== 'string');
}

// ---------------------------------------------------------------------------------------------
// Generated message_update lines, in pi's shape and around it.

type Entry = readonly [key: string, value: unknown, spelling?: string];

/** An object serialized from its entries as they are: any order, duplicate keys, a key spelled with an escape. */
function serialize(entries: readonly Entry[]): string {
  return `{${entries.map(([key, value, spelling]) => `${spelling ?? JSON.stringify(key)}:${JSON.stringify(value)}`).join(',')}}`;
}

const isPlain = (value: unknown): boolean => value === null || ['string', 'number', 'boolean'].includes(typeof value);

const nasty = fc.constantFrom(
  '"',
  '\\',
  '\\"',
  '\\\\"',
  '{',
  '}',
  '[',
  ']',
  '},"message":',
  '"partial":',
  ',"timestamp":1}',
  '"timestamp":',
  'é',
  'ñ',
  '✓',
  '日本語',
  '🚀',
  '👩‍💻',
  '\u2028',
  '\u2029',
  '\n',
  '\r',
  '\t',
  '\u0000',
  '\ud83d',
);
const someText = fc.array(fc.oneof(nasty, fc.string({ maxLength: 6 }), fc.string({ unit: 'binary', maxLength: 4 })), { maxLength: 6 }).map((parts) => parts.join(''));

const plainValue = fc.oneof(someText, fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null));
const anyValue = fc.oneof({ weight: 3, arbitrary: plainValue }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) });
const timestampValue = fc.oneof(
  { weight: 4, arbitrary: fc.oneof(fc.nat(), fc.constant(1796015670966), fc.double({ noNaN: true, noDefaultInfinity: true })) },
  { weight: 1, arbitrary: fc.oneof(fc.string({ maxLength: 4 }), fc.constant('1796015670966'), fc.constant(null), fc.boolean(), fc.constant({}), fc.constant([1])) },
);
/** The key `timestamp`, spelled plainly or with an escape (JSON.parse reads both as `timestamp`). */
const timestampEntry = fc.tuple(timestampValue, fc.constantFrom(undefined, '"time\\u0073tamp"')).map(([value, spelling]): Entry => (spelling === undefined ? ['timestamp', value] : ['timestamp', value, spelling]));

const message = fc
  .record({
    text: someText,
    thinking: fc.option(someText, { nil: undefined }),
    toolCall: fc.option(fc.record({ command: someText }), { nil: undefined }),
    model: someText,
    usage: fc.record({ input: fc.nat(), output: fc.nat(), cacheRead: fc.nat(), cacheWrite: fc.nat(), totalTokens: fc.nat(), cost: fc.record({ total: fc.double({ noNaN: true, noDefaultInfinity: true }) }) }),
    stopReason: fc.constantFrom('stop', 'toolUse', 'error', 'length'),
    responseId: fc.option(someText, { nil: undefined }),
    timestamps: fc.oneof(
      { weight: 6, arbitrary: fc.array(timestampEntry, { minLength: 1, maxLength: 1 }) },
      { weight: 1, arbitrary: fc.constant([]) },
      { weight: 2, arbitrary: fc.array(timestampEntry, { minLength: 2, maxLength: 3 }) },
    ),
    after: fc.oneof(fc.constant([]), fc.array(fc.tuple(fc.oneof(someText, fc.constantFrom('responseId', 'errorMessage', 'timestamp_')), anyValue), { maxLength: 3 })),
    order: fc.oneof({ weight: 3, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.array(fc.nat(), { minLength: 12, maxLength: 12 }) }),
  })
  .map((m): Entry[] => {
    const content: unknown[] = [];
    if (m.thinking !== undefined) content.push({ type: 'thinking', thinking: m.thinking });
    content.push({ type: 'text', text: m.text });
    if (m.toolCall !== undefined) content.push({ type: 'toolCall', id: 'call_1', name: 'bash', arguments: m.toolCall });
    const [first, ...later] = m.timestamps;
    // pi's order: …, stopReason, timestamp, responseId; any other order when `order` is given.
    let entries: Entry[] = [
      ['role', 'assistant'],
      ['content', content],
      ['api', 'openai-completions'],
      ['provider', 'fake'],
      ['model', m.model],
      ['usage', m.usage],
      ['stopReason', m.stopReason],
      ...(first === undefined ? [] : [first]),
      ...(m.responseId === undefined ? [] : [['responseId', m.responseId] as const]),
    ];
    if (m.order !== null) {
      const order = m.order;
      entries = entries.map((entry, i) => [entry, order[i] ?? 0] as const).sort((a, b) => a[1] - b[1]).map(([entry]) => entry);
    }
    // Duplicate timestamps, then other members, after the rest.
    return [...entries, ...later, ...m.after];
  });

const eventType = fc.constantFrom('text_start', 'text_delta', 'text_end', 'thinking_start', 'thinking_delta', 'thinking_end', 'toolcall_start', 'toolcall_delta', 'toolcall_end', 'done', 'brand_new');
const deltaValue = fc.oneof({ weight: 6, arbitrary: someText }, { weight: 1, arbitrary: fc.oneof(fc.constant(undefined), fc.integer(), fc.constant(null), fc.constant({ text: 'x' })) });

const event = fc
  .record({
    type: eventType,
    contentIndex: fc.option(fc.nat(5), { nil: undefined }),
    delta: deltaValue,
    content: fc.option(someText, { nil: undefined }),
    toolCall: fc.option(fc.record({ type: fc.constant('toolCall'), id: someText, name: fc.constant('bash'), arguments: fc.record({ command: someText }) }), { nil: undefined }),
    reversed: fc.boolean(),
  })
  .map((e): Entry[] => {
    const entries: Entry[] = [['type', e.type]];
    if (e.contentIndex !== undefined) entries.push(['contentIndex', e.contentIndex]);
    if (e.delta !== undefined) entries.push(['delta', e.delta]);
    if (e.content !== undefined) entries.push(['content', e.content]);
    if (e.toolCall !== undefined) entries.push(['toolCall', e.toolCall]);
    return e.reversed ? entries.reverse() : entries;
  });

interface Generated {
  readonly text: string;
  /** Whether parsePiBytes must read it (not decline it), by the rules its documentation states. */
  readonly mustRead: boolean;
}

const generatedLine: fc.Arbitrary<Generated> = fc
  .record({ event, message, shape: fc.constantFrom('pi', 'pi', 'pi', 'pi', 'other message', 'member after partial') })
  .map(({ event: members, message: entries, shape }): Generated => {
    const snapshot = serialize(entries);
    const head = `{"type":"message_update","assistantMessageEvent":${serialize(members).slice(0, -1)}${members.length > 0 ? ',' : ''}`;
    if (shape === 'other message') {
      const other = serialize([...entries, ['extra', 1]]);
      return { text: `${head}"partial":${snapshot}},"message":${other}}`, mustRead: false };
    }
    if (shape === 'member after partial') {
      return { text: `${head}"partial":${snapshot},"after":1},"message":${snapshot}}`, mustRead: false };
    }
    // The last timestamp (JSON.parse keeps it) must be a number with only plain members after it.
    const last = entries.map(([key]) => key).lastIndexOf('timestamp');
    const timestampRead = last !== -1 && typeof entries[last]?.[1] === 'number' && entries.slice(last + 1).every(([, value]) => isPlain(value)) && entries.length - last <= 16;
    const type = members.find(([key]) => key === 'type')?.[1] as string;
    const delta = members.filter(([key]) => key === 'delta').at(-1)?.[1];
    const deltaRead = !DELTA_EVENTS.has(type) || typeof delta === 'string';
    return { text: `${head}"partial":${snapshot}},"message":${snapshot}}`, mustRead: timestampRead && deltaRead };
  });

describe('parsePiBytes', () => {
  it('reads the recorded message_update lines and declines the rest, in any pieces, as JSON.parse reads them', () => {
    const names = [...piTranscriptNames(), 'pi/garbled.jsonl.txt'];
    expect(names.length).toBeGreaterThan(15);
    const cuts = fc.sample(cutPositions, { numRuns: 3000, seed: 20261130 });
    let lines = 0;
    let read = 0;
    let expected = 0;
    for (const name of names) {
      for (const text of printedLines(name)) {
        const outcome = checkPieces(text, [cuts[lines % cuts.length] ?? [], cuts[(lines + 1) % cuts.length] ?? []]);
        lines += 1;
        if (outcome === 'read') read += 1;
        let must = false;
        try {
          must = mustRead(text);
        } catch {
          // not JSON (garbled output)
        }
        if (must) {
          expected += 1;
          if (outcome !== 'read') throw new Error(`declined a line of ${name} in pi's exact shape: ${text}`);
        }
      }
    }
    expect(lines).toBeGreaterThan(500);
    // The recorded runs hold 315 message_update lines, 45 of them text or thinking deltas without a delta.
    expect(read).toBe(expected);
    expect(read).toBeGreaterThanOrEqual(270);
  });

  it('gives the event as the pi dialect reads it: the delta exact, the message as its timestamp', () => {
    const [text] = printedLines('pi/tool_call_then_text.jsonl').filter((line) => line.includes('"delta":"me "'));
    expect(parsePiBytes(cutAt(Buffer.from(text ?? ''), [70, 300, 301, 900]))).toStrictEqual({
      type: 'message_update',
      assistantMessageEvent: { type: 'text_delta', contentIndex: 0, delta: 'me ' },
      message: { timestamp: 1796015670966 },
    });
    const [toolCall] = printedLines('pi/tool_call_then_text.jsonl').filter((line) => line.includes('"type":"toolcall_end"'));
    expect(parsePiBytes([Buffer.from(toolCall ?? '')])).toStrictEqual({
      type: 'message_update',
      assistantMessageEvent: { type: 'toolcall_end', contentIndex: 1, toolCall: { type: 'toolCall', id: 'call_tool_call_1', name: 'bash', arguments: { command: 'echo hello' } } },
      message: { timestamp: expect.any(Number) as unknown },
    });
  });

  it('reads generated pi lines exactly when its rules say, and then gives their projection, in any pieces', () => {
    let read = 0;
    fc.assert(
      fc.property(generatedLine, cutPositions, ({ text, mustRead: must }, positions) => {
        const bytes = Buffer.from(text);
        for (const chunks of [[bytes], cutAt(bytes, positions)]) {
          const outcome = check(text, chunks);
          if (outcome !== (must ? 'read' : 'declined')) throw new Error(`${outcome} (expected the other) on ${text}`);
          if (outcome === 'read') read += 1;
        }
      }),
      { numRuns: 1500 },
    );
    // Most generated lines are in pi's shape and read.
    expect(read).toBeGreaterThan(700);
  });

  it('declines a line that is cut short or has one byte changed, removed or added, wherever JSON.parse rejects it', () => {
    const recorded = piTranscriptNames().flatMap((name) => printedLines(name).filter((text) => text.startsWith('{"type":"message_update"')));
    const line = fc.oneof(
      generatedLine.map((generated) => generated.text),
      fc.constantFrom(...recorded),
    );
    const damage = fc.record({ how: fc.constantFrom('cut', 'change', 'remove', 'add'), at: fc.nat(), byte: fc.nat(255) });
    let rejected = 0;
    fc.assert(
      fc.property(line, damage, cutPositions, (text, { how, at, byte }, positions) => {
        const bytes = Buffer.from(text);
        const position = at % bytes.length;
        let damaged: Buffer;
        if (how === 'cut') damaged = bytes.subarray(0, position);
        else if (how === 'remove') damaged = Buffer.concat([bytes.subarray(0, position), bytes.subarray(position + 1)]);
        else if (how === 'add') damaged = Buffer.concat([bytes.subarray(0, position), Buffer.from([byte]), bytes.subarray(position)]);
        else {
          damaged = Buffer.from(bytes);
          // A different byte at that place.
          damaged[position] = byte === bytes[position] ? (byte + 1) % 256 : byte;
        }
        const decoded = damaged.toString('utf8');
        let parses = true;
        try {
          JSON.parse(decoded);
        } catch {
          parses = false;
        }
        for (const chunks of [[damaged], cutAt(damaged, positions)]) {
          if (parses) {
            check(decoded, chunks);
          } else {
            rejected += 1;
            const result = parsePiBytes(chunks);
            if (result !== undefined) throw new Error(`read a damaged line (${how} at ${position}) that JSON.parse rejects: ${decoded}`);
          }
        }
      }),
      { numRuns: 3000 },
    );
    expect(rejected).toBeGreaterThan(1000);
  });

  it('declines a text_delta or thinking_delta whose delta is missing or not a string (read from the message instead)', () => {
    const snapshot = '{"role":"assistant","content":[{"type":"text","text":"Hi"}],"stopReason":"stop","timestamp":7}';
    const line = (members: string): string => `{"type":"message_update","assistantMessageEvent":{${members}"partial":${snapshot}},"message":${snapshot}}`;
    for (const type of ['text_delta', 'thinking_delta']) {
      for (const delta of ['', '"delta":1,', '"delta":null,', '"delta":{"text":"Hi"},', '"delta":["Hi"],', '"delta":true,', '"delta":"Hi","delta":2,']) {
        expect(parsePiBytes([Buffer.from(line(`"type":"${type}","contentIndex":0,${delta}`))])).toBeUndefined();
      }
      expect(parsePiBytes([Buffer.from(line(`"type":"${type}","contentIndex":0,"delta":"",`))])).toStrictEqual({
        type: 'message_update',
        assistantMessageEvent: { type, contentIndex: 0, delta: '' },
        message: { timestamp: 7 },
      });
    }
    // Other events carry no delta to read: they are read without one.
    for (const type of ['text_start', 'toolcall_delta', 'thinking_end']) {
      expect(parsePiBytes([Buffer.from(line(`"type":"${type}","contentIndex":0,`))])).toStrictEqual({
        type: 'message_update',
        assistantMessageEvent: { type, contentIndex: 0 },
        message: { timestamp: 7 },
      });
    }
  });

  it('declines other shapes: white space, other key orders, other members, other events, no line at all', () => {
    const snapshot = '{"role":"assistant","content":[],"timestamp":1}';
    const event = '"type":"text_delta","delta":"a"';
    const texts = [
      `{"type":"message_update","assistantMessageEvent":{${event},"partial": ${snapshot}},"message": ${snapshot}}`,
      `{"type":"message_update","assistantMessageEvent":{${event},"partial":${snapshot}},"message":${snapshot}} `,
      `{"type":"message_update", "assistantMessageEvent":{${event},"partial":${snapshot}},"message":${snapshot}}`,
      `{"type":"message_update","assistantMessageEvent":{"partial":${snapshot},${event}},"message":${snapshot}}`,
      `{"type":"message_update","assistantMessageEvent":{${event},"partial":${snapshot}},"message":${snapshot},"extra":1}`,
      `{"type":"message_update","message":${snapshot},"assistantMessageEvent":{${event},"partial":${snapshot}}}`,
      `{"type":"message_update","assistantMessageEvent":{${event},"partial":1},"message":1}`,
      `{"type":"message_update","assistantMessageEvent":{${event},"partial":[1]},"message":[1]}`,
      `{"type":"message_update","assistantMessageEvent":{${event},"partial":{}},"message":{}}`,
      `{"type":"message_update","assistantMessageEvent":{${event},"partial":${snapshot}},"massage":${snapshot}}`,
      `{"type":"message_update","assistantMessageEvent":{${event},"partizl":${snapshot}},"message":${snapshot}}`,
      `{"type":"message_update","assistantMessageEvent":{${event},"p\\u0061rtial":${snapshot}},"message":${snapshot}}`,
      `{"type":"message_update","assistantMessageEvent":{${event},"contentIndex": 0,"partial":${snapshot}},"message":${snapshot}}`,
      `{"type":"message_end","message":${snapshot}}`,
      // Members after "partial": the part between the two snapshots' copies is no longer one object.
      '{"type":"message_update","assistantMessageEvent":{"type":"toolcall_end","contentIndex":0,"partial":{"timestamp":1},"toolCall":{"id":"c","name":"bash","arguments":{},"timestamp":5}},"message":{"timestamp":1},"toolCall":{"id":"c","name":"bash","arguments":{},"timestamp":5}}',
      '{"type":"session","id":"s"}',
      'Warning: not JSON',
    ];
    for (const text of texts) expect(parsePiBytes([Buffer.from(text)])).toBeUndefined();
    expect(parsePiBytes([])).toBeUndefined();
    expect(parsePiBytes([Buffer.alloc(0), Buffer.alloc(0)])).toBeUndefined();
  });

  it('reads the timestamp JSON.parse keeps: the last one, spelled any way, only when it is a number among plain last members', () => {
    const line = (message: string): string => `{"type":"message_update","assistantMessageEvent":{"type":"text_delta","delta":"a","partial":${message}},"message":${message}}`;
    const read = (message: string): unknown => (parsePiBytes([Buffer.from(line(message))]) as { message?: unknown } | undefined)?.message;
    expect(read('{"role":"assistant","timestamp":1,"timestamp":2}')).toEqual({ timestamp: 2 });
    expect(read('{"timestamp":1,"role":"assistant","timestamp":-2.5e3,"id":"x\\"y","n":null,"ok":true}')).toEqual({ timestamp: -2500 });
    expect(read('{"role":"assistant","time\\u0073tamp":3}')).toEqual({ timestamp: 3 });
    expect(read('{"timestamp":4}')).toEqual({ timestamp: 4 });
    expect(read('{"role":"a\\",\\"timestamp\\":5","timestamp":6}')).toEqual({ timestamp: 6 });
    // It looks at the last 16 members: a timestamp with 15 members after it is read.
    expect(read('{"timestamp":7,"a":1,"b":1,"c":1,"d":1,"e":1,"f":1,"g":1,"h":1,"i":1,"j":1,"k":1,"l":1,"m":1,"n":1,"o":1}')).toEqual({ timestamp: 7 });
    // The last one is not a number, or comes before a nested value, or there is none: declined.
    for (const message of [
      '{"timestamp":1,"timestamp":"2"}',
      '{"timestamp":1,"timestamp":null}',
      '{"timestamp":"1"}',
      '{"timestamp":{"ms":1}}',
      '{"timestamp":1,"usage":{"input":1}}',
      '{"timestamp":1,"content":[]}',
      '{"role":"assistant"}',
      '{"role":"a\\",\\"timestamp\\":5"}',
      '{"timestamp":1,"a":1,"b":1,"c":1,"d":1,"e":1,"f":1,"g":1,"h":1,"i":1,"j":1,"k":1,"l":1,"m":1,"n":1,"o":1,"p":1}',
    ]) {
      expect(parsePiBytes([Buffer.from(line(message))])).toBeUndefined();
    }
  });
});
