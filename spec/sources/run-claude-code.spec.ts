import { afterEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as z from 'zod';
import { fileURLToPath } from 'node:url';
import { CliMessageSchema, isTerminal, runClaudeCode, stopAllRuns, type CliMessage } from '../../lib/index.js';
import { claudeAgent } from '../../lib/agents/claude/definition.js';
import type { RunClaudeCodeOptions } from '../../lib/agents/claude/options.js';
import { processInvocation } from '../helpers/invocation.js';
import { runInvocation } from '../../lib/sources/run-agent.js';
import { sessionInvocation } from '../../lib/sessions/agent-session.js';
import { testPng } from '../conformance/scenarios.js';

const buildClaudeInvocation = (options: RunClaudeCodeOptions) => processInvocation(claudeAgent, options);
import { claudeFacts, replayClaude } from '../helpers/claude-transcripts.js';
import { answerOf } from '../helpers/pi-transcripts.js';

afterEach(async () => {
  await stopAllRuns();
});

const transcripts = readdirSync(fileURLToPath(new URL('../fixtures/claude/', import.meta.url)))
  .filter((file) => file.endsWith('.jsonl'))
  .map((file) => file.slice(0, -'.jsonl'.length))
  .sort();

const only = (messages: readonly CliMessage[], type: CliMessage['type']) => messages.filter((message) => message.type === type);

describe('runClaudeCode on every recorded transcript', () => {
  it.each(transcripts)('%s: valid messages, the answer exactly once, thinking once, tools paired, one terminal last', async (name) => {
    const facts = claudeFacts(name);
    const messages = await replayClaude(name);
    for (const message of messages) expect(CliMessageSchema.safeParse(message).success).toBe(true);
    expect(answerOf(messages)).toBe(facts.answer);
    expect(only(messages, 'assistant.thought').map((message) => (message as { text: string }).text)).toEqual(
      facts.thinking.length === 0 ? [] : [facts.thinking.join('\n\n')],
    );
    expect(only(messages, 'tool.call').map((message) => (message as { toolCallId: string }).toolCallId)).toEqual(facts.toolUses);
    expect(messages.filter(isTerminal)).toHaveLength(1);
    expect(isTerminal(messages.at(-1) as CliMessage)).toBe(true);
    expect(messages[0]).toEqual({ type: 'session.started', pid: expect.any(Number), processGroup: expect.any(Number), sessionId: facts.sessionId, agentVersion: facts.agentVersion, model: facts.model });
  });
});

describe('runClaudeCode: exact streams', () => {
  it('streams text deltas from partial messages, not doubled by the block-level lines', async () => {
    const messages = await replayClaude('text-partial');
    expect(only(messages, 'assistant')).toEqual([
      { type: 'assistant', text: 'Hello ' },
      { type: 'assistant', text: 'from the ' },
      { type: 'assistant', text: 'fake server.' },
    ]);
    expect(messages.at(-1)).toEqual({
      type: 'terminal.completed',
      stopReason: 'end_turn',
      agentStopReason: 'end_turn',
      usage: { inputTokens: 42, outputTokens: 6, cacheReadTokens: 0, cacheWriteTokens: 0, totalTokens: 48, cost: 0.000288 },
      sessionId: '2a12187f-8e9e-4ea0-88e5-6cd5b1daca54',
    });
  });

  it('emits whole blocks when partial messages are off', async () => {
    expect(only(await replayClaude('text'), 'assistant')).toEqual([{ type: 'assistant', text: 'Hello from the fake server.' }]);
  });

  it('a Bash tool: text, the call with its input, the result, the rest of the answer', async () => {
    const messages = await replayClaude('tool-partial');
    const id = 'toolu_f2ab0a5e08dddeb95fef8db3';
    expect(messages.filter((message) => message.type.startsWith('tool.'))).toEqual([
      { type: 'tool.call', toolCallId: id, name: 'Bash', input: { command: 'echo hello', description: 'Run echo hello' }, kind: 'execute', summary: 'echo hello' },
      { type: 'tool.completed', toolCallId: id, name: 'Bash', output: 'hello' },
    ]);
    const callAt = messages.findIndex((message) => message.type === 'tool.call');
    expect(answerOf(messages.slice(0, callAt))).toBe('I will run a command.');
    expect(answerOf(messages.slice(callAt))).toBe('The command printed: hello');
  });

  it('a denied tool is tool.failed with the refusal, and the run goes on', async () => {
    const messages = await replayClaude('tool-denied');
    expect(only(messages, 'tool.failed')).toEqual([expect.objectContaining({ name: 'Bash', output: expect.stringContaining('needs approval') })]);
    expect(messages.at(-1)).toMatchObject({ type: 'terminal.completed' });
  });

  it('an API error: agent.retry, then agent-error with the status first, although the CLI exits 1', async () => {
    const messages = await replayClaude('err401-retries1');
    expect(only(messages, 'agent.retry')).toEqual([{ type: 'agent.retry', attempt: 1, maxAttempts: 1, delayMs: 509, reason: '401 authentication_failed' }]);
    expect(answerOf(messages)).toBe('');
    expect(messages.at(-1)).toMatchObject({
      type: 'terminal.failed',
      reason: 'agent-error',
      exitCode: 1,
      agentError: '401 Invalid API key · Fix external API key',
      message: 'Claude Code reported an error: 401 Invalid API key · Fix external API key',
    });
  });

  it('max turns is an agent-error; SIGINT mid-stream is aborted; SIGTERM (no result line) is an exit failure', async () => {
    expect((await replayClaude('max-turns')).at(-1)).toMatchObject({ reason: 'agent-error', message: expect.stringContaining('Reached maximum number of turns (1)') });
    expect((await replayClaude('cancel-sigint')).at(-1)).toMatchObject({ reason: 'aborted', exitCode: 0 });
    const killed = await replayClaude('sleeptool-SIGTERM');
    expect(only(killed, 'tool.failed')).toEqual([expect.objectContaining({ output: 'Exit code 137\nstart' })]);
    expect(killed.at(-1)).toMatchObject({ reason: 'exit', exitCode: 143 });
  });

  it('session.resumed when resuming', async () => {
    const messages = await replayClaude('resume-2', { session: { resume: '7d9576bb-fac4-4082-b5fa-c411961d43fc' } });
    expect(messages[0]).toEqual({ type: 'session.resumed', pid: expect.any(Number), processGroup: expect.any(Number), sessionId: '7d9576bb-fac4-4082-b5fa-c411961d43fc', agentVersion: '2.1.332', model: 'claude-opus-5-5' });
  });

  it('a missing claude is terminal.failed with reason spawn and says how to install it', async () => {
    const messages = await replayClaude('text', { executable: 'agent-rx-missing-claude', executableArgs: [] });
    expect(messages).toEqual([expect.objectContaining({ type: 'terminal.failed', reason: 'spawn', message: expect.stringContaining('@anthropic-ai/claude-code') })]);
  });
});

describe('Claude Code arguments', () => {
  it('builds print-mode stream-json argv, the prompt last after --, interrupting with SIGINT', () => {
    const invocation = buildClaudeInvocation({
      prompt: '-rf --help',
      model: 'sonnet',
      session: { resume: 'abc' },
      permissionMode: 'acceptEdits',
      allowedTools: ['Bash', 'Read'],
      disallowedTools: ['Write'],
      maxTurns: 3,
      extraArgs: ['--add-dir', '/tmp'],
      agentRetry: false,
      env: { A: '1' },
    });
    expect(invocation.executable).toBeUndefined();
    expect(invocation.args).toEqual([
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--include-partial-messages',
      '--model',
      'sonnet',
      '--resume',
      'abc',
      '--permission-mode',
      'acceptEdits',
      '--allowedTools=Bash,Read',
      '--disallowedTools=Write',
      '--max-turns',
      '3',
      '--add-dir',
      '/tmp',
      '--',
      '-rf --help',
    ]);
    expect(invocation.processOptions).toEqual({ interrupt: { signal: 'SIGINT', stdin: null }, env: { A: '1', CLAUDE_CODE_MAX_RETRIES: '0' } });
    expect(invocation.resuming).toBe(true);
    expect(buildClaudeInvocation({ prompt: 'p', includePartialMessages: false, session: 'continue' }).args).toEqual([
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--continue',
      '--',
      'p',
    ]);
  });

  it('gives an outputSchema natively (--json-schema) and no instruction in the prompt; files as <file> blocks, in order', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agent-rx-claude-args-'));
    try {
      writeFileSync(join(dir, 'brief.txt'), 'the brief\n');
      const invocation = buildClaudeInvocation({
        prompt: ['Read this:', { type: 'file', path: 'brief.txt' }, 'Then answer.'],
        outputSchema: z.object({ answer: z.string() }),
        includePartialMessages: false,
        cwd: dir,
      });
      expect(invocation.args).toEqual([
        '-p',
        '--output-format',
        'stream-json',
        '--verbose',
        '--json-schema',
        '{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"],"additionalProperties":false}',
        '--',
        `Read this:\n\n<file path=${JSON.stringify(join(dir, 'brief.txt'))}>\nthe brief\n</file>\n\nThen answer.`,
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('makes a run with an image a one-prompt session, whose schema is told in the prompt (the session has no --json-schema)', () => {
    const png = testPng();
    const invocation = runInvocation(claudeAgent, { prompt: ['What is it?', { type: 'image', data: png.bytes, mimeType: 'image/png' }], outputSchema: z.object({ n: z.number() }), model: 'm' });
    if (!('asSession' in invocation)) throw new Error('not a session');
    expect(invocation.asSession.options).toEqual({ model: 'm' });
    expect(invocation.asSession.prompt.content).toEqual([
      { type: 'text', text: 'What is it?' },
      { type: 'image', data: png.base64, mimeType: 'image/png', bytes: png.bytes.length },
    ]);
    expect(invocation.asSession.prompt.output).toBeDefined();
    expect(sessionInvocation(claudeAgent, invocation.asSession.options).args).not.toContain('--json-schema');
    expect(sessionInvocation(claudeAgent, invocation.asSession.options).protocol.prompts).toEqual({ image: true, file: true });
  });

  it('rejects bad options with a TypeError', () => {
    for (const options of [{ prompt: '' }, { prompt: 'p', maxTurns: 0 }, { prompt: 'p', allowedTools: 'Bash' }, { prompt: 'p', session: { resume: '' } }]) {
      expect(() => runClaudeCode(options as never)).toThrow(TypeError);
    }
  });
});
