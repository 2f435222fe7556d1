import { describe, expect, it } from '@jest/globals';
import { firstValueFrom, of, Subject, type Observable } from 'rxjs';
import * as z from 'zod';
import { checkRunOutput, collectRun, collectRunResult, isRetryableFailure, type CliMessage, type TerminalFailed } from '../../lib/index.js';
import { checkOutput, jsonAnswer, outputContract, outputInstruction } from '../../lib/operators/output-schema.js';
import { scheduler } from '../helpers/items.js';

const Answer = z.object({ answer: z.string(), n: z.number() });
const done = { type: 'terminal.completed', stopReason: 'end_turn', sessionId: 's1' } as const satisfies CliMessage;
const m = {
  a: { type: 'assistant', text: '{"answer":"forty-two",' },
  b: { type: 'assistant', text: '"n":42}' },
  p: { type: 'assistant', text: 'The answer is forty-two.' },
  q: { type: 'assistant', text: '{"answer":42}' },
  c: { type: 'tool.call', toolCallId: 't1', name: 'bash', input: { command: 'ls' } },
  r: { type: 'tool.completed', toolCallId: 't1', name: 'bash', output: '{"answer":"from a tool","n":1}' },
  t: done,
} satisfies Record<string, CliMessage>;
const failed = (issues: { path: string; message: string }[], answer: string): TerminalFailed => ({
  type: 'terminal.failed',
  reason: 'output-schema',
  message: expect.stringContaining('the answer does not satisfy outputSchema') as unknown as string,
  exitCode: 0,
  signal: null,
  stderr: '',
  stderrTruncatedBytes: 0,
  invalidOutputLines: [],
  invalidOutputLinesOmitted: 0,
  outputIssues: issues,
  answer,
  sessionId: 's1',
});

describe('checkRunOutput', () => {
  it('gives a valid answer as the terminal\'s output, parsed through the schema', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<CliMessage>('-a-b-(t|)', m).pipe(checkRunOutput(Answer))).toBe('-a-b-(T|)', { ...m, T: { ...done, output: { answer: 'forty-two', n: 42 } } });
    });
  });

  it('makes prose a terminal.failed of its own (output-schema), with the answer; nothing before it is lost', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<CliMessage>('-p-(t|)', m).pipe(checkRunOutput(Answer))).toBe('-p-(F|)', {
        ...m,
        F: failed([{ path: '', message: 'the answer holds no JSON value' }], 'The answer is forty-two.'),
      });
    });
  });

  it('names the field of JSON that fails the schema', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<CliMessage>('-q-(t|)', m).pipe(checkRunOutput(Answer))).toBe('-q-(F|)', {
        ...m,
        F: failed(
          [
            { path: 'answer', message: 'Invalid input: expected string, received number' },
            { path: 'n', message: 'Invalid input: expected number, received undefined' },
          ],
          '{"answer":42}',
        ),
      });
    });
  });

  it('reads the final answer only: the text after the last tool call, not a tool\'s output', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<CliMessage>('-p-c-r-a-b-(t|)', m).pipe(checkRunOutput(Answer))).toBe('-p-c-r-a-b-(T|)', {
        ...m,
        T: { ...done, output: { answer: 'forty-two', n: 42 } },
      });
    });
  });

  it('checks a structured value the agent gave (in the terminal) rather than the text', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const given = { ...done, output: { answer: 'structured', n: 7, extra: true } };
      expectObservable(cold<CliMessage>('-p-(t|)', { ...m, t: given }).pipe(checkRunOutput(Answer))).toBe('-p-(T|)', {
        ...m,
        T: { ...done, output: { answer: 'structured', n: 7 } },
      });
    });
  });

  it('passes a failed run, an empty stream and an error as they are', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const failure: TerminalFailed = { ...failed([], ''), reason: 'exit', message: 'boom', exitCode: 1 };
      expectObservable(cold<CliMessage>('-p-(x|)', { ...m, x: failure }).pipe(checkRunOutput(Answer))).toBe('-p-(x|)', { ...m, x: failure });
      expectObservable(cold<CliMessage>('|').pipe(checkRunOutput(Answer))).toBe('|');
      expectObservable(cold<CliMessage>('-a-#', m, new Error('source')).pipe(checkRunOutput(Answer))).toBe('-a-#', m, new Error('source'));
    });
  });

  it('stops reading the source on an early unsubscribe', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold<CliMessage>('-a-b-(t|)', m);
      expectObservable(source.pipe(checkRunOutput(Answer)), '--!').toBe('-a', m);
      expectSubscriptions(source.subscriptions).toBe('^-!');
    });
  });

  it('shares nothing between two subscriptions', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const checked = cold<CliMessage>('-a-b-(t|)', m).pipe(checkRunOutput(Answer));
      const T = { ...done, output: { answer: 'forty-two', n: 42 } };
      expectObservable(checked).toBe('-a-b-(T|)', { ...m, T });
      expectObservable(checked).toBe('-a-b-(T|)', { ...m, T });
    });
  });

  it('sends a schema that throws (a refine of the caller\'s) to the error channel', () => {
    const boom = new Error('refine threw');
    const Throwing = Answer.refine(() => {
      throw boom;
    });
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<CliMessage>('-a-b-(t|)', m).pipe(checkRunOutput(Throwing))).toBe('-a-b-#', m, boom);
    });
  });

  it('refuses at call time what is not a schema', () => {
    expect(() => checkRunOutput(42 as never)).toThrow('agent-rx: outputSchema must be a zod schema or a JSON Schema object');
    expect(() => checkRunOutput(z.date().transform((date) => date.getTime()))).toThrow(/outputSchema has no JSON Schema form/);
  });

  it('types the output through the schema, for collectRun and collectRunResult', async () => {
    const run: Observable<CliMessage> = of<CliMessage[]>(m.a, m.b, done);
    const result = await firstValueFrom(run.pipe(checkRunOutput(Answer), collectRun()));
    if (!result.ok) throw new Error('not completed');
    const typed: { answer: string; n: number } = result.output;
    expect(typed).toEqual({ answer: 'forty-two', n: 42 });
    const promised = await collectRunResult(run.pipe(checkRunOutput(Answer)), { throwOnFailure: true });
    const alsoTyped: { answer: string; n: number } = promised.output;
    // @ts-expect-error the output is typed: `n` is a number
    const wrong: string = promised.output.n;
    expect([alsoTyped.n, wrong]).toEqual([42, 42]);
  });

  it('is never retried by isRetryableFailure: a new attempt repeats the work', () => {
    expect(isRetryableFailure({ ...failed([], 'prose'), message: 'x' })).toBe(false);
  });

  it('ends a live run at its terminal even when nothing else comes', async () => {
    const source = new Subject<CliMessage>();
    const result = firstValueFrom(source.pipe(checkRunOutput({ type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] }), collectRun()));
    source.next({ type: 'assistant', text: '```json\n{"ok": true}\n```' });
    source.next(done);
    expect(await result).toMatchObject({ ok: true, output: { ok: true } });
  });
});

describe('finding the JSON answer', () => {
  it('takes the whole text, else the last fenced block, else the last balanced object or array', () => {
    expect(jsonAnswer(' {"a":1} ')).toEqual({ value: { a: 1 } });
    expect(jsonAnswer('Here:\n```json\n{"a":1}\n```\nand\n```\n[2]\n```')).toEqual({ value: [2] });
    expect(jsonAnswer('The result is {"a":{"b":[1,2]}} as asked.')).toEqual({ value: { a: { b: [1, 2] } } });
    expect(jsonAnswer('no json here')).toBeUndefined();
    expect(jsonAnswer('')).toBeUndefined();
  });

  it('validates a JSON Schema object as well as a zod schema', () => {
    const contract = outputContract({ type: 'object', properties: { n: { type: 'integer', minimum: 1 } }, required: ['n'], $schema: 'https://json-schema.org/draft/2020-12/schema' });
    expect(contract.jsonSchema).toEqual({ type: 'object', properties: { n: { type: 'integer', minimum: 1 } }, required: ['n'] });
    expect(checkOutput(contract, '{"n": 3}')).toEqual({ ok: true, output: { n: 3 } });
    expect(checkOutput(contract, '{"n": 0}')).toMatchObject({ ok: false, issues: [{ path: 'n' }] });
  });

  it('tells an agent without native structured output the schema in words', () => {
    const text = outputInstruction(outputContract(Answer));
    expect(text).toContain('single JSON value');
    expect(JSON.parse(text.split('\n')[1] ?? '')).toMatchObject({ type: 'object', required: ['answer', 'n'] });
  });
});
