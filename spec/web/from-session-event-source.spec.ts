import { describe, expect, it } from '@jest/globals';
import { take, type Observable } from 'rxjs';
import { fromAgentEventSource, fromSessionEventSource, type SessionMessage, type TerminalFailed } from '../../lib/browser.js';
import { scheduler } from '../helpers/items.js';
import { FakeEventSource, fakeEventSources, onlySource, watch } from './fake-event-source.js';

const usage = { inputTokens: 10, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0, totalTokens: 12 };
const m = {
  i: { type: 'input.accepted', kind: 'prompt', as: 'turn', turn: 1, text: 'hi', commandId: 'c1' },
  s: { type: 'turn.started', turn: 1, prompt: 'hi', commandId: 'c1' },
  h: { type: 'session.started', sessionId: 's1' },
  a: { type: 'assistant', text: 'Hello' },
  c: { type: 'turn.completed', turn: 1, stopReason: 'end_turn', usage },
  g: { type: 'turn.failed', turn: 1, reason: 'aborted', message: 'the turn was aborted' },
  u: { type: 'turn.started', turn: 2, prompt: 'next' },
  d: { type: 'input.dropped', kind: 'abort', reason: 'no-turn', message: 'no turn is running' },
  t: { type: 'terminal.completed', stopReason: 'end_turn', usage },
} satisfies Record<string, SessionMessage>;

const BROKE_OFF =
  "the event stream /session ended before the session's terminal message: the connection was lost or the server ended the response (not reconnecting: a session cannot be resumed)";

/** A broken stream's `terminal.failed`: nothing of a process, only what the stream showed. */
function streamFailure(message: string, extra: Partial<TerminalFailed> = {}): TerminalFailed {
  return {
    type: 'terminal.failed',
    reason: 'missing-terminal',
    message,
    exitCode: null,
    signal: null,
    stderr: '',
    stderrTruncatedBytes: 0,
    invalidOutputLines: [],
    invalidOutputLinesOmitted: 0,
    ...extra,
  };
}

/** What the test does to the EventSource at one frame of a marble. */
type Step = (source: FakeEventSource) => void;

// o = open, e = error while reconnecting (a lost connection), E = error closed for good (refused),
// x = data that is not JSON, y = a message of a type this version does not know; any other letter
// sends that message of `m`.
const steps: Record<string, Step> = {
  o: (source) => {
    source.open();
  },
  e: (source) => {
    source.fail(true);
  },
  E: (source) => {
    source.fail(false);
  },
  x: (source) => {
    source.send('not json');
  },
  y: (source) => {
    source.send({ type: 'brand.new' });
  },
  ...Object.fromEntries(
    Object.entries(m).map(([key, message]): [string, Step] => [
      key,
      (source) => {
        source.send(message);
      },
    ]),
  ),
};

// Runs `events` against the source that `target` names at each frame, and expects `result` from `session$`.
function expectMarbles(session$: Observable<SessionMessage>, target: () => FakeEventSource, events: string, result: string, values: Record<string, SessionMessage>): void {
  scheduler().run(({ hot, expectObservable }) => {
    hot(events, steps).subscribe((step) => {
      step(target());
    });
    expectObservable(session$).toBe(result, values);
  });
}

describe('fromSessionEventSource', () => {
  it('emits the session messages, turns and all, and completes after the terminal message, closing the EventSource', () => {
    const source = new FakeEventSource('/session');
    expectMarbles(fromSessionEventSource(source), () => source, '-o-i-s-h-a-c-d-t', '---i-s-h-a-c-d-(t|)', m);
    expect(source.closeCalls).toBe(1);
    expect(source.listenerCount()).toBe(0);
  });

  it('skips events that are not SessionMessages', () => {
    const source = new FakeEventSource('/session');
    expectMarbles(fromSessionEventSource(source), () => source, '-o-s-x-a-y-c-t', '---s---a---c-(t|)', m);
  });

  it('fails the running turn, then the session, with the same message when the stream breaks mid-turn', () => {
    const source = new FakeEventSource('/session');
    const failure = streamFailure(BROKE_OFF);
    expectMarbles(fromSessionEventSource(source), () => source, '-o-i-s-a-e', '---i-s-a-(fF|)', {
      ...m,
      f: { type: 'turn.failed', turn: 1, reason: 'missing-terminal', message: BROKE_OFF },
      F: failure,
    });
    expect(source.readyState).toBe(2);
    expect(source.closeCalls).toBe(1);
    expect(source.listenerCount()).toBe(0);
  });

  it('fails only the session when the stream breaks between turns', () => {
    const completed = new FakeEventSource('/session');
    expectMarbles(fromSessionEventSource(completed), () => completed, '-o-s-a-c-e', '---s-a-c-(F|)', { ...m, F: streamFailure(BROKE_OFF) });
    const aborted = new FakeEventSource('/session');
    expectMarbles(fromSessionEventSource(aborted), () => aborted, '-o-s-g-e', '---s-g-(F|)', { ...m, F: streamFailure(BROKE_OFF) });
  });

  it('fails the turn that is running, not the ones that ended, and carries the invalid-output reason into it', () => {
    const source = new FakeEventSource('/session');
    const message = `${BROKE_OFF}; 1 message(s) were not SessionMessages (message 3: invalid-event, unknown message type 'brand.new')`;
    expectMarbles(fromSessionEventSource(source), () => source, '-o-s-c-y-u-e', '---s-c---u-(fF|)', {
      ...m,
      f: { type: 'turn.failed', turn: 2, reason: 'invalid-output', message },
      F: streamFailure(message, {
        reason: 'invalid-output',
        invalidOutputLines: [{ lineNumber: 3, reason: 'invalid-event', detail: "unknown message type 'brand.new'", text: '{"type":"brand.new"}', bytes: 20, truncated: false }],
      }),
    });
  });

  it('says it could not connect when the stream fails before it opened, and that it was refused when it closed for good', () => {
    const { EventSource, made } = fakeEventSources();
    expectMarbles(fromSessionEventSource('/session', { EventSource }), () => onlySource(made), '-e', '-(F|)', { F: streamFailure('could not connect to the event stream /session') });
    const refused = fakeEventSources();
    expectMarbles(fromSessionEventSource('/session?x=1', { EventSource: refused.EventSource }), () => onlySource(refused.made), '-E', '-(F|)', {
      F: streamFailure(
        "the event stream /session could not be opened: the server refused it or did not answer with text/event-stream (the browser's network panel shows why)",
      ),
    });
    expect([...made, ...refused.made].map((source) => source.closeCalls)).toEqual([1, 1]);
  });

  it('closes the EventSource on unsubscribe and emits nothing after it, not even a failed turn', () => {
    const { EventSource, made } = fakeEventSources();
    const seen = watch(fromSessionEventSource('/session', { EventSource }));
    const source = onlySource(made);
    source.open();
    source.send(m.s);
    source.send(m.a);
    seen.unsubscribe();
    expect(source.closeCalls).toBe(1);
    expect(source.listenerCount()).toBe(0);
    source.send(m.c);
    source.fail(true);
    expect(seen).toMatchObject({ messages: [m.s, m.a], completed: false, error: undefined });
  });

  it('closes the EventSource once when a downstream take() unsubscribes inside next, even amid a failure', () => {
    const source = new FakeEventSource('/session');
    const seen = watch(fromSessionEventSource(source).pipe(take(2)));
    source.open();
    source.send(m.s);
    source.fail(true); // turn.failed is the second message: take(2) ends there
    expect(seen.messages).toEqual([m.s, { type: 'turn.failed', turn: 1, reason: 'missing-terminal', message: BROKE_OFF }]);
    expect(seen.completed).toBe(true);
    expect(source.closeCalls).toBe(1);
  });

  it('opens one EventSource per subscription to a URL, and keeps each one\'s running turn to itself', () => {
    const { EventSource, made } = fakeEventSources();
    const session$ = fromSessionEventSource(new URL('http://127.0.0.1:8080/session'), { EventSource, withCredentials: true });
    expect(made).toHaveLength(0);
    const first = watch(session$);
    const second = watch(session$);
    expect(made.map((source) => [source.url, source.init])).toEqual([
      ['http://127.0.0.1:8080/session', { withCredentials: true }],
      ['http://127.0.0.1:8080/session', { withCredentials: true }],
    ]);
    const [a, b] = made as [FakeEventSource, FakeEventSource];
    a.open();
    b.open();
    a.send(m.s);
    b.send(m.s);
    b.send(m.c);
    a.fail(true);
    b.fail(true);
    expect(first.messages.map((message) => message.type)).toEqual(['turn.started', 'turn.failed', 'terminal.failed']);
    expect(second.messages.map((message) => message.type)).toEqual(['turn.started', 'turn.completed', 'terminal.failed']);
    expect([first.completed, second.completed]).toEqual([true, true]);
  });

  it('leaves the other named events of a given EventSource to their own listeners', () => {
    const source = new FakeEventSource('/session');
    const ids: unknown[] = [];
    source.addEventListener('session', (event) => ids.push(event.data));
    const seen = watch(fromSessionEventSource(source));
    source.open();
    source.sendEvent('session', { id: 'abc' });
    source.send(m.t);
    expect(ids).toEqual(['{"id":"abc"}']);
    expect(seen).toMatchObject({ messages: [m.t], completed: true });
    expect(source.listenerCount()).toBe(1); // the caller's own
  });

  it('ends at once with only a session failure when a given EventSource is already closed', () => {
    const source = new FakeEventSource('/session');
    source.close();
    const seen = watch(fromSessionEventSource(source));
    expect(seen).toMatchObject({ messages: [streamFailure('the event stream /session was already closed when the subscription began')], completed: true });
  });

  it('reads session messages that fromAgentEventSource skips as not CliMessages', () => {
    const session = new FakeEventSource('/session');
    const run = new FakeEventSource('/session');
    const sessionSeen = watch(fromSessionEventSource(session));
    const runSeen = watch(fromAgentEventSource(run));
    for (const source of [session, run]) {
      source.open();
      source.send(m.s);
      source.send(m.a);
      source.fail(true);
    }
    expect(sessionSeen.messages.map((message) => message.type)).toEqual(['turn.started', 'assistant', 'turn.failed', 'terminal.failed']);
    expect(runSeen.messages.map((message) => message.type)).toEqual(['assistant', 'terminal.failed']);
    expect(runSeen.messages.at(-1)).toMatchObject({
      reason: 'invalid-output',
      message: expect.stringMatching(/ended before the run's terminal message.*; 1 message\(s\) were not CliMessages \(message 1: invalid-event, unknown message type 'turn.started'\)$/),
    });
  });

  it('throws a TypeError that names it when called without an EventSource to use or with a bad source', () => {
    expect(() => fromSessionEventSource('/session')).toThrow(new TypeError('agent-rx: fromSessionEventSource found no EventSource here; pass one as options.EventSource'));
    expect(() => fromSessionEventSource('', { EventSource: FakeEventSource })).toThrow(new TypeError('agent-rx: fromSessionEventSource needs a non-empty URL'));
    expect(() => fromSessionEventSource(42 as unknown as string, { EventSource: FakeEventSource })).toThrow(TypeError);
  });
});
