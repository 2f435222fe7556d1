import { describe, expect, it } from '@jest/globals';
import { from, Subject } from 'rxjs';
import { bufferThinkingUntilTurnEnd, type AgentEvent, type BufferThinkingOptions, type PipelineItem, type TurnEnd } from '../../lib/index.js';
import { ev, exit, scheduler, text } from '../helpers/items.js';

const turnEnd = (event: AgentEvent): TurnEnd => (event.type === 'end' ? 'final' : event.type === 'tool-end' ? 'tool-use' : null);
const thought = (value: string) => text(value, 'thought');
const E = ev('end');
const U = ev('tool-end');

describe('bufferThinkingUntilTurnEnd', () => {
  it('holds thinking and releases it whole just before the event that ends the turn', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold<PipelineItem>('-t-u-a-E----x|', { t: thought('Let me '), u: thought('think.'), a: text('Answer'), E, x: exit() });
      expectObservable(source.pipe(bufferThinkingUntilTurnEnd({ turnEnd }))).toBe('-----a-(TE)-x|', {
        a: text('Answer'),
        T: thought('Let me think.'),
        E,
        x: exit(),
      });
    });
  });

  it('carries thinking from a tool-use turn to the final turn end, by default', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const values = { t: thought('plan'), U, u: thought('conclude'), E };
      expectObservable(cold<PipelineItem>('-t-U-u-E---|', values).pipe(bufferThinkingUntilTurnEnd({ turnEnd }))).toBe('---U---(TE)|', {
        U,
        E,
        T: thought('plan\n\nconclude'),
      });
    });
  });

  it('drops tool-use thinking with dropToolUseThinking', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold<PipelineItem>('-t-U-u-E---|', { t: thought('plan'), U, u: thought('conclude'), E });
      expectObservable(source.pipe(bufferThinkingUntilTurnEnd({ turnEnd, dropToolUseThinking: true }))).toBe('---U---(TE)|', {
        U,
        E,
        T: thought('conclude'),
      });
    });
  });

  it('flushes held thinking before the exit item, and before completion', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<PipelineItem>('-t-x---|', { t: thought('unfinished'), x: exit() }).pipe(bufferThinkingUntilTurnEnd({ turnEnd }))).toBe(
        '---(Tx)|',
        { T: thought('unfinished'), x: exit() },
      );
      expectObservable(cold<PipelineItem>('-t-|', { t: thought('cut off') }).pipe(bufferThinkingUntilTurnEnd({ turnEnd }))).toBe('---(T|)', {
        T: thought('cut off'),
      });
    });
  });

  it('emits no empty thought when a turn ends without thinking', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<PipelineItem>('-E-x|', { E, x: exit() }).pipe(bufferThinkingUntilTurnEnd({ turnEnd }))).toBe('-E-x|', { E, x: exit() });
    });
  });

  it('completes empty, stays silent on never, forwards errors (dropping held thinking), and stops at an early unsubscribe', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      expectObservable(cold<PipelineItem>('|').pipe(bufferThinkingUntilTurnEnd({ turnEnd }))).toBe('|');
      expectObservable(cold<PipelineItem>('-').pipe(bufferThinkingUntilTurnEnd({ turnEnd }))).toBe('-');
      expectObservable(cold<PipelineItem>('-t-#', { t: thought('x') }).pipe(bufferThinkingUntilTurnEnd({ turnEnd }))).toBe('---#');
      const source = cold<PipelineItem>('-a-a-a|', { a: text('x') });
      expectObservable(source.pipe(bufferThinkingUntilTurnEnd({ turnEnd })), '^-!').toBe('-a-', { a: text('x') });
      expectSubscriptions(source.subscriptions).toBe('^-!');
    });
  });

  it('keeps held thinking per subscription', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const result = cold<PipelineItem>('-t-E---|', { t: thought('mine'), E }).pipe(bufferThinkingUntilTurnEnd({ turnEnd }));
      expectObservable(result).toBe('---(TE)|', { T: thought('mine'), E });
      expectObservable(result).toBe('---(TE)|', { T: thought('mine'), E });
    });
  });

  it('releases once when downstream re-enters with another turn end', () => {
    const seen: string[] = [];
    const subject = new Subject<PipelineItem>();
    subject.pipe(bufferThinkingUntilTurnEnd({ turnEnd })).subscribe((item) => {
      seen.push(item.kind === 'text' ? `${item.channel}:${item.text}` : `<${item.kind === 'event' ? item.event.type : item.kind}>`);
      if (item.kind === 'text') subject.next(E);
    });
    subject.next(thought('once'));
    subject.next(E);
    expect(seen).toEqual(['thought:once', '<end>', '<end>']);
  });

  it('errors the stream with what turnEnd throws, at that event, emits nothing after, and unsubscribes the source', () => {
    const boom = new Error('turnEnd bug');
    const throwing = (event: AgentEvent): TurnEnd => {
      if (event.type === 'boom') throw boom;
      return turnEnd(event);
    };
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold<PipelineItem>('-a-t-b-E-x|', { a: text('Answer'), t: thought('held'), b: ev('boom'), E, x: exit() });
      expectObservable(source.pipe(bufferThinkingUntilTurnEnd({ turnEnd: throwing }))).toBe('-a---#', { a: text('Answer') }, boom);
      expectSubscriptions(source.subscriptions).toBe('^----!');
    });
  });

  it('asks turnEnd nothing more after it threw, even when a synchronous source goes on', () => {
    const boom = new Error('turnEnd bug');
    const asked: string[] = [];
    const errors: unknown[] = [];
    from<PipelineItem[]>([ev('boom'), E, exit()])
      .pipe(
        bufferThinkingUntilTurnEnd({
          turnEnd: (event) => {
            asked.push(event.type);
            if (event.type === 'boom') throw boom;
            return turnEnd(event);
          },
        }),
      )
      .subscribe({ error: (error: unknown) => errors.push(error) });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBe(boom);
    expect(asked).toEqual(['boom']);
  });

  it.each<[string, unknown]>([
    ['no options', undefined],
    ['no turnEnd', {}],
    ['turnEnd a string', { turnEnd: 'final' }],
    ['dropToolUseThinking a string', { turnEnd, dropToolUseThinking: 'yes' }],
    ['dropToolUseThinking 1', { turnEnd, dropToolUseThinking: 1 }],
    ['separator a number', { turnEnd, separator: 2 }],
    ['separator null', { turnEnd, separator: null }],
  ])('throws a TypeError at call time for %s', (_name, options) => {
    expect(() => bufferThinkingUntilTurnEnd(options as BufferThinkingOptions)).toThrow(TypeError);
    expect(() => bufferThinkingUntilTurnEnd(options as BufferThinkingOptions)).toThrow(/^agent-rx: /);
  });
});
