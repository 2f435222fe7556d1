import { describe, expect, it } from '@jest/globals';
import { APICallError } from '@ai-sdk/provider';
import { readUIMessageStream, type UIMessage } from 'ai';
import { from, lastValueFrom, Observable, Subject, toArray } from 'rxjs';
import { chatRequestTurn, modelParts, toUIMessageChunks, uiMessageStream, type ModelPartsContext } from '../../lib/ai-sdk.js';
import type { CliMessage, SessionMessage, TerminalFailed } from '../../lib/index.js';
import { scheduler, terminalFailed } from '../helpers/items.js';

// The two pure mappings of agent-rx/ai-sdk: a run's messages as a language model's stream parts,
// and as UI message chunks; and the reading of a chat request's messages.

const usage = { inputTokens: 100, outputTokens: 7, cacheReadTokens: 20, cacheWriteTokens: 5, totalTokens: 132 };
const failed: TerminalFailed = terminalFailed({ message: 'pi reported an error: 429 slow down', httpStatus: 429 });
const m = {
  s: { type: 'session.started', sessionId: 's1', pid: 4242 },
  a: { type: 'assistant', text: 'Hel' },
  b: { type: 'assistant', text: 'lo' },
  w: { type: 'assistant.withdrawn', text: 'lo' },
  h: { type: 'assistant.thought', text: 'hmm' },
  c: { type: 'tool.call', toolCallId: 't1', name: 'bash', input: { command: 'ls' }, kind: 'execute', summary: 'ls' },
  u: { type: 'tool.update', toolCallId: 't1', name: 'bash', output: 'a' },
  r: { type: 'tool.completed', toolCallId: 't1', name: 'bash', output: 'a\nb' },
  e: { type: 'tool.failed', toolCallId: 't1', name: 'bash', output: 'no such file' },
  t: { type: 'terminal.completed', stopReason: 'end_turn', agentStopReason: 'stop', usage, sessionId: 's1' },
  x: failed,
} satisfies Record<string, CliMessage>;

const context: ModelPartsContext = { agent: 'pi', modelId: 'fake', warnings: [], prompt: 'hi', json: false, raw: false };
const meta = (extra: Record<string, unknown> = {}) => ({ providerMetadata: { agentRx: { sessionId: 's1', pid: 4242, agent: 'pi', ...extra } } });

describe('modelParts', () => {
  it('maps text, reasoning, the agent’s tools and the end, each part after the header with the session id', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<CliMessage>('-s------a------b------h------c------r------(t|)', m).pipe(modelParts(context))).toBe('01------(23)---4------(5678)-9------A------(B|)', {
        0: { type: 'stream-start', warnings: [] },
        1: { type: 'response-metadata', id: 's1', modelId: 'fake' },
        2: { type: 'text-start', id: 'text-0', ...meta() },
        3: { type: 'text-delta', id: 'text-0', delta: 'Hel' },
        4: { type: 'text-delta', id: 'text-0', delta: 'lo' },
        5: { type: 'text-end', id: 'text-0', ...meta() },
        6: { type: 'reasoning-start', id: 'reasoning-1', ...meta() },
        7: { type: 'reasoning-delta', id: 'reasoning-1', delta: 'hmm' },
        8: { type: 'reasoning-end', id: 'reasoning-1', ...meta() },
        9: { type: 'tool-call', toolCallId: 't1', toolName: 'bash', input: '{"command":"ls"}', providerExecuted: true, dynamic: true, ...meta({ kind: 'execute' }) },
        A: { type: 'tool-result', toolCallId: 't1', toolName: 'bash', result: 'a\nb', dynamic: true, ...meta() },
        B: { type: 'finish', usage: { inputTokens: { total: 125, noCache: 100, cacheRead: 20, cacheWrite: 5 }, outputTokens: { total: 7, text: undefined, reasoning: undefined }, raw: usage }, finishReason: { unified: 'stop', raw: 'stop' }, ...meta({ stopReason: 'end_turn' }) },
      });
    });
  });

  it('a failure is an error part (an APICallError with the status and the verdict of isRetryableFailure) and a finish', async () => {
    const parts = await lastValueFrom(from<CliMessage[]>([m.s, m.a, m.x]).pipe(modelParts(context), toArray()));
    expect(parts.map((part) => part.type)).toEqual(['stream-start', 'response-metadata', 'text-start', 'text-delta', 'text-end', 'error', 'finish']);
    const error = parts.find((part) => part.type === 'error');
    expect(APICallError.isInstance(error?.type === 'error' ? error.error : undefined)).toBe(true);
    expect(error).toMatchObject({ error: { statusCode: 429, isRetryable: true, data: failed } });
    expect(parts.at(-1)).toMatchObject({ type: 'finish', finishReason: { unified: 'error', raw: 'agent-error' } });
  });

  it('text the agent withdrew ends its block, saying what was withdrawn; a typed answer is held and given once, as JSON', async () => {
    const withdrawn = await lastValueFrom(from<CliMessage[]>([m.s, m.a, m.b, m.w, m.t]).pipe(modelParts(context), toArray()));
    expect(withdrawn.find((part) => part.type === 'text-end')).toMatchObject(meta({ withdrawn: 'lo' }));
    const typed = await lastValueFrom(from<CliMessage[]>([m.s, m.a, { ...m.t, output: { n: 1 } }]).pipe(modelParts({ ...context, json: true }), toArray()));
    expect(typed.filter((part) => part.type === 'text-delta')).toEqual([{ type: 'text-delta', id: 'text-json', delta: '{"n":1}' }]);
  });

  it('an empty source is an error part and a finish; a source error is the stream’s error; raw parts on request', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<CliMessage>('--|').pipe(modelParts(context))).toBe('0-(12|)', {
        0: { type: 'stream-start', warnings: [] },
        1: { type: 'error', error: new Error('the pi run ended without a terminal message') },
        2: { type: 'finish', usage: { inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: undefined, text: undefined, reasoning: undefined } }, finishReason: { unified: 'error', raw: undefined } },
      });
      expectObservable(cold<CliMessage>('-#', {}, new Error('boom')).pipe(modelParts(context))).toBe('0#', { 0: { type: 'stream-start', warnings: [] } }, new Error('boom'));
      expectObservable(cold<CliMessage>('-s---|', m).pipe(modelParts({ ...context, raw: true }))).toBe('0(12)(34|)', {
        0: { type: 'stream-start', warnings: [] },
        1: { type: 'raw', rawValue: m.s },
        2: { type: 'response-metadata', id: 's1', modelId: 'fake' },
        3: { type: 'error', error: new Error('the pi run ended without a terminal message') },
        4: { type: 'finish', usage: { inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: undefined, text: undefined, reasoning: undefined } }, finishReason: { unified: 'error', raw: undefined } },
      });
    });
  });

  it('unsubscribing early unsubscribes the run; two subscriptions share nothing', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold<CliMessage>('-s-a-b-(t|)', m);
      expectObservable(source.pipe(modelParts(context)), '^-!').toBe('01', { 0: { type: 'stream-start', warnings: [] }, 1: { type: 'response-metadata', id: 's1', modelId: 'fake' } });
      expectSubscriptions(source.subscriptions).toBe(['^-!']);
    });
    const operator = modelParts(context);
    const first = new Subject<CliMessage>();
    const seen: string[][] = [[], []];
    first.pipe(operator).subscribe((part) => seen[0]?.push(part.type));
    from<CliMessage[]>([m.s, m.a]).pipe(operator).subscribe((part) => seen[1]?.push(part.type));
    first.next(m.b);
    // The second run's open text block is its own: the first starts its block anew.
    expect(seen[0]).toEqual(['stream-start', 'text-start', 'text-delta']);
    expect(seen[1]).toEqual(['stream-start', 'response-metadata', 'text-start', 'text-delta', 'text-end', 'error', 'finish']);
  });
});

describe('toUIMessageChunks', () => {
  it('maps a run to the chunks of one assistant message: text, reasoning, tools (input, partial and whole output), and its metadata', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<SessionMessage>('----s-a---h-----c-u-r-(t|)', m).pipe(toUIMessageChunks({ messageId: 'm1' }))).toBe('(01)2-(34)(5678)9-A-B-(CD|)', {
        0: { type: 'start', messageId: 'm1' },
        1: { type: 'start-step' },
        2: { type: 'message-metadata', messageMetadata: { agentRx: { sessionId: 's1' } } },
        3: { type: 'text-start', id: 'text-0' },
        4: { type: 'text-delta', id: 'text-0', delta: 'Hel' },
        5: { type: 'text-end', id: 'text-0' },
        6: { type: 'reasoning-start', id: 'reasoning-1' },
        7: { type: 'reasoning-delta', id: 'reasoning-1', delta: 'hmm' },
        8: { type: 'reasoning-end', id: 'reasoning-1' },
        9: { type: 'tool-input-available', toolCallId: 't1', toolName: 'bash', input: { command: 'ls' }, providerExecuted: true, dynamic: true, title: 'ls' },
        A: { type: 'tool-output-available', toolCallId: 't1', output: 'a', providerExecuted: true, dynamic: true, preliminary: true },
        B: { type: 'tool-output-available', toolCallId: 't1', output: 'a\nb', providerExecuted: true, dynamic: true },
        C: { type: 'finish-step' },
        D: { type: 'finish', finishReason: 'stop', messageMetadata: { agentRx: { sessionId: 's1', stopReason: 'end_turn', usage } } },
      });
    });
  });

  it('a failure is an error chunk and a finish; a failed tool is its output error; reasoning can be left out', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<SessionMessage>('-h----e----(x|)', m).pipe(toUIMessageChunks({ sendReasoning: false }))).toBe('(01)--2----(345|)', {
        0: { type: 'start' },
        1: { type: 'start-step' },
        2: { type: 'tool-output-error', toolCallId: 't1', errorText: 'no such file', providerExecuted: true, dynamic: true },
        3: { type: 'error', errorText: failed.message },
        4: { type: 'finish-step' },
        5: { type: 'finish', finishReason: 'error', messageMetadata: { agentRx: { failure: { reason: 'agent-error', message: failed.message } } } },
      });
    });
  });

  it('ends at a session turn’s end; empty, error, early unsubscribe; a throwing errorText goes to the error channel', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const turn = cold<SessionMessage>('----a---c-a', { a: m.a, c: { type: 'turn.completed', turn: 1, stopReason: 'end_turn' } });
      expectObservable(turn.pipe(toUIMessageChunks())).toBe('(01)(23)(456|)', {
        0: { type: 'start' },
        1: { type: 'start-step' },
        2: { type: 'text-start', id: 'text-0' },
        3: { type: 'text-delta', id: 'text-0', delta: 'Hel' },
        4: { type: 'text-end', id: 'text-0' },
        5: { type: 'finish-step' },
        6: { type: 'finish', finishReason: 'stop', messageMetadata: { agentRx: { stopReason: 'end_turn' } } },
      });
      expectObservable(cold<SessionMessage>('----|').pipe(toUIMessageChunks())).toBe('(01)(234|)', {
        0: { type: 'start' },
        1: { type: 'start-step' },
        2: { type: 'error', errorText: 'the run ended without saying how' },
        3: { type: 'finish-step' },
        4: { type: 'finish', finishReason: 'error' },
      });
      expectObservable(cold<SessionMessage>('----#').pipe(toUIMessageChunks())).toBe('(01)#', { 0: { type: 'start' }, 1: { type: 'start-step' } });
      const source = cold<SessionMessage>('----a---b---(t|)', m);
      expectObservable(source.pipe(toUIMessageChunks()), '^-----!').toBe('(01)(23)', { 0: { type: 'start' }, 1: { type: 'start-step' }, 2: { type: 'text-start', id: 'text-0' }, 3: { type: 'text-delta', id: 'text-0', delta: 'Hel' } });
      expectSubscriptions(source.subscriptions).toBe('^-----!');
      const thrown = new Error('no text for you');
      expectObservable(
        cold<SessionMessage>('----x', m).pipe(
          toUIMessageChunks({
            errorText: () => {
              throw thrown;
            },
          }),
        ),
      ).toBe('(01)#', { 0: { type: 'start' }, 1: { type: 'start-step' } }, thrown);
    });
  });

  it('read back by the AI SDK’s own reader: one assistant message with its text, its tool and the session in its metadata; two reads share nothing', async () => {
    const run$ = from<SessionMessage[]>([m.s, m.a, m.b, m.c, m.r, m.t]);
    const read = async (): Promise<UIMessage | undefined> => {
      let last: UIMessage | undefined;
      for await (const message of readUIMessageStream({ stream: uiMessageStream(run$) })) last = message;
      return last;
    };
    const [one, two] = await Promise.all([read(), read()]);
    expect(one?.role).toBe('assistant');
    expect(one?.metadata).toEqual({ agentRx: { sessionId: 's1', stopReason: 'end_turn', usage } });
    expect(one?.parts.filter((part) => part.type === 'text')).toEqual([expect.objectContaining({ text: 'Hello', state: 'done' })]);
    expect(one?.parts.find((part) => part.type === 'dynamic-tool')).toMatchObject({ toolCallId: 't1', toolName: 'bash', state: 'output-available', input: { command: 'ls' }, output: 'a\nb' });
    expect(two?.parts).toEqual(one?.parts);
  });

  it('cancelling the stream unsubscribes the run', async () => {
    let unsubscribed = false;
    const stream = uiMessageStream(
      new Observable<SessionMessage>(() => () => {
        unsubscribed = true;
      }),
    );
    const reader = stream.getReader();
    await reader.read();
    await reader.cancel();
    expect(unsubscribed).toBe(true);
  });
});

describe('chatRequestTurn', () => {
  const user = (text: string, extra: UIMessage['parts'] = []): UIMessage => ({ id: text, role: 'user', parts: [{ type: 'text', text }, ...extra] });

  it('the new turn, and the session of the last answer that completed: only what came after it is sent', () => {
    const answer: UIMessage = { id: 'a1', role: 'assistant', metadata: { agentRx: { sessionId: 's1', stopReason: 'end_turn' } }, parts: [{ type: 'text', text: 'It is 4.' }] };
    expect(chatRequestTurn([user('what is 2+2?'), answer, user('and times 3?')])).toEqual({ prompt: 'and times 3?', sessionId: 's1', history: 'resumed', system: undefined });
    // An answer that was stopped (no stop reason) may have left no session: it goes as text, in the last complete answer's session.
    const stopped: UIMessage = { id: 'a2', role: 'assistant', metadata: { agentRx: { sessionId: 's2' } }, parts: [{ type: 'text', text: 'Let me th' }] };
    expect(chatRequestTurn([user('what is 2+2?'), answer, user('and times 3?'), stopped, user('well?')])).toEqual({
      prompt: 'Said since your last complete answer:\n\nUser: and times 3?\n\nAssistant: Let me th\n\nThe new message:\n\nwell?',
      sessionId: 's1',
      history: 'resumed',
      system: undefined,
    });
    expect(chatRequestTurn([user('hello')])).toEqual({ prompt: 'hello', sessionId: undefined, history: 'none', system: undefined });
  });

  it('without a session, the earlier turns as text; an attached image as an image; a remote file refused', () => {
    const answer: UIMessage = { id: 'a1', role: 'assistant', parts: [{ type: 'text', text: 'It is 4.' }] };
    const turn = chatRequestTurn([user('what is 2+2?'), answer, user('and times 3?', [{ type: 'file', mediaType: 'image/png', url: 'data:image/png;base64,iVBORw0KGgo=' }])]);
    expect(turn.history).toBe('text');
    expect(turn.prompt).toEqual(['The conversation so far:\n\nUser: what is 2+2?\n\nAssistant: It is 4.\n\nThe new message:\n\nand times 3?', { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' }]);
    expect(() => chatRequestTurn([user('look', [{ type: 'file', mediaType: 'image/png', url: 'https://example.com/a.png' }])])).toThrow(TypeError);
    expect(() => chatRequestTurn([answer])).toThrow(/user message/);
  });
});
