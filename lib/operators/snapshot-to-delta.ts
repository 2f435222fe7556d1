import { Observable, type MonoTypeOperatorFunction } from 'rxjs';
import type { AgentEvent, PipelineItem, TextReader, TextReading } from './items.js';

export type { TextReader, TextReading };
import { TextLedger, type LedgerOutput } from './text-ledger.js';
import { checkFunction, checkInteger, isObject, property, shown } from './validate.js';


/** Options of {@link snapshotToDelta}: how to read text from events, and how much to remember. */
export interface SnapshotToDeltaOptions<E extends AgentEvent = AgentEvent> {
  /**
   * Makes the reader of one run: called once per subscription, so a reader may remember earlier
   * events (for example which block of a message a block-level line is, when the line does not
   * say). A stateless reader is `() => read`.
   */
  readonly createReader: () => TextReader<E>;
  /**
   * A new key whose first reading is a snapshot may begin by repeating the text already emitted on
   * its channel (some pi versions re-send the earlier messages' text at the start of the message
   * after a tool turn): that prefix is recognised and not emitted again. While such a snapshot is
   * still a proper prefix of the earlier text it is held back. Default false.
   */
  readonly replayedPrefix?: boolean;
  /** How many keys to remember per channel. Default 1024; the oldest is forgotten first. */
  readonly maxKeys?: number;
}

/**
 * Turns the text that events carry (deltas, cumulative snapshots, or both) into true deltas:
 * `text` items emitted just before the event they came from, so that concatenating them gives each
 * text exactly once. For a snapshot: the first is emitted whole; one that extends what was emitted
 * for its key emits the new suffix; a stale or shorter replay emits nothing. An explicit delta is
 * preferred and emitted as is (whitespace included). A snapshot that diverges from what was
 * emitted is never emitted whole on top of it: a `withdraw` item takes back the text after the
 * common prefix, then the new text follows. A reader that throws errors the stream, and is not
 * called again.
 *
 * The reader (made by `createReader()`, once per subscription) returns, for an event, a
 * {@link TextReading} `{ channel, key, delta?, snapshot?, final? }`, a list of them, or `null`.
 * Text is kept per `key` (a message's block, say): a delta is appended (preferred over a snapshot
 * in the same reading); new text for a key whose later keys already have text goes in its place
 * (the later text is withdrawn and emitted again after it). With `replayedPrefix`, a new key whose
 * first snapshot repeats the channel's earlier text emits only what follows it (one case cannot be
 * told apart: a message that really begins by repeating, word for word, all the text before it).
 *
 * For pi, the reader reads `text_delta`/`thinking_delta` deltas (the snapshot in the same line can
 * run ahead of them), or their snapshots in pi versions that send no delta, and the final assistant
 * `message_end`, which is authoritative. For Claude Code it keys deltas by message and block, and
 * keys the non-streaming fallback that follows an abandoned stream as the abandoned message, so
 * the fallback only adds what was not streamed.
 *
 * ```
 * source:  -s1---s2-----s3---s2-|     snapshots "He", "Hello", "Hello!", then "Hello" replayed
 * result:  -(de)-(de)---(de)-e--|     d = text "He", "llo", "!", then nothing; e = the event
 *
 * source:  -s1----s2---------|        snapshots "Hello", then "Help!"
 * result:  -(de)--(wde)------|        d = "Hello", then w = withdraw "lo", d = "p!"
 * ```
 *
 * @example
 * lines.pipe(parseJsonLine(), snapshotToDelta({
 *   createReader: () => (event) => event.type === 'chunk' ? { channel: 'assistant', key: 'm1', snapshot: String(event.text) } : null,
 * }));
 */
export function snapshotToDelta<E extends AgentEvent>(options: SnapshotToDeltaOptions<E>): MonoTypeOperatorFunction<PipelineItem<E>> {
  if (!isObject(options)) throw new TypeError('agent-rx: snapshotToDelta takes an options object ({ createReader })');
  const { createReader, replayedPrefix = false, maxKeys = 1024 } = options;
  checkFunction(createReader, 'createReader');
  if (typeof replayedPrefix !== 'boolean') throw new TypeError(`agent-rx: replayedPrefix must be a boolean; got ${shown(replayedPrefix)}`);
  checkInteger(maxKeys, 'maxKeys', 1);
  return (source) =>
    new Observable<PipelineItem<E>>((subscriber) => {
      // State lives in the subscription: every subscriber (and every retry) starts fresh.
      const ledger = new TextLedger({ maxKeys, replayedPrefix });
      // A factory that throws errors the stream on subscribe (rxjs sends it to subscriber.error).
      const read = createReader();
      checkFunction(read, 'what createReader() returns');
      const out = (item: LedgerOutput): void => {
        subscriber.next(item);
      };
      return source.subscribe({
        next: (item) => {
          // After a reader threw, the stream has errored: read nothing more.
          if (subscriber.closed) return;
          if (item.kind === 'event') {
            // The reader is user code: what it throws (or a malformed reading) errors the stream,
            // as rxjs does for user code; a throw out of this observer would be lost.
            try {
              const readings = read(item.event);
              if (readings !== null) {
                if (isList(readings)) for (const reading of readings) ledger.read(checked(reading), out);
                else ledger.read(checked(readings), out);
              }
            } catch (error: unknown) {
              subscriber.error(error);
              return;
            }
          } else if (item.kind === 'exit') {
            ledger.flush(out);
          }
          subscriber.next(item);
        },
        error: (error: unknown) => {
          subscriber.error(error);
        },
        complete: () => {
          ledger.flush(out);
          subscriber.complete();
        },
      });
    });
}

function isList(value: TextReading | readonly TextReading[]): value is readonly TextReading[] {
  return Array.isArray(value);
}

// A reading of the wrong shape is the reader's bug: it errors the stream with a TypeError.
function checked(reading: TextReading): TextReading {
  const value: unknown = reading;
  const channel = isObject(value) ? property(value, 'channel') : undefined;
  if (!isObject(value) || (channel !== 'assistant' && channel !== 'thought') || typeof property(value, 'key') !== 'string') {
    throw new TypeError(`agent-rx: a reader returned ${shown(value)}, not a TextReading ({ channel, key, delta?, snapshot? })`);
  }
  return reading;
}
