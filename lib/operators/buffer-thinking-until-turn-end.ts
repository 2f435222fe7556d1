import { Observable, type OperatorFunction } from 'rxjs';
import type { AgentEvent, PipelineItem, TextItem } from './items.js';

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
 * completion: it is never lost.
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
): OperatorFunction<PipelineItem<E>, PipelineItem<E>> {
  const separator = options.separator ?? '\n\n';
  return (source) =>
    new Observable<PipelineItem<E>>((subscriber) => {
      // State lives in the subscription: every subscriber gets its own.
          const segments: string[] = [];
          let current = '';
          const closeMessage = (keep: boolean): void => {
            if (keep && current !== '') segments.push(current);
            current = '';
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
              if (item.kind === 'text' && item.channel === 'thought') {
                current += item.text;
                return;
              }
              if (item.kind === 'exit') release();
              if (item.kind === 'event') {
                const end = options.turnEnd(item.event);
                if (end === 'final') release();
                else if (end === 'tool-use') closeMessage(options.dropToolUseThinking !== true);
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
