import { describe, expect, it } from '@jest/globals';
import { lastValueFrom, toArray } from 'rxjs';
import { fromAgentEventSource, fromSessionEventSource, type CliMessage } from '../../lib/browser.js';
import { eventId, isSessionId, parseEventId, parseGraceMs, parseRunEvent, resumingEventSource, type RunEventData } from '../../examples/web/resumable.js';
import { delay } from '../helpers/tagged-child.js';
import { FakeEventSource } from './fake-event-source.js';

const TEXT = { type: 'assistant', text: 'Hel' };
const MORE = { type: 'assistant', text: 'lo' };
const DONE = { type: 'terminal.completed', stopReason: 'end_turn' };

// A page's run over the fake source, wrapped: the messages it gets, and the run it was told.
function read(giveUpMs?: number) {
  const source = new FakeEventSource('http://127.0.0.1/run?prompt=secret');
  const told: RunEventData[] = [];
  const wrapped = resumingEventSource(source, { onRun: (run) => told.push(run), ...(giveUpMs === undefined ? {} : { giveUpMs }) });
  const messages = lastValueFrom(fromAgentEventSource(wrapped).pipe(toArray()));
  return { source, told, messages };
}

describe('resumingEventSource', () => {
  it('lets the browser reconnect a resumable stream: the errors of a drop are held back, and the run goes on', async () => {
    const { source, told, messages } = read();
    source.open();
    source.sendEvent('run', { runId: 'r-1', graceMs: 10_000 });
    source.send(TEXT);
    source.fail(true); // dropped; the browser reconnects by itself
    source.fail(true); // and once more
    source.open();
    source.send(MORE);
    source.send(DONE);
    expect(await messages).toEqual([TEXT, MORE, DONE]);
    expect(told).toEqual([{ runId: 'r-1', graceMs: 10_000 }]);
    expect(source.closeCalls).toBeGreaterThan(0);
    expect(source.listenerCount()).toBe(0);
  });

  it('is the plain stream of today when there is no run event: the first error ends it', async () => {
    const { source, told, messages } = read();
    source.open();
    source.send(TEXT);
    source.fail(true);
    const got: CliMessage[] = await messages;
    expect(got).toEqual([TEXT, expect.objectContaining({ type: 'terminal.failed', reason: 'missing-terminal' })]);
    expect(got[1]).toMatchObject({ message: expect.not.stringContaining('secret') });
    expect(told).toEqual([]);
  });

  it('lets an error through when the browser gave up (the server answered 204 or an error)', async () => {
    const { source, messages } = read();
    source.open();
    source.sendEvent('run', { runId: 'r-1', graceMs: 10_000 });
    source.fail(true);
    source.fail(false);
    expect((await messages).at(-1)).toMatchObject({ type: 'terminal.failed', reason: 'missing-terminal' });
  });

  it('gives up when no reconnect opened within giveUpMs (default: the run’s grace), and closes the source', async () => {
    const { source, messages } = read(30);
    source.open();
    source.sendEvent('run', { runId: 'r-1', graceMs: 10_000 });
    source.fail(true);
    await delay(10);
    source.fail(true);
    expect((await messages).at(-1)).toMatchObject({ type: 'terminal.failed', reason: 'missing-terminal' });
    expect(source.readyState).toBe(2);
    const graced = read();
    graced.source.open();
    graced.source.sendEvent('run', { runId: 'r-2', graceMs: 20 });
    graced.source.fail(true);
    expect((await graced.messages).at(-1)).toMatchObject({ type: 'terminal.failed', reason: 'missing-terminal' });
  });

  it('ignores a run event that is not one', async () => {
    const { source, told, messages } = read();
    source.open();
    source.sendEvent('run', 'not json');
    source.sendEvent('run', { runId: 'has space', graceMs: 1 });
    source.sendEvent('run', { runId: 'r', graceMs: -1 });
    source.fail(true);
    expect((await messages).at(-1)).toMatchObject({ type: 'terminal.failed' });
    expect(told).toEqual([]);
  });

  it('takes a fleet session’s stream as resumable by its session event (the event option): a drop is held back, a run event is not looked at', async () => {
    const source = new FakeEventSource('http://127.0.0.1/session?id=chat-1');
    const told: RunEventData[] = [];
    const wrapped = resumingEventSource(source, { event: 'session', onRun: (run) => told.push(run) });
    const messages = lastValueFrom(fromSessionEventSource(wrapped).pipe(toArray()));
    const started = { type: 'turn.started', turn: 1, prompt: 'hi' };
    const text = { type: 'assistant', text: 'hello' };
    const ended = { type: 'turn.completed', turn: 1, stopReason: 'end_turn' };
    const terminal = { type: 'terminal.completed', stopReason: 'end_turn' };
    source.open();
    source.sendEvent('session', { id: 'chat-1', graceMs: 10_000 });
    source.send(started);
    source.fail(true); // dropped mid-turn; the browser reconnects by itself
    source.open();
    source.send(text);
    source.send(ended);
    source.send(terminal);
    expect(await messages).toEqual([started, text, ended, terminal]);
    expect(told).toEqual([]);
  });

  it('is a plain stream when its session event has no graceMs: the first error ends it', async () => {
    const source = new FakeEventSource('http://127.0.0.1/session');
    const wrapped = resumingEventSource(source, { event: 'session' });
    const messages = lastValueFrom(fromSessionEventSource(wrapped).pipe(toArray()));
    source.open();
    source.sendEvent('session', { id: 'local-1' });
    source.fail(true);
    expect((await messages).at(-1)).toMatchObject({ type: 'terminal.failed', reason: 'missing-terminal' });
    expect(parseGraceMs('{"graceMs":-1}')).toBeNull();
    expect(parseGraceMs('{"graceMs":250}')).toBe(250);
  });
});

describe('the event ids of a resumable stream', () => {
  it('are <run id>/<entry id>, read back from Last-Event-ID', () => {
    expect(eventId('0b6c-4f', '1700000000000-3')).toBe('0b6c-4f/1700000000000-3');
    expect(parseEventId('0b6c-4f/1700000000000-3')).toEqual({ runId: '0b6c-4f', after: '1700000000000-3' });
    expect(parseEventId('0b6c-4f/0-0')).toEqual({ runId: '0b6c-4f', after: '0-0' });
    for (const text of ['', '4', 'r/', '/1-0', 'r/1', 'r/1-0/2-0', 'a b/1-0', 'r/x-0']) expect(parseEventId(text)).toBeNull();
    expect(parseRunEvent('{"runId":"r","graceMs":0}')).toEqual({ runId: 'r', graceMs: 0 });
    expect(parseRunEvent('{"runId":"r"}')).toBeNull();
    // A fleet session's id: what its keys are made of (no colon, unlike a run id).
    expect(['chat-42', 'a.b_c', 'x'.repeat(200)].map(isSessionId)).toEqual([true, true, true]);
    expect(['', 'a b', 'a:b', 'a/b', 'x'.repeat(201)].map(isSessionId)).toEqual([false, false, false, false, false]);
  });
});
