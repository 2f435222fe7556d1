import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { from, pipe, Subject, type OperatorFunction } from 'rxjs';
import { bufferThinkingUntilTurnEnd, collectInvalidLines, mapToCliMessage, parseJsonLine, snapshotToDelta, type CliMessage, type EventValidator, type ProcessExit, type ProcessItem } from '../../lib/index.js';
import { parsePiLine, piDialect, piEventSchemas, piOutputToMessages, piTurnEnd, readPiText } from '../../lib/dialects.js';
import { exit as exitItem } from '../helpers/items.js';

/**
 * ARCHITECTURE §3's invariants over random pi runs: random messages (text and thinking as random
 * deltas, tool calls, errors, retries), garbage lines mixed in anywhere, cut short anywhere, and
 * ended by a random exit.
 */

interface Model {
  readonly lines: string[];
  /** What the run's assistant messages said (closed messages) plus what an open one streamed. */
  answer: string;
  /** Thinking of each message, in order (non-empty only); a cut-off message's streamed part. */
  readonly thoughts: string[];
  garbage: number;
}

const piece = fc.string({ unit: fc.constantFrom('a', 'b', ' ', '\n', 'é', '🚀', '"', '\\', '\u2028'), maxLength: 6 });
const garbageLine = fc.oneof(
  fc.constant('Warning: stray output'),
  fc.constant('[1,2,3]'),
  fc.constant('{"no":"type"}'),
  fc.constant('{"type":"message_end","message":{"role":7}}'),
  fc.constant('{"type": "message_upd'),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }).filter((text) => text.trim() !== '' && !text.includes('\n')),
);

const assistantMessage = fc.record({
  text: fc.array(piece, { maxLength: 6 }),
  thinking: fc.array(piece, { maxLength: 4 }),
  stopReason: fc.constantFrom('stop', 'toolUse', 'error', 'length'),
  tool: fc.boolean(),
  retryAfter: fc.boolean(),
});

const runShape = fc.record({
  messages: fc.array(assistantMessage, { maxLength: 5 }),
  garbage: fc.array(fc.tuple(fc.nat(60), garbageLine), { maxLength: 8 }),
  cutAt: fc.option(fc.nat(80), { nil: undefined }),
  ending: fc.constantFrom<'ok' | 'code1' | 'sigkill' | 'spawn'>('ok', 'ok', 'ok', 'code1', 'sigkill', 'spawn'),
});

type RunShape = typeof runShape extends fc.Arbitrary<infer T> ? T : never;

function build(shape: RunShape): { items: ProcessItem[]; model: Model; exit: ProcessExit } {
  const model: Model = { lines: [], answer: '', thoughts: [], garbage: 0 };
  const events: object[] = [{ type: 'session', version: 3, id: 'S', timestamp: 't', cwd: '/w' }, { type: 'agent_start' }];
  const texts: { closedAfter: number; text: string; deltas: { at: number; text: string }[]; thinkingFrom: number }[] = [];
  shape.messages.forEach((message, index) => {
    const timestamp = 1000 + index;
    const content: object[] = [];
    events.push({ type: 'message_start', message: { role: 'assistant', content: [], stopReason: 'stop', timestamp } });
    const streamed: { at: number; text: string }[] = [];
    const thinkingFrom = events.length;
    for (const delta of message.thinking) {
      events.push({ type: 'message_update', assistantMessageEvent: { type: 'thinking_delta', contentIndex: 0, delta }, message: { timestamp } });
    }
    for (const delta of message.text) {
      streamed.push({ at: events.length, text: delta });
      events.push({ type: 'message_update', assistantMessageEvent: { type: 'text_delta', contentIndex: 1, delta }, message: { timestamp } });
    }
    if (message.thinking.length > 0) content.push({ type: 'thinking', thinking: message.thinking.join('') });
    content.push({ type: 'text', text: message.text.join('') });
    if (message.tool) content.push({ type: 'toolCall', id: `call_${index}`, name: 'bash', arguments: { command: 'true' } });
    events.push({
      type: 'message_end',
      message: { role: 'assistant', content, stopReason: message.stopReason, timestamp, usage: { input: 1, output: 1 }, ...(message.stopReason === 'error' ? { errorMessage: 'boom' } : {}) },
    });
    texts.push({ closedAfter: events.length - 1, text: message.text.join(''), deltas: streamed, thinkingFrom });
    if (message.tool) {
      events.push({ type: 'tool_execution_start', toolCallId: `call_${index}`, toolName: 'bash', args: { command: 'true' } });
      events.push({ type: 'tool_execution_end', toolCallId: `call_${index}`, toolName: 'bash', result: { content: [{ type: 'text', text: 'ok' }] }, isError: false });
    }
    if (message.stopReason === 'error' && message.retryAfter) {
      events.push({ type: 'agent_end', messages: [] });
      events.push({ type: 'auto_retry_start', attempt: 1, maxAttempts: 3, delayMs: 2000, errorMessage: 'boom' });
      events.push({ type: 'agent_start' });
    }
  });
  events.push({ type: 'agent_end', messages: [] });
  const cut = shape.cutAt === undefined ? events.length : Math.min(events.length, shape.cutAt);
  const kept = events.slice(0, cut);
  // What the run said: closed messages' final text; for a message cut before its end, its deltas.
  for (const message of texts) {
    if (message.closedAfter < cut) model.answer += message.text;
    else model.answer += message.deltas.filter((delta) => delta.at < cut).map((delta) => delta.text).join('');
  }
  shape.messages.forEach((message, index) => {
    const from = texts[index]?.thinkingFrom ?? Infinity;
    const thinking = message.thinking.slice(0, Math.max(0, cut - from)).join('');
    if (thinking !== '') model.thoughts.push(thinking);
  });
  const lines = kept.map((event) => JSON.stringify(event));
  for (const [at, garbage] of shape.garbage) {
    lines.splice(Math.min(at, lines.length), 0, garbage);
    model.garbage += 1;
  }
  const exit =
    shape.ending === 'spawn'
      ? exitItem({ exitCode: null, pid: null, startError: { stage: 'spawn', code: 'ENOENT', message: 'spawn pi ENOENT' } })
      : shape.ending === 'code1'
        ? exitItem({ exitCode: 1, stderr: 'x'.repeat(10) })
        : shape.ending === 'sigkill'
          ? exitItem({ exitCode: null, signal: 'SIGKILL' })
          : exitItem();
  const items: ProcessItem[] = shape.ending === 'spawn' ? [exit] : [...lines.map((text): ProcessItem => ({ kind: 'line', text })), exit];
  return { items, model: shape.ending === 'spawn' ? { ...model, answer: '', thoughts: [], garbage: 0 } : model, exit };
}

function run(items: readonly ProcessItem[]): { messages: CliMessage[]; completed: boolean; errored: unknown } {
  const messages: CliMessage[] = [];
  let completed = false;
  let errored: unknown = null;
  const source = new Subject<ProcessItem>();
  source.pipe(piOutputToMessages()).subscribe({
    next: (message) => messages.push(message),
    error: (error: unknown) => {
      errored = error;
    },
    complete: () => {
      completed = true;
    },
  });
  for (const item of items) source.next(item);
  source.complete();
  return { messages, completed, errored };
}

// The user callbacks the operators call, and a pi pipeline in which one of them throws at its nth call.
const CALLBACKS = ['validate', 'read', 'turnEnd', 'map', 'conclude', 'lastError', 'sessionId'] as const;
type Callback = (typeof CALLBACKS)[number];

function faultyPipeline(faulty: Callback, throwAt: number) {
  const boom = new Error(`${faulty} bug`);
  const calls = { count: 0, thrown: false, afterThrow: 0 };
  const guard =
    <A extends unknown[], R>(name: Callback, fn: (...args: A) => R) =>
    (...args: A): R => {
      if (name !== faulty) return fn(...args);
      if (calls.thrown) calls.afterThrow += 1;
      calls.count += 1;
      if (calls.count - 1 === throwAt) {
        calls.thrown = true;
        throw boom;
      }
      return fn(...args);
    };
  const dialect = piDialect();
  const schemas: Record<string, EventValidator> = Object.fromEntries(
    Object.entries(piEventSchemas).map(([type, schema]) => [type, { safeParse: guard('validate', (value: unknown) => schema.safeParse(value)) }]),
  );
  const operator: OperatorFunction<ProcessItem, CliMessage> = pipe(
    parseJsonLine({ schemas, parse: parsePiLine }),
    collectInvalidLines(),
    snapshotToDelta({ createReader: () => guard('read', readPiText), replayedPrefix: true }),
    bufferThinkingUntilTurnEnd({ turnEnd: guard('turnEnd', piTurnEnd) }),
    mapToCliMessage({
      ...dialect,
      map: guard('map', (state, event) => dialect.map(state, event)),
      conclude: guard('conclude', (state) => dialect.conclude(state)),
      lastError: guard('lastError', (state) => dialect.lastError(state)),
      sessionId: guard('sessionId', (state) => dialect.sessionId(state)),
    }),
  );
  return { boom, calls, operator };
}

describe('pipeline invariants (property-based)', () => {
  it('emits exactly one terminal, last, then completes, and never errors', () => {
    fc.assert(
      fc.property(runShape, (shape) => {
        const { messages, completed, errored } = run(build(shape).items);
        expect(errored).toBeNull();
        expect(completed).toBe(true);
        const terminals = messages.filter((message) => message.type.startsWith('terminal.'));
        expect(terminals).toHaveLength(1);
        expect(messages.at(-1)).toBe(terminals[0]);
      }),
      { numRuns: 300 },
    );
  });

  it('concatenated assistant texts equal what the assistant messages said; thinking appears exactly once', () => {
    fc.assert(
      fc.property(runShape, (shape) => {
        const { items, model } = build(shape);
        const { messages } = run(items);
        expect(messages.map((message) => (message.type === 'assistant' ? message.text : '')).join('')).toBe(model.answer);
        const thoughts = messages.filter((message) => message.type === 'assistant.thought').map((message) => message.text);
        expect(thoughts.join('\n\n')).toBe(model.thoughts.join('\n\n'));
      }),
      { numRuns: 300 },
    );
  });

  it('keeps diagnostics bounded and says what was cut', () => {
    fc.assert(
      fc.property(fc.array(garbageLine, { minLength: 0, maxLength: 120 }), fc.nat(3), (garbage, big) => {
        const huge = 'z'.repeat(10_000 * (big + 1));
        const lines = [...garbage, huge].map((text): ProcessItem => ({ kind: 'line', text }));
        const { messages } = run([...lines, exitItem()]);
        const terminal = messages.at(-1);
        expect(terminal?.type).toBe('terminal.failed');
        if (terminal?.type !== 'terminal.failed') return;
        expect(terminal.invalidOutputLines.length).toBeLessThanOrEqual(50);
        for (const line of terminal.invalidOutputLines) expect(Buffer.byteLength(line.text)).toBeLessThanOrEqual(2048);
        // Every line is invalid: kept plus omitted accounts for all of them.
        expect(terminal.invalidOutputLines.length + terminal.invalidOutputLinesOmitted).toBe(lines.length);
        expect(terminal.invalidOutputLines.some((line) => line.truncated) || lines.length > 50).toBe(true);
      }),
      { numRuns: 100 },
    );
  });

  it('emits nothing after an unsubscribe at any point', () => {
    fc.assert(
      fc.property(runShape, fc.nat(100), (shape, stopAt) => {
        const { items } = build(shape);
        const source = new Subject<ProcessItem>();
        const seen: CliMessage[] = [];
        let stopped = false;
        const subscription = source.pipe(piOutputToMessages()).subscribe((message) => {
          expect(stopped).toBe(false);
          seen.push(message);
        });
        items.forEach((item, index) => {
          if (index === stopAt) {
            subscription.unsubscribe();
            stopped = true;
          }
          source.next(item);
        });
        if (stopAt < items.length) expect(seen.some((message) => message.type.startsWith('terminal.'))).toBe(false);
      }),
      { numRuns: 200 },
    );
  });

  it('a callback that throws at any point errors the run with that error: nothing after it, no callback called again, the source left', () => {
    fc.assert(
      fc.property(runShape, fc.constantFrom(...CALLBACKS), fc.nat(), (shape, faulty, pick) => {
        const { items } = build(shape);
        // A first run counts the calls (-1: never throws), so that the throw lands on one of them.
        const counting = faultyPipeline(faulty, -1);
        from(items).pipe(counting.operator).subscribe();
        const { boom, calls, operator } = faultyPipeline(faulty, counting.calls.count === 0 ? -1 : pick % counting.calls.count);
        const source = new Subject<ProcessItem>();
        const messages: CliMessage[] = [];
        let errored: unknown = null;
        let completed = false;
        source.pipe(operator).subscribe({
          next: (message) => {
            expect(errored).toBeNull();
            messages.push(message);
          },
          error: (error: unknown) => {
            errored = error;
          },
          complete: () => {
            completed = true;
          },
        });
        for (const item of items) source.next(item);
        if (calls.thrown) {
          expect(errored).toBe(boom);
          expect(completed).toBe(false);
          expect(messages.some((message) => message.type.startsWith('terminal.'))).toBe(false);
          expect(calls.afterThrow).toBe(0);
          // Every operator unsubscribed from its source: nothing listens to the run any more.
          expect(source.observed).toBe(false);
        } else {
          expect(errored).toBeNull();
          expect(completed).toBe(true);
          expect(messages.filter((message) => message.type.startsWith('terminal.'))).toHaveLength(1);
        }
      }),
      { numRuns: 300 },
    );
  });
});
