import { describe, expect, it } from '@jest/globals';
import { take } from 'rxjs';
import { fromAgentEventSource, type CliMessage, type TerminalFailed } from '../../lib/browser.js';
import { scheduler } from '../helpers/items.js';
import { FakeEventSource, fakeEventSources, onlySource, watch, type Seen } from './fake-event-source.js';

const session: CliMessage = { type: 'session.started', sessionId: 's1' };
const hello: CliMessage = { type: 'assistant', text: 'Hello' };
const world: CliMessage = { type: 'assistant', text: ', world' };
const completed: CliMessage = { type: 'terminal.completed', stopReason: 'end_turn' };

function lastFailure(seen: Seen<CliMessage>): TerminalFailed {
  const last = seen.messages.at(-1);
  if (last?.type !== 'terminal.failed') throw new Error(`expected a terminal.failed last, got ${JSON.stringify(last)}`);
  return last;
}

// Marbles: o = open, e = error (a lost connection), x = data that is not JSON, T = a turn.started
// (a session's message, not a CliMessage); s, h, w, c send those messages.
function expectMarbles(source: FakeEventSource, events: string, result: string, values: Record<string, CliMessage>): void {
  const steps: Record<string, () => void> = {
    o: () => {
      source.open();
    },
    e: () => {
      source.fail(true);
    },
    x: () => {
      source.send('not json');
    },
    T: () => {
      source.send({ type: 'turn.started', turn: 1, prompt: 'hi' });
    },
    ...Object.fromEntries(
      Object.entries({ s: session, h: hello, w: world, c: completed }).map(([key, message]) => [
        key,
        () => {
          source.send(message);
        },
      ]),
    ),
  };
  scheduler().run(({ hot, expectObservable }) => {
    hot(events, steps).subscribe((step) => {
      step();
    });
    expectObservable(fromAgentEventSource(source)).toBe(result, values);
  });
}

describe('fromAgentEventSource', () => {
  it('passes the run through in marbles, skipping what is not a CliMessage, and completes at the terminal', () => {
    const source = new FakeEventSource('/run');
    expectMarbles(source, '-o-s-x-h-T-w-c', '---s---h---w-(c|)', { s: session, h: hello, w: world, c: completed });
    expect(source.closeCalls).toBe(1);
  });

  it('ends in marbles with a terminal.failed alone at a break, naming the skipped session message', () => {
    const source = new FakeEventSource('/run');
    const failed: TerminalFailed = {
      type: 'terminal.failed',
      reason: 'invalid-output',
      message:
        "the event stream /run ended before the run's terminal message: the connection was lost or the server ended the response (not reconnecting: a run cannot be resumed); 1 message(s) were not CliMessages (message 1: invalid-event, unknown message type 'turn.started')",
      exitCode: null,
      signal: null,
      stderr: '',
      stderrTruncatedBytes: 0,
      invalidOutputLines: [{ lineNumber: 1, reason: 'invalid-event', detail: "unknown message type 'turn.started'", text: '{"type":"turn.started","turn":1,"prompt":"hi"}', bytes: 46, truncated: false }],
      invalidOutputLinesOmitted: 0,
    };
    expectMarbles(source, '-o-T-h-e', '-----h-(f|)', { h: hello, f: failed });
  });

  it('emits each message and completes after the terminal message, closing the EventSource', () => {
    const { EventSource, made } = fakeEventSources();
    const seen = watch(fromAgentEventSource('/run?prompt=hi', { EventSource }));
    const source = onlySource(made);
    expect(source.url).toBe('/run?prompt=hi');
    source.open();
    for (const message of [session, hello, world]) source.send(message);
    expect(seen.completed).toBe(false);
    source.send(completed);
    expect(seen).toMatchObject({ messages: [session, hello, world, completed], completed: true, error: undefined });
    expect(source.closeCalls).toBe(1);
    expect(source.listenerCount()).toBe(0);
  });

  it('opens nothing until subscribed, and one EventSource per subscription to a URL', () => {
    const { EventSource, made } = fakeEventSources();
    const run$ = fromAgentEventSource(new URL('http://127.0.0.1:8080/run?prompt=hi'), { EventSource, withCredentials: true });
    expect(made).toHaveLength(0);
    const first = watch(run$);
    const second = watch(run$);
    expect(made.map((source) => source.url)).toEqual(['http://127.0.0.1:8080/run?prompt=hi', 'http://127.0.0.1:8080/run?prompt=hi']);
    expect(made.map((source) => source.init)).toEqual([{ withCredentials: true }, { withCredentials: true }]);
    const [a, b] = made as [FakeEventSource, FakeEventSource];
    a.open();
    b.open();
    a.send(hello);
    b.send(world);
    a.send(completed);
    expect(first.messages).toEqual([hello, completed]);
    expect(second.messages).toEqual([world]);
    expect([a.readyState, b.readyState]).toEqual([2, 1]);
    second.unsubscribe();
    expect(b.closeCalls).toBe(1);
  });

  it('closes the EventSource on unsubscribe and emits nothing after it', () => {
    const { EventSource, made } = fakeEventSources();
    const seen = watch(fromAgentEventSource('/run', { EventSource }));
    const source = onlySource(made);
    source.open();
    source.send(hello);
    seen.unsubscribe();
    expect(source.closeCalls).toBe(1);
    expect(source.listenerCount()).toBe(0);
    source.send(world);
    source.fail(true);
    expect(seen).toMatchObject({ messages: [hello], completed: false, error: undefined });
  });

  it('closes the EventSource once when a downstream take() unsubscribes inside next', () => {
    const { EventSource, made } = fakeEventSources();
    const seen = watch(fromAgentEventSource('/run', { EventSource }).pipe(take(1)));
    const source = onlySource(made);
    source.open();
    source.send(hello);
    expect(seen).toMatchObject({ messages: [hello], completed: true });
    expect(source.closeCalls).toBe(1);
  });

  it('ends with a missing-terminal failure, and does not reconnect, when the stream breaks before the terminal', () => {
    const { EventSource, made } = fakeEventSources();
    const seen = watch(fromAgentEventSource('/run', { EventSource }));
    const source = onlySource(made);
    source.open();
    source.send(hello);
    source.fail(true); // a browser would now reconnect, and the server would start the run again
    expect(seen.completed).toBe(true);
    expect(seen.error).toBeUndefined();
    expect(seen.messages).toHaveLength(2);
    expect(lastFailure(seen)).toEqual({
      type: 'terminal.failed',
      reason: 'missing-terminal',
      message: expect.stringContaining("the event stream /run ended before the run's terminal message") as unknown as string,
      exitCode: null,
      signal: null,
      stderr: '',
      stderrTruncatedBytes: 0,
      invalidOutputLines: [],
      invalidOutputLinesOmitted: 0,
    });
    expect(source.readyState).toBe(2);
    expect(source.closeCalls).toBe(1);
  });

  it('says whether the stream could not connect or was refused', () => {
    const { EventSource, made } = fakeEventSources();
    const refused = watch(fromAgentEventSource('/run', { EventSource }));
    made[0]?.fail(false); // e.g. HTTP 404 or not text/event-stream: the browser gives up at once
    expect(lastFailure(refused).message).toBe(
      "the event stream /run could not be opened: the server refused it or did not answer with text/event-stream (the browser's network panel shows why)",
    );
    const unreachable = watch(fromAgentEventSource('/run', { EventSource }));
    made[1]?.fail(true);
    expect(lastFailure(unreachable).message).toBe('could not connect to the event stream /run');
    expect(made.map((source) => source.closeCalls)).toEqual([1, 1]);
  });

  it('skips events that are not CliMessages, and reports them if the stream then fails', () => {
    const { EventSource, made } = fakeEventSources();
    const seen = watch(fromAgentEventSource('/run', { EventSource }));
    const source = onlySource(made);
    source.open();
    source.send('not json');
    source.send(hello);
    source.send('[1]');
    source.send({ text: 'no type' });
    source.send({ type: 'brand.new', value: 1 });
    source.send({ type: 'assistant', text: 3 });
    source.fail(true);
    expect(seen.messages[0]).toEqual(hello);
    const failure = lastFailure(seen);
    expect(failure.reason).toBe('invalid-output');
    expect(failure.message).toMatch(/ended before the run's terminal message.*; 5 message\(s\) were not CliMessages \(message 1: not-json, /);
    expect(failure.invalidOutputLines.map(({ lineNumber, reason, detail }) => ({ lineNumber, reason, detail }))).toEqual([
      { lineNumber: 1, reason: 'not-json', detail: expect.any(String) },
      { lineNumber: 3, reason: 'not-object', detail: 'not a JSON object' },
      { lineNumber: 4, reason: 'no-type', detail: 'no string "type" field' },
      { lineNumber: 5, reason: 'invalid-event', detail: "unknown message type 'brand.new'" },
      { lineNumber: 6, reason: 'invalid-event', detail: 'text: Invalid input: expected string, received number' },
    ]);
    expect(failure.invalidOutputLines[3]).toMatchObject({ text: '{"type":"brand.new","value":1}', bytes: 30, truncated: false });
  });

  it('passes a valid terminal through even after invalid events', () => {
    const { EventSource, made } = fakeEventSources();
    const seen = watch(fromAgentEventSource('/run', { EventSource }));
    const source = onlySource(made);
    source.send({ type: 'brand.new' });
    source.send(completed);
    expect(seen).toMatchObject({ messages: [completed], completed: true });
  });

  it('keeps the first 50 invalid events, each cut to 2 KiB on a character boundary, and counts the rest', () => {
    const { EventSource, made } = fakeEventSources();
    const seen = watch(fromAgentEventSource('/run', { EventSource }));
    const source = onlySource(made);
    source.send(`x${'é'.repeat(2000)}`); // 4001 bytes
    for (let i = 0; i < 59; i += 1) source.send('nope');
    source.fail(true);
    const failure = lastFailure(seen);
    expect(failure.invalidOutputLines).toHaveLength(50);
    expect(failure.invalidOutputLinesOmitted).toBe(10);
    expect(failure.message).toContain('60 message(s) were not CliMessages');
    const first = failure.invalidOutputLines[0];
    expect(first).toMatchObject({ lineNumber: 1, bytes: 4001, truncated: true });
    expect(first?.text).toBe(`x${'é'.repeat(1023)}`);
  });

  it('uses a given EventSource as it is, and closes it when the run ends', () => {
    const given = new FakeEventSource('http://127.0.0.1/run?prompt=hi');
    given.open();
    const seen = watch(fromAgentEventSource(given));
    given.send(hello);
    given.fail(true);
    expect(lastFailure(seen).message).toContain('the event stream http://127.0.0.1/run ended before'); // without the prompt
    expect(given.closeCalls).toBe(1);
    expect(given.listenerCount()).toBe(0);
  });

  it('ends at once with a failure when a given EventSource is already closed', () => {
    const given = new FakeEventSource('/run');
    given.close();
    const seen = watch(fromAgentEventSource(given));
    expect(seen.completed).toBe(true);
    expect(lastFailure(seen)).toMatchObject({ reason: 'missing-terminal', message: 'the event stream /run was already closed when the subscription began' });
  });

  it('throws a TypeError when called without an EventSource to use or with a bad source', () => {
    expect(typeof (globalThis as { EventSource?: unknown }).EventSource).toBe('undefined'); // Node 20
    expect(() => fromAgentEventSource('/run')).toThrow(new TypeError('agent-rx: fromAgentEventSource found no EventSource here; pass one as options.EventSource'));
    expect(() => fromAgentEventSource('', { EventSource: FakeEventSource })).toThrow(TypeError);
    expect(() => fromAgentEventSource(42 as unknown as string, { EventSource: FakeEventSource })).toThrow(TypeError);
  });
});
