import { describe, expect, it } from '@jest/globals';
import { from, lastValueFrom, toArray } from 'rxjs';
import * as z from 'zod';
import {
  agentOutputToMessages,
  type AgentEvent,
  type CliMessage,
  type Conclusion,
  type Dialect,
  type ProcessItem,
  type TextReader,
  type TurnEnd,
} from '../../lib/index.js';
import { exit, scheduler } from '../helpers/items.js';

/**
 * A new agent is a new dialect and nothing else: "toy", an agent invented here, defined entirely in
 * this file (its zod schemas, a text reader, a turn end and a mapping) and run through
 * `agentOutputToMessages`. Its protocol, one JSON object a line:
 *
 *   {"type":"hello","session":"S1"}                      the session
 *   {"type":"think","delta":"…"}                         thinking, as deltas
 *   {"type":"say","text":"…"}                            the answer so far in this message (a snapshot)
 *   {"type":"tool","id":"t1","name":"ls","input":{…}}    a tool call
 *   {"type":"tool_result","id":"t1","output":"…","error":false}
 *   {"type":"end_message","stop":"tool"|"done"}          a message ends (to run tools, or for good)
 *   {"type":"bye","ok":true} | {"type":"bye","ok":false,"error":"…"}
 *
 * `think` and `say` do not say which message they belong to: the reader counts `end_message` lines,
 * so it has state, made per subscription by `createTextReader`.
 */

const toySchemas = {
  hello: z.object({ type: z.literal('hello'), session: z.string() }),
  think: z.object({ type: z.literal('think'), delta: z.string() }),
  say: z.object({ type: z.literal('say'), text: z.string() }),
  tool: z.object({ type: z.literal('tool'), id: z.string(), name: z.string(), input: z.unknown() }),
  tool_result: z.object({ type: z.literal('tool_result'), id: z.string(), output: z.string(), error: z.boolean() }),
  end_message: z.object({ type: z.literal('end_message'), stop: z.enum(['tool', 'done']) }),
  bye: z.object({ type: z.literal('bye'), ok: z.boolean(), error: z.string().optional() }),
};
type ToyEvent = { [K in keyof typeof toySchemas]: z.infer<(typeof toySchemas)[K]> }[keyof typeof toySchemas];

// Events of a listed type arrive validated by the schemas: a matching type proves the shape.
function toy<T extends ToyEvent['type']>(event: AgentEvent, type: T): Extract<ToyEvent, { type: T }> | null {
  return event.type === type ? (event as unknown as Extract<ToyEvent, { type: T }>) : null;
}

interface ToyState {
  session: string | undefined;
  readonly tools: Map<string, string>;
  outcome: Conclusion;
  error: string | undefined;
}

function toyReader(): TextReader {
  let message = 0;
  return (event) => {
    if (toy(event, 'end_message') !== null) message += 1;
    const say = toy(event, 'say');
    if (say !== null) return { channel: 'assistant', key: `m${message}`, snapshot: say.text };
    const think = toy(event, 'think');
    if (think !== null) return { channel: 'thought', key: `m${message}`, delta: think.delta };
    return null;
  };
}

function toyTurnEnd(event: AgentEvent): TurnEnd {
  const end = toy(event, 'end_message');
  return end === null ? null : end.stop === 'tool' ? 'tool-use' : 'final';
}

function toyMap(state: ToyState, event: AgentEvent): readonly CliMessage[] {
  const hello = toy(event, 'hello');
  if (hello !== null && state.session === undefined) {
    state.session = hello.session;
    return [{ type: 'session.started', sessionId: hello.session }];
  }
  const tool = toy(event, 'tool');
  if (tool !== null) {
    state.tools.set(tool.id, tool.name);
    return [{ type: 'tool.call', toolCallId: tool.id, name: tool.name, input: tool.input }];
  }
  const result = toy(event, 'tool_result');
  if (result !== null) {
    const name = state.tools.get(result.id) ?? 'unknown';
    return [{ type: result.error ? 'tool.failed' : 'tool.completed', toolCallId: result.id, name, output: result.output }];
  }
  const bye = toy(event, 'bye');
  if (bye !== null) {
    state.error = bye.error;
    state.outcome = bye.ok
      ? { kind: 'completed', stopReason: 'end_turn' }
      : { kind: 'failed', reason: 'agent-error', message: `toy reported an error: ${bye.error ?? 'unknown'}`, ended: true };
  }
  return [];
}

/** The toy dialect; `created` counts the states and readers made. */
function toyDialect(options: { readonly replayedPrefix?: boolean } = {}): Dialect<ToyState> & { readonly created: { states: number; readers: number } } {
  const created = { states: 0, readers: 0 };
  return {
    created,
    name: 'toy',
    installHint: 'Install toy with your package manager.',
    schemas: toySchemas,
    createTextReader: () => {
      created.readers += 1;
      return toyReader();
    },
    ...(options.replayedPrefix === undefined ? {} : { replayedPrefix: options.replayedPrefix }),
    turnEnd: toyTurnEnd,
    createState: () => {
      created.states += 1;
      return { session: undefined, tools: new Map(), outcome: { kind: 'inconclusive', message: 'toy exited without saying bye' }, error: undefined };
    },
    map: toyMap,
    conclude: (state) => state.outcome,
    lastError: (state) => state.error,
    sessionId: (state) => state.session,
  };
}

const line = (value: object | string): ProcessItem => ({ kind: 'line', text: typeof value === 'string' ? value : JSON.stringify(value) });

function run(lines: readonly ProcessItem[], dialect: Dialect<ToyState> = toyDialect(), end: ProcessItem = exit()): Promise<CliMessage[]> {
  return lastValueFrom(from([...lines, end]).pipe(agentOutputToMessages(dialect), toArray()));
}

const hello = line({ type: 'hello', session: 'S1' });
const bye = line({ type: 'bye', ok: true });

describe('agentOutputToMessages with a dialect defined in a spec', () => {
  it('runs a whole toy run: the session, the answer from snapshots, a tool call, the thought at the turn end, one terminal', async () => {
    const messages = await run([
      hello,
      line({ type: 'think', delta: 'Let me ' }),
      line({ type: 'think', delta: 'look.' }),
      line({ type: 'say', text: 'I will' }),
      line({ type: 'say', text: 'I will list.' }),
      line({ type: 'tool', id: 't1', name: 'ls', input: { path: '.' } }),
      line({ type: 'end_message', stop: 'tool' }),
      line({ type: 'tool_result', id: 't1', output: 'a b', error: false }),
      line({ type: 'think', delta: 'Found it.' }),
      line({ type: 'say', text: 'Two files.' }),
      line({ type: 'end_message', stop: 'done' }),
      bye,
    ]);
    expect(messages).toEqual([
      { type: 'session.started', sessionId: 'S1' },
      { type: 'assistant', text: 'I will' },
      { type: 'assistant', text: ' list.' },
      { type: 'tool.call', toolCallId: 't1', name: 'ls', input: { path: '.' } },
      { type: 'tool.completed', toolCallId: 't1', name: 'ls', output: 'a b' },
      { type: 'assistant', text: 'Two files.' },
      { type: 'assistant.thought', text: 'Let me look.\n\nFound it.' },
      { type: 'terminal.completed', stopReason: 'end_turn', sessionId: 'S1' },
    ]);
  });

  it('withdraws a diverged snapshot instead of doubling it', async () => {
    const messages = await run([hello, line({ type: 'say', text: 'Hello' }), line({ type: 'say', text: 'Help!' }), bye]);
    expect(messages.slice(1, -1)).toEqual([
      { type: 'assistant', text: 'Hello' },
      { type: 'assistant.withdrawn', text: 'lo' },
      { type: 'assistant', text: 'p!' },
    ]);
  });

  it('passes its replayedPrefix on: a message that repeats the one before it after a tool turn gives only its own text', async () => {
    const lines = [
      hello,
      line({ type: 'say', text: 'First.' }),
      line({ type: 'end_message', stop: 'tool' }),
      line({ type: 'say', text: 'Fir' }),
      line({ type: 'say', text: 'First. Second.' }),
      line({ type: 'end_message', stop: 'done' }),
      bye,
    ];
    const texts = (messages: readonly CliMessage[]) => messages.flatMap((message) => (message.type === 'assistant' ? [message.text] : []));
    expect(texts(await run(lines, toyDialect({ replayedPrefix: true })))).toEqual(['First.', ' Second.']);
    // Without it, each message's snapshots are its own text.
    expect(texts(await run(lines, toyDialect()))).toEqual(['First.', 'Fir', 'st. Second.']);
  });

  it('keeps invalid lines out of the stream, and on the terminal when nothing conclusive came', async () => {
    const messages = await run([hello, line('not json'), line({ no: 'type' }), line({ type: 'say', text: 5 }), line('[1]'), line({ type: 'say', text: 'ok' })]);
    expect(messages.slice(0, -1)).toEqual([
      { type: 'session.started', sessionId: 'S1' },
      { type: 'assistant', text: 'ok' },
    ]);
    const terminal = messages.at(-1);
    expect(terminal).toMatchObject({ type: 'terminal.failed', reason: 'invalid-output', sessionId: 'S1', invalidOutputLinesOmitted: 0 });
    if (terminal?.type !== 'terminal.failed') return;
    expect(terminal.invalidOutputLines.map((invalid) => [invalid.lineNumber, invalid.reason])).toEqual([
      [2, 'not-json'],
      [3, 'no-type'],
      [4, 'invalid-event'],
      [5, 'not-object'],
    ]);
    expect(terminal.message).toMatch(/^toy exited without saying bye; 4 line\(s\) of output were not understood \(line 2: not-json, /);
  });

  it('still completes a run that said bye, whatever invalid lines came on the way', async () => {
    const messages = await run([hello, line('garbage'), line({ type: 'tool', id: 7 }), bye]);
    expect(messages.at(-1)).toEqual({ type: 'terminal.completed', stopReason: 'end_turn', sessionId: 'S1' });
  });

  it('ends with the agent\'s error, which also explains its non-zero exit', async () => {
    const messages = await run([hello, line({ type: 'bye', ok: false, error: 'model on fire' })], toyDialect(), exit({ exitCode: 1 }));
    expect(messages.at(-1)).toMatchObject({
      type: 'terminal.failed',
      reason: 'agent-error',
      message: 'toy reported an error: model on fire',
      agentError: 'model on fire',
      exitCode: 1,
      sessionId: 'S1',
    });
  });

  it('says how to install it when it cannot be started from PATH', async () => {
    const startError = { stage: 'spawn', code: 'ENOENT', message: 'spawn toy ENOENT', problem: { kind: 'not-on-path', program: 'toy' } } as const;
    const messages = await run([], toyDialect(), exit({ exitCode: null, pid: null, startError }));
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatchObject({ type: 'terminal.failed', reason: 'spawn' });
    expect(messages[0]?.type === 'terminal.failed' ? messages[0].message : '').toMatch(/Install toy with your package manager\.$/);
  });

  it('uses the dialect\'s own line parser when it has one', async () => {
    const parsed: string[] = [];
    const dialect: Dialect<ToyState> = {
      ...toyDialect(),
      parse: (text) => {
        parsed.push(text);
        return JSON.parse(text) as unknown;
      },
    };
    const messages = await run([hello, line(''), line('oops'), bye], dialect);
    expect(parsed).toEqual([JSON.stringify({ type: 'hello', session: 'S1' }), 'oops', JSON.stringify({ type: 'bye', ok: true })]);
    expect(messages.at(-1)).toMatchObject({ type: 'terminal.completed' });
  });
});

describe('agentOutputToMessages checks its dialect when called', () => {
  it.each<[string, unknown]>([
    ['schemas', 'nope'],
    ['parse', 'nope'],
    ['createTextReader', 'nope'],
    ['createTextReader', undefined],
    ['replayedPrefix', 'yes'],
    ['turnEnd', 'nope'],
    ['turnEnd', undefined],
    ['map', 'nope'],
    ['conclude', undefined],
  ])('throws a TypeError at call time for %s = %p, not an error at subscription', (key, value) => {
    const dialect = { ...toyDialect(), [key]: value } as unknown as Dialect<ToyState>;
    expect(() => agentOutputToMessages(dialect)).toThrow(TypeError);
    expect(() => agentOutputToMessages(dialect)).toThrow(/^agent-rx: /);
  });
});

describe('agentOutputToMessages (rxjs checklist)', () => {
  const values = {
    h: hello,
    a: line({ type: 'say', text: 'Hi' }),
    b: line({ type: 'say', text: 'Hi there' }),
    e: line({ type: 'end_message', stop: 'done' }),
    y: bye,
    x: exit(),
  };
  const out = {
    s: { type: 'session.started', sessionId: 'S1' },
    a: { type: 'assistant', text: 'Hi' },
    b: { type: 'assistant', text: ' there' },
    T: { type: 'terminal.completed', stopReason: 'end_turn', sessionId: 'S1' },
  };

  it('maps a run in time, and completes with its terminal', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<ProcessItem>('-h-a-b-e-y-x|', values).pipe(agentOutputToMessages(toyDialect()))).toBe('-s-a-b-----(T|)', out);
    });
  });

  it('gives a source that completes empty a missing-terminal failure, and stays silent on never', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<ProcessItem>('|').pipe(agentOutputToMessages(toyDialect()))).toBe('(T|)', {
        T: expect.objectContaining({ type: 'terminal.failed', reason: 'missing-terminal', message: 'the toy output ended without an exit' }),
      });
      expectObservable(cold<ProcessItem>('-').pipe(agentOutputToMessages(toyDialect()))).toBe('-');
    });
  });

  it('forwards an error', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const boom = new Error('stdout broke');
      expectObservable(cold<ProcessItem>('-h-#', values, boom).pipe(agentOutputToMessages(toyDialect()))).toBe('-s-#', out, boom);
    });
  });

  it('stops at an early unsubscribe and leaves the source', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold<ProcessItem>('-h-a-b-e-y-x|', values);
      expectObservable(source.pipe(agentOutputToMessages(toyDialect())), '^----!').toBe('-s-a-', out);
      expectSubscriptions(source.subscriptions).toBe('^----!');
    });
  });

  it('two subscriptions share nothing: each gets its own state, reader and text ledger', () => {
    const dialect = toyDialect();
    scheduler().run(({ cold, expectObservable }) => {
      const result = cold<ProcessItem>('-h-a-b-e-y-x|', values).pipe(agentOutputToMessages(dialect));
      expectObservable(result).toBe('-s-a-b-----(T|)', out);
      expectObservable(result).toBe('-s-a-b-----(T|)', out);
    });
    expect(dialect.created).toEqual({ states: 2, readers: 2 });
  });
});
