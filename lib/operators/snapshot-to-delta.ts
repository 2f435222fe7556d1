import { Observable, type OperatorFunction } from 'rxjs';
import type { AgentEvent, PipelineItem, TextChannel, TextItem } from './items.js';
import { checkFunction, checkInteger, isObject, property, shown } from './validate.js';

/** What one event says about a text: a delta, a cumulative snapshot, or both. */
export interface TextReading {
  readonly channel: TextChannel;
  /**
   * Which text this is (e.g. a message id). Snapshots are compared with what was emitted for the
   * same key; state is kept across turns, so a replayed message is never emitted twice.
   */
  readonly key: string;
  /** The new piece, when the event carries one. Preferred over the snapshot. */
  readonly delta?: string;
  /** The whole text so far. */
  readonly snapshot?: string;
}

export type TextReader<E extends AgentEvent = AgentEvent> = (event: E) => TextReading | readonly TextReading[] | null;

export interface SnapshotToDeltaOptions<E extends AgentEvent = AgentEvent> {
  /**
   * Says what text an event carries, if any. A function, or a factory called once per
   * subscription for a reader that needs memory of earlier events (for example to tell which
   * block of a message a block-level line is, when the line does not say).
   */
  readonly read: TextReader<E> | { readonly create: () => TextReader<E> };
  /** How many keys to remember. Default 1024; the oldest is forgotten first. */
  readonly maxKeys?: number;
}

/**
 * Turns the text that events carry (deltas, cumulative snapshots, or both) into true deltas:
 * `text` items emitted just before the event they came from. For a snapshot: the first is
 * emitted whole; one that extends what was emitted for its key emits the new suffix; a stale or
 * shorter replay emits nothing; one that diverged resets the key and is emitted whole. An explicit
 * delta is preferred and emitted as is (whitespace included). What `read` (or `read.create`)
 * throws errors the stream, and `read` is not called again.
 *
 * ```
 * source:  -s1---s2-----s3---s2-|     snapshots "He", "Hello", "Hello!", then "Hello" replayed
 * result:  -(de)-(de)---(de)-e--|     d = text "He", "llo", "!", then nothing; e = the event
 * ```
 *
 * @example
 * lines.pipe(parseJsonLine(), snapshotToDelta({
 *   read: (event) => event.type === 'chunk' ? { channel: 'assistant', key: 'm1', snapshot: String(event.text) } : null,
 * }));
 */
export function snapshotToDelta<E extends AgentEvent>(
  options: SnapshotToDeltaOptions<E>,
): OperatorFunction<PipelineItem<E>, PipelineItem<E>> {
  if (!isObject(options)) throw new TypeError('agent-rx: snapshotToDelta takes an options object ({ read })');
  const reader = options.read;
  const maxKeys = options.maxKeys ?? 1024;
  if (typeof reader !== 'function' && !(isObject(reader) && typeof property(reader, 'create') === 'function')) {
    throw new TypeError(`agent-rx: read must be a function or an object with a create function; got ${shown(reader)}`);
  }
  checkInteger(maxKeys, 'maxKeys', 1);
  return (source) =>
    new Observable<PipelineItem<E>>((subscriber) => {
      // State lives in the subscription: every subscriber (and every retry) starts fresh.
      const emitted = new Map<string, string>();
      // A factory that throws errors the stream on subscribe (rxjs sends it to subscriber.error).
      const read = typeof reader === 'function' ? reader : reader.create();
      checkFunction(read, 'what read.create() returns');
      const advance = (reading: TextReading): string => {
        const id = `${reading.channel}\u0000${reading.key}`;
        const previous = emitted.get(id) ?? '';
        let next: string;
        if (reading.delta !== undefined) {
          next = previous + reading.delta;
        } else if (reading.snapshot === undefined || previous.startsWith(reading.snapshot)) {
          // No text, or a stale or shorter replay of what was already emitted.
          return '';
        } else {
          // Extends what was emitted (emit the suffix), or diverged (reset, emit it whole).
          next = reading.snapshot;
        }
        const delta = reading.delta ?? (next.startsWith(previous) ? next.slice(previous.length) : next);
        emitted.delete(id);
        emitted.set(id, next);
        if (emitted.size > maxKeys) {
          const oldest = emitted.keys().next();
          if (oldest.done !== true) emitted.delete(oldest.value);
        }
        return delta;
      };
      const emitText = (reading: TextReading): void => {
        // State is updated inside advance() before anything is emitted: downstream may re-enter.
        const text = advance(reading);
        if (text !== '') subscriber.next({ kind: 'text', channel: reading.channel, text } satisfies TextItem);
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
                if (isList(readings)) for (const reading of readings) emitText(reading);
                else emitText(readings);
              }
            } catch (error: unknown) {
              subscriber.error(error);
              return;
            }
          }
          subscriber.next(item);
        },
        error: (error: unknown) => {
          subscriber.error(error);
        },
        complete: () => {
          subscriber.complete();
        },
      });
    });
}

function isList(value: TextReading | readonly TextReading[]): value is readonly TextReading[] {
  return Array.isArray(value);
}
