import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { from, lastValueFrom, toArray } from 'rxjs';
import { CliMessageSchema, isTerminal, type CliMessage, type ProcessItem } from '../../lib/index.js';
import { geminiOutputToMessages } from '../../lib/dialects.js';
import { exit } from '../helpers/items.js';

/**
 * ARCHITECTURE §3's invariants over random Gemini CLI runs: random assistant deltas, tool calls
 * (succeeded, failed, or cut off), warnings and errors, retry notices and other lines on stderr,
 * ended by a success result, an error result, a cancellation or nothing, cut anywhere, with garbage
 * lines mixed in and a random exit. Whatever comes, the stream never errors, ends with exactly one
 * valid terminal message, emits each delta once, pairs every tool result with its call, and
 * completes only when a success result came and the process exited cleanly.
 */

const text = fc.string({ unit: fc.constantFrom('a', 'b', ' ', '\n', 'é', '🚀', '"', '\\', '\u2028'), maxLength: 8 });

const step = fc.oneof(
  fc.record({ kind: fc.constant('delta' as const), text }),
  fc.record({ kind: fc.constant('tool' as const), status: fc.constantFrom('success', 'success', 'error'), finished: fc.boolean(), output: fc.option(text, { nil: undefined }) }),
  fc.record({ kind: fc.constant('warning' as const), text }),
  fc.record({ kind: fc.constant('error' as const), text }),
  fc.record({ kind: fc.constant('user' as const), text }),
);

const STDERR_LINES = {
  retry500: 'Attempt 1 failed with status 500. Retrying with backoff... _ApiError: {"error":{"code":500,"message":"fake internal server error","status":"INTERNAL"}}',
  retryFetch: 'Attempt 2 failed. Retrying with backoff... Error: exception TypeError: fetch failed sending request',
  last: 'Attempt 3 failed: {"error":{"code":500,"message":"fake internal server error","status":"INTERNAL"}}. Max attempts reached',
  trace: '    at async retryWithBackoff (file://$LAB/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:308039:23)',
  routine: 'Ripgrep is not available. Falling back to GrepTool.',
} as const;
type StderrKind = keyof typeof STDERR_LINES;
const RETRIES: ReadonlySet<StderrKind> = new Set(['retry500', 'retryFetch']);

const runShape = fc.record({
  steps: fc.array(step, { maxLength: 8 }),
  end: fc.constantFrom<'success' | 'api-error' | 'cancelled' | 'none'>('success', 'success', 'api-error', 'cancelled', 'none'),
  cutAt: fc.option(fc.nat(20), { nil: undefined }),
  garbage: fc.array(fc.tuple(fc.nat(20), fc.constantFrom('not json', '{"no":"type"}', '[1]', '{"type":"tool_use","tool_id":7}', '{"type":"result"}')), { maxLength: 2 }),
  stderr: fc.array(fc.tuple(fc.nat(20), fc.constantFrom<StderrKind>(...(Object.keys(STDERR_LINES) as StderrKind[]))), { maxLength: 5 }),
  ending: fc.constantFrom<'ok' | 'code1' | 'code244' | 'code130' | 'sigterm'>('ok', 'ok', 'code1', 'code244', 'code130', 'sigterm'),
});
type RunShape = typeof runShape extends fc.Arbitrary<infer T> ? T : never;

interface Expected {
  answer: string;
  warnings: string[];
}

function build(shape: RunShape): { items: ProcessItem[]; expected: Expected; retries: number; resultAt: number | null } {
  const events: object[] = [{ type: 'init', timestamp: 't', session_id: 'S', model: 'gemini-2.5-pro' }];
  const said: { at: number; apply: (expected: Expected) => void }[] = [];
  shape.steps.forEach((step, index) => {
    switch (step.kind) {
      case 'delta':
        said.push({ at: events.length, apply: (expected) => (expected.answer += step.text) });
        events.push({ type: 'message', timestamp: 't', role: 'assistant', content: step.text, delta: true });
        return;
      case 'user':
        events.push({ type: 'message', timestamp: 't', role: 'user', content: step.text });
        return;
      case 'tool': {
        const id = `run_shell_command__run_shell_command_${String(index)}`;
        events.push({ type: 'tool_use', timestamp: 't', tool_name: 'run_shell_command', tool_id: id, parameters: { command: 'true' } });
        if (step.finished) {
          const error = step.status === 'error' ? { error: { type: 'tool_error', message: 'failed' } } : {};
          events.push({ type: 'tool_result', timestamp: 't', tool_id: id, status: step.status, ...(step.output === undefined ? {} : { output: step.output }), ...error });
        }
        return;
      }
      case 'warning':
        said.push({ at: events.length, apply: (expected) => expected.warnings.push(step.text) });
        events.push({ type: 'error', timestamp: 't', severity: 'warning', message: step.text });
        return;
      case 'error':
        events.push({ type: 'error', timestamp: 't', severity: 'error', message: step.text });
        return;
    }
  });
  let resultAt: number | null = null;
  const zero = { total_tokens: 0, input_tokens: 0, output_tokens: 0, cached: 0, input: 0, duration_ms: 0, tool_calls: 0 };
  if (shape.end !== 'none') resultAt = events.length;
  if (shape.end === 'success') events.push({ type: 'result', timestamp: 't', status: 'success', stats: { ...zero, total_tokens: 5, input_tokens: 3, cached: 1, input: 2, output_tokens: 2 } });
  if (shape.end === 'api-error') {
    const message = '[API Error: {"error":{"code":500,"message":"fake internal server error","status":"INTERNAL"}}]';
    events.push({ type: 'result', timestamp: 't', status: 'error', error: { type: 'unknown', message }, stats: zero });
  }
  if (shape.end === 'cancelled') events.push({ type: 'result', timestamp: 't', status: 'error', error: { type: 'FatalCancellationError', message: 'Operation cancelled.' }, stats: zero });
  const cut = Math.min(events.length, shape.cutAt ?? events.length);
  if (resultAt !== null && resultAt >= cut) resultAt = null;
  const expected: Expected = { answer: '', warnings: [] };
  for (const { at, apply } of said) if (at < cut) apply(expected);
  const items: ProcessItem[] = events.slice(0, cut).map((event): ProcessItem => ({ kind: 'line', text: JSON.stringify(event) }));
  for (const [at, garbage] of shape.garbage) items.splice(Math.min(at, items.length), 0, { kind: 'line', text: garbage });
  // Stderr lines come among the stdout lines, wherever the pipes delivered them.
  for (const [at, kind] of shape.stderr) items.splice(Math.min(at, items.length), 0, { kind: 'stderr-line', text: STDERR_LINES[kind] });
  const stderr = shape.stderr.map(([, kind]) => `${STDERR_LINES[kind]}\n`).join('');
  const endings = {
    ok: exit({ stderr }),
    code1: exit({ exitCode: 1, stderr: `${stderr}Error: boom\n` }),
    code244: exit({ exitCode: 244, stderr }),
    code130: exit({ exitCode: 130, stderr }),
    sigterm: exit({ exitCode: null, signal: 'SIGTERM', stderr }),
  };
  items.push(endings[shape.ending]);
  return { items, expected, retries: shape.stderr.filter(([, kind]) => RETRIES.has(kind)).length, resultAt };
}

describe('Gemini CLI pipeline invariants (property-based)', () => {
  it('one valid terminal, last; each delta once; warnings and retries kept; tools paired; completion only with a success result and a clean exit; never an error', async () => {
    await fc.assert(
      fc.asyncProperty(runShape, async (shape) => {
        const { items, expected, retries, resultAt } = build(shape);
        const messages: CliMessage[] = await lastValueFrom(from(items).pipe(geminiOutputToMessages(), toArray()));
        for (const message of messages) expect(CliMessageSchema.safeParse(message).success).toBe(true);
        expect(messages.filter(isTerminal)).toHaveLength(1);
        expect(isTerminal(messages.at(-1) as CliMessage)).toBe(true);
        expect(messages.filter((message) => message.type === 'assistant.withdrawn' || message.type === 'assistant.thought')).toEqual([]);
        expect(messages.flatMap((message) => (message.type === 'assistant' ? [message.text] : [])).join('')).toBe(expected.answer);
        expect(messages.flatMap((message) => (message.type === 'agent.warning' ? [message.message] : []))).toEqual(expected.warnings);
        expect(messages.filter((message) => message.type === 'agent.retry')).toHaveLength(retries);
        expect(messages.filter((message) => message.type === 'session.started' || message.type === 'session.resumed').length).toBeLessThanOrEqual(1);

        const calls = new Set<string>();
        const results = new Set<string>();
        for (const message of messages) {
          if (message.type === 'tool.call') {
            expect(calls.has(message.toolCallId)).toBe(false);
            calls.add(message.toolCallId);
          }
          if (message.type === 'tool.completed' || message.type === 'tool.failed') {
            expect(calls.has(message.toolCallId)).toBe(true);
            expect(results.has(message.toolCallId)).toBe(false);
            results.add(message.toolCallId);
          }
        }

        const terminal = messages.at(-1);
        const result = resultAt === null ? 'none' : shape.end;
        // A completion needs everything to have gone right: a success result seen, exit 0, no signal.
        if (terminal?.type === 'terminal.completed') {
          expect(shape.ending).toBe('ok');
          expect(result).toBe('success');
          expect(terminal).toMatchObject({ sessionId: 'S', usage: { inputTokens: 2, cacheReadTokens: 1, outputTokens: 2, totalTokens: 5 } });
        }
        if (result === 'success' && shape.ending === 'ok') expect(terminal?.type).toBe('terminal.completed');
        // Without a result, a run never completes: exit 0 or not.
        if (result === 'none') expect(terminal).toMatchObject({ type: 'terminal.failed' });
        if (terminal?.type === 'terminal.failed') {
          if (shape.ending === 'sigterm') expect(terminal).toMatchObject({ reason: 'exit', signal: 'SIGTERM' });
          // An error result explains any exit code: agent-error or aborted, never an exit failure.
          if (result === 'api-error' && shape.ending !== 'sigterm') expect(terminal).toMatchObject({ reason: 'agent-error', httpStatus: 500 });
          if (result === 'cancelled' && shape.ending !== 'sigterm') expect(terminal).toMatchObject({ reason: 'aborted' });
        }
      }),
      { numRuns: 300 },
    );
  });
});
