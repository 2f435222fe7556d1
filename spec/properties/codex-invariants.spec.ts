import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { from, lastValueFrom, toArray } from 'rxjs';
import { CliMessageSchema, isTerminal, type CliMessage, type ProcessItem } from '../../lib/index.js';
import { codexOutputToMessages } from '../../lib/dialects.js';
import { exit } from '../helpers/items.js';

/**
 * ARCHITECTURE §3's invariants over random Codex runs: random turns of whole messages, reasoning,
 * commands (completed, failed, or cut off), warnings and retry notices, ended by `turn.completed`,
 * `turn.failed` or nothing, cut anywhere, with garbage lines mixed in and a random exit. Whatever
 * comes, the stream never errors, ends with exactly one valid terminal message, emits each finished
 * message's text once (and nothing of an unfinished one), and pairs every tool result with its call.
 */

const text = fc.string({ unit: fc.constantFrom('a', 'b', ' ', '\n', 'é', '🚀', '"', '\\', '\u2028'), maxLength: 8 });

const step = fc.oneof(
  fc.record({ kind: fc.constant('message' as const), text }),
  fc.record({ kind: fc.constant('reasoning' as const), text }),
  fc.record({ kind: fc.constant('command' as const), exitCode: fc.constantFrom(0, 0, 1, 2), finished: fc.boolean(), output: text }),
  fc.record({ kind: fc.constant('warning' as const), text }),
  fc.record({ kind: fc.constant('retry' as const), attempt: fc.nat(5), waiting: fc.boolean() }),
);

const runShape = fc.record({
  steps: fc.array(step, { maxLength: 8 }),
  end: fc.constantFrom<'completed' | 'failed' | 'none'>('completed', 'completed', 'failed', 'none'),
  cutAt: fc.option(fc.nat(20), { nil: undefined }),
  garbage: fc.array(fc.tuple(fc.nat(20), fc.constantFrom('not json', '{"no":"type"}', '[1]', '{"type":"item.completed","item":{"type":42}}')), { maxLength: 2 }),
  ending: fc.constantFrom<'ok' | 'code1' | 'sigterm'>('ok', 'ok', 'code1', 'sigterm'),
});
type RunShape = typeof runShape extends fc.Arbitrary<infer T> ? T : never;

interface Expected {
  answer: string;
  thoughts: string;
  warnings: string[];
}

function build(shape: RunShape): { items: ProcessItem[]; expected: Expected } {
  const events: object[] = [{ type: 'thread.started', thread_id: 'T' }, { type: 'turn.started' }];
  const said: { at: number; apply: (expected: Expected) => void }[] = [];
  shape.steps.forEach((step, index) => {
    const id = `item_${String(index)}`;
    switch (step.kind) {
      case 'message':
        said.push({ at: events.length, apply: (expected) => (expected.answer += step.text) });
        events.push({ type: 'item.completed', item: { id, type: 'agent_message', text: step.text } });
        return;
      case 'reasoning':
        // An empty summary is no thought.
        if (step.text !== '') said.push({ at: events.length, apply: (expected) => (expected.thoughts += expected.thoughts === '' ? step.text : `\n\n${step.text}`) });
        events.push({ type: 'item.completed', item: { id, type: 'reasoning', text: step.text } });
        return;
      case 'command': {
        const command = { id, type: 'command_execution', command: 'bash -lc true' };
        events.push({ type: 'item.started', item: { ...command, aggregated_output: '', exit_code: null, status: 'in_progress' } });
        if (step.finished) {
          const status = step.exitCode === 0 ? 'completed' : 'failed';
          events.push({ type: 'item.completed', item: { ...command, aggregated_output: step.output, exit_code: step.exitCode, status } });
        }
        return;
      }
      case 'warning':
        said.push({ at: events.length, apply: (expected) => expected.warnings.push(step.text) });
        events.push({ type: 'item.completed', item: { id, type: 'error', message: step.text } });
        return;
      case 'retry':
        events.push({ type: 'error', message: step.waiting ? 'Reconnecting... waiting for network (down)' : `Reconnecting... ${String(step.attempt)}/5 (boom)` });
        return;
    }
  });
  if (shape.end === 'completed') events.push({ type: 'turn.completed', usage: { input_tokens: 3, cached_input_tokens: 1, output_tokens: 2 } });
  if (shape.end === 'failed') events.push({ type: 'error', message: 'boom' }, { type: 'turn.failed', error: { message: 'boom' } });
  const cut = Math.min(events.length, shape.cutAt ?? events.length);
  const expected: Expected = { answer: '', thoughts: '', warnings: [] };
  for (const { at, apply } of said) if (at < cut) apply(expected);
  const lines = events.slice(0, cut).map((event) => JSON.stringify(event));
  for (const [at, garbage] of shape.garbage) lines.splice(Math.min(at, lines.length), 0, garbage);
  const end = shape.ending === 'code1' ? exit({ exitCode: 1, stderr: 'Error: boom\n' }) : shape.ending === 'sigterm' ? exit({ exitCode: null, signal: 'SIGTERM' }) : exit();
  return { items: [...lines.map((line): ProcessItem => ({ kind: 'line', text: line })), end], expected };
}

describe('Codex pipeline invariants (property-based)', () => {
  it('one valid terminal, last; each finished text once; thoughts whole; warnings kept; tools paired; never an error', async () => {
    await fc.assert(
      fc.asyncProperty(runShape, async (shape) => {
        const { items, expected } = build(shape);
        const messages: CliMessage[] = await lastValueFrom(from(items).pipe(codexOutputToMessages(), toArray()));
        for (const message of messages) expect(CliMessageSchema.safeParse(message).success).toBe(true);
        expect(messages.filter(isTerminal)).toHaveLength(1);
        expect(isTerminal(messages.at(-1) as CliMessage)).toBe(true);
        expect(messages.filter((message) => message.type === 'assistant.withdrawn')).toEqual([]);
        expect(messages.flatMap((message) => (message.type === 'assistant' ? [message.text] : [])).join('')).toBe(expected.answer);
        const thoughts = messages.flatMap((message) => (message.type === 'assistant.thought' ? [message.text] : []));
        expect(thoughts.join('\n\n')).toBe(expected.thoughts);
        expect(messages.flatMap((message) => (message.type === 'agent.warning' ? [message.message] : []))).toEqual(expected.warnings);
        const calls = new Set<string>();
        for (const message of messages) {
          if (message.type === 'tool.call') {
            expect(calls.has(message.toolCallId)).toBe(false);
            calls.add(message.toolCallId);
          }
          if (message.type === 'tool.completed' || message.type === 'tool.failed') expect(calls.has(message.toolCallId)).toBe(true);
        }
        const terminal = messages.at(-1);
        // A completion needs everything to have gone right: turn.completed seen, exit 0, no signal.
        if (terminal?.type === 'terminal.completed') {
          expect(shape.ending).toBe('ok');
          expect(shape.end).toBe('completed');
        }
      }),
      { numRuns: 300 },
    );
  });
});
