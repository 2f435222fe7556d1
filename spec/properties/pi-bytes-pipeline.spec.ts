import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { from, type OperatorFunction } from 'rxjs';
import { agentOutputToMessages, type CliMessage, type ProcessItem } from '../../lib/index.js';
import { parsePiBytes, piDialect, piOutputToMessages } from '../../lib/dialects.js';
import { LineFramer, type Frame } from '../../lib/process/line-framer.js';
import { cutAt, cutPositions, piTranscriptNames, printedLines } from '../helpers/byte-chunks.js';
import { exit, line } from '../helpers/items.js';
import { fixture } from '../helpers/processes.js';

/**
 * The pi pipeline reads a recorded run the same whether its lines come as text or as bytes (what
 * runPi asks for): the byte parser's projection of a message_update line loses nothing the
 * messages are made of.
 */

const TRANSCRIPTS = [...piTranscriptNames(), 'pi/garbled.jsonl.txt'];

/** The messages of these items through the pipeline (synchronous: the items are all there). */
function messages(items: readonly ProcessItem[], pipeline: OperatorFunction<ProcessItem, CliMessage>): CliMessage[] {
  const out: CliMessage[] = [];
  let completed = false;
  from(items)
    .pipe(pipeline)
    .subscribe({ next: (message) => out.push(message), complete: () => (completed = true) });
  expect(completed).toBe(true);
  return out;
}

/** The whole stdout framed as processLines frames it, fed in chunks of these sizes. */
function framed(stdout: Buffer, sizes: readonly number[], bytes: boolean): ProcessItem[] {
  const framer = new LineFramer(32 * 1024 * 1024, bytes);
  const items: ProcessItem[] = [];
  const emit = (frame: Frame): void => {
    items.push(frame);
  };
  let at = 0;
  for (const size of sizes) {
    framer.push(stdout.subarray(at, Math.min(stdout.length, at + size)), emit);
    at = Math.min(stdout.length, at + size);
  }
  framer.push(stdout.subarray(at), emit);
  framer.end(emit);
  return [...items, exit()];
}

/** The pi dialect with its byte parser counted: how many lines it read itself. */
function countingDialect(): { pipeline: OperatorFunction<ProcessItem, CliMessage>; read: () => number } {
  let read = 0;
  const dialect = piDialect();
  const pipeline = agentOutputToMessages({
    ...dialect,
    parseBytes: (chunks: readonly Buffer[]) => {
      const event = parsePiBytes(chunks);
      if (event !== undefined) read += 1;
      return event;
    },
  });
  return { pipeline, read: () => read };
}

describe('pi pipeline over line-bytes items', () => {
  it('is the dialect runPi uses: piOutputToMessages and agentOutputToMessages(piDialect()) have the byte parser', () => {
    expect(piDialect().parseBytes).toBe(parsePiBytes);
  });

  it.each(TRANSCRIPTS)('%s: the same messages from its lines as text and as bytes in any pieces', (name) => {
    const lines = printedLines(name);
    const text = [...lines.map(line), exit()];
    const expected = messages(text, piOutputToMessages());
    expect(expected.at(-1)?.type).toMatch(/^terminal\./);
    expect(messages(text, agentOutputToMessages(piDialect()))).toEqual(expected);
    let read = 0;
    fc.assert(
      fc.property(fc.array(cutPositions, { minLength: lines.length, maxLength: lines.length }), (cuts) => {
        const bytes: ProcessItem[] = [...lines.map((text, i): ProcessItem => ({ kind: 'line-bytes', chunks: cutAt(Buffer.from(text), cuts[i] ?? []) })), exit()];
        expect(messages(bytes, piOutputToMessages())).toEqual(expected);
        const counting = countingDialect();
        expect(messages(bytes, counting.pipeline)).toEqual(expected);
        read += counting.read();
      }),
      { numRuns: 12 },
    );
    // Where the run streamed message_update lines in pi's shape, the byte parser read them.
    const updates = lines.filter((text) => text.startsWith('{"type":"message_update","assistantMessageEvent":{') && text.includes(',"partial":{'));
    expect(read > 0).toBe(updates.length > 0);
  });

  it.each(TRANSCRIPTS)('%s: the same messages from its stdout framed as text and as bytes, fed in any chunks', (name) => {
    const stdout = readFileSync(fixture(name));
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.nat(16), fc.nat(4096)), { maxLength: 60 }), (sizes) => {
        const expected = messages(framed(stdout, sizes, false), piOutputToMessages());
        const bytes = framed(stdout, sizes, true);
        expect(bytes.some((item) => item.kind === 'line')).toBe(false);
        expect(messages(bytes, piOutputToMessages())).toEqual(expected);
        expect(messages(bytes, agentOutputToMessages(piDialect()))).toEqual(expected);
      }),
      { numRuns: 8 },
    );
  });
});
