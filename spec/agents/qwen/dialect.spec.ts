import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { from, lastValueFrom, toArray } from 'rxjs';
import * as z from 'zod';
import { checkRunOutput, type CliMessage, type ProcessItem } from '../../../lib/index.js';
import { qwenOutputToMessages, qwenStderrLine } from '../../../lib/agents/qwen/dialect.js';
import { exit, scheduler } from '../../helpers/items.js';

/** Qwen Code's dialect on its recorded stdout (spec/fixtures/qwen, Qwen Code 0.24.4 against the fake model server). */

function recording(name: string): ProcessItem[] {
  const text = readFileSync(fileURLToPath(new URL(`../../fixtures/qwen/${name}.jsonl`, import.meta.url)), 'utf8');
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line): ProcessItem => ({ kind: 'line', text: line }));
}

function replay(name: string, exitCode = 0, resuming = false): Promise<CliMessage[]> {
  return lastValueFrom(from([...recording(name), exit({ exitCode })]).pipe(qwenOutputToMessages({ resuming }), toArray()));
}

const answer = (messages: readonly CliMessage[]): string => messages.map((message) => (message.type === 'assistant' ? message.text : '')).join('');
const types = (messages: readonly CliMessage[]): string[] => messages.map((message) => message.type).filter((type, i, all) => type !== all[i - 1]);

describe('Qwen Code dialect (qwenOutputToMessages)', () => {
  it('a text run: the session, the streamed deltas once (no message ids to key them on), the usage', async () => {
    const messages = await replay('text-partial');
    expect(types(messages)).toEqual(['session.started', 'assistant', 'terminal.completed']);
    expect(answer(messages)).toBe('Hello from the fake model. Line one.\nLine two: café ✓ done.');
    expect(messages.at(-1)).toEqual({
      type: 'terminal.completed',
      stopReason: 'end_turn',
      usage: { inputTokens: 100, outputTokens: 7, cacheReadTokens: 0, cacheWriteTokens: 0, totalTokens: 107 },
      sessionId: (messages[0] as { sessionId: string }).sessionId,
    });
  });

  it('thinking and text of one response (both blocks at index 0, the second under a new id): the thought whole, the answer once', async () => {
    const messages = await replay('thinking-partial');
    expect(messages.filter((message) => message.type === 'assistant.thought')).toEqual([{ type: 'assistant.thought', text: 'The user wants a short answer. I will think briefly.' }]);
    expect(answer(messages)).toBe('Here is the answer after thinking.');
    expect(types(messages)).toEqual(['session.started', 'assistant', 'assistant.thought', 'terminal.completed']);
  });

  it('a shell call: tool.call with its command, kind and summary, its result, the answer around it once', async () => {
    const messages = await replay('tool-partial');
    const tools = messages.filter((message) => message.type.startsWith('tool.'));
    expect(tools).toEqual([
      { type: 'tool.call', toolCallId: 'call_bash_tool_1', name: 'run_shell_command', input: { command: 'echo hello', description: 'Run echo hello' }, kind: 'execute', summary: 'echo hello' },
      { type: 'tool.completed', toolCallId: 'call_bash_tool_1', name: 'run_shell_command', output: 'hello' },
    ]);
    // Recorded before the fake server read Qwen Code's wrapper of the command's output.
    expect(answer(messages)).toBe('Let me run a command.The command printed "Command: echo hello\\nDirectory: (root)\\nOutput: hello\\nError: (none)\\nExit Code: 0\\nSignal: (none)\\nProcess Group PGID: (none)". Done.');
    expect(messages.at(-1)?.type).toBe('terminal.completed');
  });

  it('a failing command is tool.failed and the run goes on; a tool Qwen Code declines too', async () => {
    const failed = await replay('tool-fail');
    expect(failed.find((message) => message.type === 'tool.failed')).toMatchObject({ toolCallId: 'call_fail_tool_1', output: expect.stringContaining('Exit Code: 2') });
    expect(failed.at(-1)?.type).toBe('terminal.completed');
    const declined = await replay('tool-refused-default');
    expect(declined.find((message) => message.type === 'tool.failed')).toMatchObject({ output: expect.stringContaining('permission was declined') });
    expect(declined.at(-1)?.type).toBe('terminal.completed');
  });

  it('an API error (401): terminal.failed agent-error with its HTTP status; the error text is not part of the answer', async () => {
    const messages = await replay('err401', 1);
    expect(messages.filter((message) => message.type === 'assistant')).toEqual([]);
    expect(messages.at(-1)).toMatchObject({ type: 'terminal.failed', reason: 'agent-error', httpStatus: 401, exitCode: 1, message: 'Qwen Code reported an error: [API Error: 401 fake invalid api key]' });
  });

  it('its stream retries are agent.retry; a streamed API error (429) stays out of the answer', async () => {
    const messages = await replay('err429-maxretries1', 1);
    expect(messages.filter((message) => message.type === 'agent.retry')).toEqual([
      { type: 'agent.retry', attempt: 1, maxAttempts: 1, delayMs: 200, reason: 'Qwen Code tries the model stream again (retry)' },
      { type: 'agent.retry', reason: 'Qwen Code tries the model stream again (retry)' },
    ]);
    expect(answer(messages)).toBe('');
    expect(messages.at(-1)).toMatchObject({ type: 'terminal.failed', reason: 'agent-error', httpStatus: 429 });
  });

  it('a run stopped by SIGTERM (exit 130, no result line) fails: the partial answer stays as it was streamed', async () => {
    const messages = await replay('cancel-sigterm', 130);
    expect(answer(messages)).toBe('This stream never ends...');
    expect(messages.at(-1)).toMatchObject({ type: 'terminal.failed', reason: 'exit', exitCode: 130 });
    expect((messages.at(-1) as { message: string }).message).toContain('Qwen Code exited with code 130');
  });

  it('--json-schema: the refused call is tool.failed, the valid one ends the run; its structured_result is terminal.completed.output', async () => {
    const messages = await replay('json-schema-retry-ok');
    expect(messages.filter((message) => message.type.startsWith('tool.'))).toEqual([
      { type: 'tool.call', toolCallId: 'call_1', name: 'structured_output', input: { answer: 'x' }, kind: 'other' },
      { type: 'tool.failed', toolCallId: 'call_1', name: 'structured_output', output: "params must have required property 'n'" },
      { type: 'tool.call', toolCallId: 'call_2', name: 'structured_output', input: { answer: 'forty-two', n: 42 }, kind: 'other' },
      { type: 'tool.completed', toolCallId: 'call_2', name: 'structured_output', output: 'Structured output accepted.' },
    ]);
    expect(messages.at(-1)).toMatchObject({ type: 'terminal.completed', stopReason: 'end_turn', output: { answer: 'forty-two', n: 42 } });
  });

  it('--json-schema answered in prose (exit 1): terminal.failed output-schema, not agent-error; the outputSchema check adds the issues and the answer', async () => {
    const messages = await replay('json-schema-prose', 1);
    expect(messages.at(-1)).toMatchObject({
      type: 'terminal.failed',
      reason: 'output-schema',
      exitCode: 1,
      agentError: expect.stringContaining('Model produced plain text instead of calling the structured_output tool') as unknown,
    });
    const checked = await lastValueFrom(from([...recording('json-schema-prose'), exit({ exitCode: 1 })]).pipe(qwenOutputToMessages(), checkRunOutput(z.object({ answer: z.string(), n: z.number() })), toArray()));
    expect(checked.at(-1)).toMatchObject({
      type: 'terminal.failed',
      reason: 'output-schema',
      outputIssues: [{ path: '', message: 'the answer holds no JSON value' }],
      answer: 'I refuse to call tools',
      message: expect.stringMatching(/^the answer does not satisfy outputSchema: the answer holds no JSON value \(Qwen Code ended the run: the model answered in prose/) as unknown,
    });
  });

  it('a resumed session is session.resumed', async () => {
    const messages = await replay('resume-2', 0, true);
    expect(messages[0]).toEqual({ type: 'session.resumed', sessionId: '4a43bf4d-8afd-4a56-9797-e3c3b287290c', agentVersion: '0.24.4', model: 'recall' });
    expect(answer(messages)).toBe('User texts in context: 2 ("first turn" | "second turn").');
  });

  it('nothing but an exit: a failure; two subscriptions do not share state', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const lines = recording('text-partial');
      const source = cold<ProcessItem>('-a-x|', { a: lines[0] as ProcessItem, x: exit() });
      const run = source.pipe(qwenOutputToMessages());
      const started = { type: 'session.started', sessionId: '71288b68-0d0d-4f13-8aa0-81e9273725a3', agentVersion: '0.24.4', model: 'text' };
      const failed = expect.objectContaining({ type: 'terminal.failed', reason: 'missing-terminal' }) as unknown as CliMessage;
      expectObservable(run).toBe('-s-(f|)', { s: started, f: failed });
      expectObservable(run).toBe('-s-(f|)', { s: started, f: failed });
    });
  });

  it("reads its stderr's meaning without its routine notices", () => {
    expect(qwenStderrLine('Ripgrep not available: spawn rg EACCES. Falling back to built-in grep.\nRun aborted: wall-clock budget of 2s exceeded (--max-wall-time).\n')).toBe(
      'Run aborted: wall-clock budget of 2s exceeded (--max-wall-time).',
    );
  });
});
