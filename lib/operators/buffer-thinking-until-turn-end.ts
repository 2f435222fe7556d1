import { Observable, type MonoTypeOperatorFunction } from 'rxjs';
import type { AgentEvent, PipelineItem, TextItem } from './items.js';
import { checkFunction, isObject, shown } from './validate.js';

/**
 * How an event ends a message or turn: `'final'` when the turn really ends, `'tool-use'` when it
 * ends only to run tools and the agent goes on, `null` when it ends nothing.
 */
export type TurnEnd = 'final' | 'tool-use' | null;

/** Options of {@link bufferThinkingUntilTurnEnd}. */
export interface BufferThinkingOptions<E extends AgentEvent = AgentEvent> {
  /**
   * Whether an event ends a turn, and how: `final` (the answer is complete), `tool-use` (the model
   * stopped to use tools; the run goes on), or `null` (not a turn end).
   */
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
      const held = new HeldThinking();
      const release = (): void => {
        const text = held.take(separator);
        if (text !== '') subscriber.next({ kind: 'text', channel: 'thought', text } satisfies TextItem);
      };
      return source.subscribe({
        next: (item) => {
          // After turnEnd threw, the stream has errored: ask nothing more.
          if (subscriber.closed) return;
          if (item.kind === 'text' && item.channel === 'thought') {
            held.add(item.text);
            return;
          }
          if (item.kind === 'withdraw' && item.channel === 'thought') {
            held.withdraw(item.text.length);
            return;
          }
          held.settle();
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
            else if (end === 'tool-use') held.closeMessage(!dropToolUseThinking);
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

/**
 * Thinking held until the turn ends, message by message (the last part is the message being
 * written). A withdrawal takes text back from the end. When it reaches past the message being
 * written into an earlier one (snapshotToDelta revising an earlier message's thinking), the text
 * that follows is that message's new text and then, again, the later messages' text: it is put
 * back in place once it has all come (at the next item that is not thinking).
 */
class HeldThinking {
  #parts: string[] = [''];
  #refill: { at: number; later: string[]; text: string } | null = null;

  add(text: string): void {
    if (this.#refill !== null) this.#refill.text += text;
    else this.#parts[this.#parts.length - 1] = (this.#parts.at(-1) ?? '') + text;
  }

  withdraw(length: number): void {
    this.settle();
    const parts = this.#parts;
    const later: string[] = [];
    let left = length;
    // Whole later messages first, while the withdrawal reaches past them; thinking already released is not revised.
    while (parts.length > 1 && left > (parts.at(-1) as string).length) {
      const part = parts.pop() as string;
      later.unshift(part);
      left -= part.length;
    }
    const at = parts.length - 1;
    const part = parts[at] as string;
    parts[at] = part.slice(0, Math.max(0, part.length - left));
    if (later.length > 0) this.#refill = { at, later, text: '' };
  }

  /** Puts text that came after a withdrawal in its place. */
  settle(): void {
    const refill = this.#refill;
    if (refill === null) return;
    this.#refill = null;
    const tail = refill.later.join('');
    const part = this.#parts[refill.at] ?? '';
    if (refill.text.endsWith(tail)) {
      this.#parts[refill.at] = part + refill.text.slice(0, refill.text.length - tail.length);
      this.#parts.push(...refill.later);
    } else {
      // Not the shape snapshotToDelta gives: keep the text, at the end.
      this.#parts[refill.at] = part + refill.text;
    }
  }

  /** A message ended in tool use: its thinking is kept (or dropped) and a new message begins. */
  closeMessage(keep: boolean): void {
    this.settle();
    if (!keep) this.#parts[this.#parts.length - 1] = '';
    else if (this.#parts.at(-1) !== '') this.#parts.push('');
  }

  /** All held thinking, the messages joined by `separator`; nothing is held after. */
  take(separator: string): string {
    this.settle();
    const text = this.#parts.filter((part) => part !== '').join(separator);
    this.#parts = [''];
    return text;
  }
}
