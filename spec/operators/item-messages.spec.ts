import { describe, expect, it } from '@jest/globals';
import type { CliMessage, MessageMapping } from '../../lib/index.js';
import { emitItemMessages, type ContentItem } from '../../lib/operators/item-messages.js';
import { ev, text, withdraw } from '../helpers/items.js';

// A toy dialect: every event is two tool calls, numbered in its state; a stderr line that says
// "retry" is an agent.retry.
const plain: MessageMapping<{ calls: number }> = {
  name: 'toy',
  createState: () => ({ calls: 0 }),
  map: (state, event) => [1, 2].map((): CliMessage => ({ type: 'tool.call', toolCallId: String((state.calls += 1)), name: event.type, input: null })),
  conclude: () => ({ kind: 'inconclusive', message: 'nothing' }),
  lastError: () => undefined,
  sessionId: () => undefined,
};
const toy: MessageMapping<{ calls: number }> = {
  ...plain,
  mapStderrLine: (_state, line) => (line === 'retry' ? [{ type: 'agent.retry', reason: line }] : []),
};

function messagesOf(items: readonly ContentItem[], dialect: MessageMapping<{ calls: number }> = toy): CliMessage[] {
  const state = dialect.createState();
  const messages: CliMessage[] = [];
  for (const item of items) emitItemMessages(dialect, state, item, (message) => messages.push(message));
  return messages;
}

describe('emitItemMessages', () => {
  it("gives an event's messages from the dialect, in order, with the state it keeps", () => {
    expect(messagesOf([ev('read'), ev('write')])).toEqual([
      { type: 'tool.call', toolCallId: '1', name: 'read', input: null },
      { type: 'tool.call', toolCallId: '2', name: 'read', input: null },
      { type: 'tool.call', toolCallId: '3', name: 'write', input: null },
      { type: 'tool.call', toolCallId: '4', name: 'write', input: null },
    ]);
  });

  it('gives text as assistant or assistant.thought, and withdrawn answer text as assistant.withdrawn', () => {
    expect(messagesOf([text('Hi'), text('hmm', 'thought'), withdraw('Hi'), withdraw('hmm', 'thought')])).toEqual([
      { type: 'assistant', text: 'Hi' },
      { type: 'assistant.thought', text: 'hmm' },
      { type: 'assistant.withdrawn', text: 'Hi' },
    ]);
  });

  it("gives stderr lines to the dialect's mapStderrLine, and nothing without one", () => {
    const lines: ContentItem[] = [
      { kind: 'stderr-line', text: 'retry' },
      { kind: 'stderr-line', text: 'noise' },
    ];
    expect(messagesOf(lines)).toEqual([{ type: 'agent.retry', reason: 'retry' }]);
    expect(messagesOf(lines, plain)).toEqual([]);
  });

  it('gives nothing for an invalid line', () => {
    expect(messagesOf([{ kind: 'invalid', lineNumber: 1, reason: 'not-json', detail: 'x', text: 'x', bytes: 1 }])).toEqual([]);
  });

  it('lets what the dialect throws through to the caller, before anything of that item is emitted', () => {
    const broken: MessageMapping<{ calls: number }> = {
      ...toy,
      map: () => {
        throw new Error('dialect bug');
      },
    };
    const messages: CliMessage[] = [];
    expect(() => {
      emitItemMessages(broken, broken.createState(), ev('read'), (message) => messages.push(message));
    }).toThrow('dialect bug');
    expect(messages).toEqual([]);
  });
});
