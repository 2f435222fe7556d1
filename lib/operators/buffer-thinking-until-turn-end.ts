import { Observable, type MonoTypeOperatorFunction } from 'rxjs';
import type { AgentEvent, PipelineItem, TextItem } from './items.js';
import { checkFunction, isObject, shown } from './validate.js';

/**
 * How an event ends a message or turn: `'final'` when the turn really ends, `'tool-use'` when it
 * ends only to run tools and the agent goes on, `null` when it ends nothing.
 */
export type TurnEnd = 'final' | 'tool-use' | null;

export interface BufferThinkingOptions<E extends AgentEvent = AgentEvent> {
  readonly turnEnd: (event: E) => TurnEnd;
  /** Drop thinking from turns that ended in tool use instead of carrying it on. Default false. */
  readonly dropToolUseThinking?: boolean;
  /** Joins the thinking of several messages released together. Default a blank line. */
  readonly separator?: string;
}

/**
 * Holds `thought` text and releases it as one `text` item when the turn really ends, just before
 * the event that ends it. Thinking from turns that ended in tool use is carried to that point (or
 * dropped with `dropToolUseThinking`). Held thinking is flushed before the exit item and before
 * completion: it is never lost. A `withdraw` item of the thought channel takes back held thinking
 * (thinking already released is not revised). What `turnEnd` throws errors the stream (held thinking is
 * dropped, as on any error), and `turnEnd` is not called again.
 *
 * ```
 * source:  -t1-t2-a-E---x|     t = thought text, a = assistant text, E = turn-ending event
 * result:  -------a-(TE)x|     T = one thought "t1t2"
 * ```
 *
 * @example
 * items.pipe(bufferThinkingUntilTurnEnd({
 *   turnEnd: (event) => (event.type === 'turn_done' ? 'final' : null),
 * }));
 */
export function bufferThinkingUntilTurnEnd<E extends AgentEvent>(
  options: BufferThinkingOptions<E>,
): MonoTypeOperatorFunction<PipelineItem<E>> {
  if (!isObject(options)) throw new TypeError('agent-rx: bufferThinkingUntilTurnEnd takes an options object ({ turnEnd })');
  const { turnEnd, dropToolUseThinking = false, separator = '\n\n' } = options;
  checkFunction(turnEnd, 'turnEnd');
  if (typeof dropToolUseThinking !== 'boolean') throw new TypeError(`agent-rx: dropToolUseThinking must be a boolean; got ${shown(dropToolUseThinking)}`);
  if (typeof separator !== 'string') throw new TypeError(`agent-rx: separator must be a string; got ${shown(separator)}`);
  return (source) =>
    new Observable<PipelineItem<E>>((subscriber) => {
      // State lives in the subscription: every subscriber gets its own.
      const segments: string[] = [];
      let current = '';
      const closeMessage = (keep: boolean): void => {
        if (keep && current !== '') segments.push(current);
        current = '';
      };
      // Takes back held thinking, newest first; thinking already released is not revised.
      const withdraw = (length: number): void => {
        let left = length;
        const fromCurrent = Math.min(left, current.length);
        current = current.slice(0, current.length - fromCurrent);
        left -= fromCurrent;
        while (left > 0 && segments.length > 0) {
          const last = segments.pop() as string;
          if (last.length > left) segments.push(last.slice(0, last.length - left));
          left -= Math.min(left, last.length);
        }
      };
      const release = (): void => {
        closeMessage(true);
        if (segments.length === 0) return;
        const text = segments.join(separator);
        segments.length = 0;
        subscriber.next({ kind: 'text', channel: 'thought', text } satisfies TextItem);
      };
      return source.subscribe({
        next: (item) => {
          // After turnEnd threw, the stream has errored: ask nothing more.
          if (subscriber.closed) return;
          if (item.kind === 'text' && item.channel === 'thought') {
            current += item.text;
            return;
          }
          if (item.kind === 'withdraw' && item.channel === 'thought') {
            withdraw(item.text.length);
            return;
          }
          if (item.kind === 'exit') release();
          if (item.kind === 'event') {
            let end: TurnEnd;
            try {
              end = turnEnd(item.event);
            } catch (error: unknown) {
              // User code: a throw errors the stream (a throw out of this observer would be lost).
              subscriber.error(error);
              return;
            }
            if (end === 'final') release();
            else if (end === 'tool-use') closeMessage(!dropToolUseThinking);
          }
          subscriber.next(item);
        },
        error: (error: unknown) => {
          subscriber.error(error);
        },
        complete: () => {
          release();
          subscriber.complete();
        },
      });
    });
}
