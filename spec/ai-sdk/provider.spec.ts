import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { APICallError, UnsupportedFunctionalityError } from '@ai-sdk/provider';
import { generateObject, generateText, jsonSchema, NoObjectGeneratedError, Output, RetryError, streamText, tool, type ModelMessage } from 'ai';
import * as z from 'zod';
import { agentRx } from '../../lib/ai-sdk.js';
import { stopAllRuns } from '../../lib/index.js';
import { isAlive } from '../helpers/processes.js';
import { createProcessTag } from '../helpers/tagged-processes.js';
import { claudeExecutable, createClaudeEnv, type ClaudeEnv } from '../conformance/claude-env.js';
import { CODEX_FAKE_PROVIDER, createCodexEnv, type CodexEnv } from '../conformance/codex-env.js';
import { executableOptions } from '../conformance/cli-under-test.js';
import { expectedText, FAKE_INPUT_TOKENS, JSON_OK_VALUE, scenarioMarker, startFakeModelServer, type FakeModelServer } from '../conformance/fake-model-server.js';
import { createPiEnv, OPENAI_PROVIDER, piCommand, type PiEnv } from '../conformance/pi-env.js';
import { createGeminiEnv, geminiCommand, type GeminiEnv } from '../conformance/gemini-env.js';
import { createQwenEnv, type QwenEnv } from '../conformance/qwen-env.js';

// Every agent as an AI SDK language model, through the SDK's own functions (streamText,
// generateText, typed output), with the real pi, Claude Code, Codex, Gemini CLI and Qwen Code
// against the fake model server on 127.0.0.1. A scenario marker in the prompt picks what the fake model answers.

// The SDK's own warnings are checked in the results, not printed.
(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

const PI = piCommand();
const CLAUDE = claudeExecutable();
const GEMINI = geminiCommand();
const TAG = createProcessTag('AGENT_RX_AI_SDK');

let server: FakeModelServer;
let pi: PiEnv;
let claude: ClaudeEnv;
let codex: CodexEnv;
let gemini: GeminiEnv;
let qwen: QwenEnv;

beforeAll(async () => {
  server = await startFakeModelServer();
  pi = await createPiEnv({ baseUrl: server.baseUrl });
  claude = createClaudeEnv({ baseUrl: server.baseUrl });
  codex = createCodexEnv({ baseUrl: server.baseUrl });
  gemini = createGeminiEnv({ baseUrl: server.baseUrl });
  qwen = createQwenEnv({ baseUrl: server.openaiBaseUrl });
});

afterAll(async () => {
  await stopAllRuns();
  await server.close();
  await pi.cleanup();
  await claude.cleanup();
  await codex.cleanup();
  await gemini.cleanup();
  await qwen.cleanup();
});

const models = {
  pi: () => agentRx('pi', { executable: PI.command, executableArgs: PI.args, provider: OPENAI_PROVIDER, model: 'text', cwd: pi.cwd, env: { ...pi.env, ...TAG.env } }),
  claude: () => agentRx('claude', { executable: CLAUDE.command, executableArgs: CLAUDE.args, model: 'text', cwd: claude.cwd, env: { ...claude.env, ...TAG.env }, allowedTools: ['Bash'] }),
  codex: () =>
    agentRx('codex', {
      ...executableOptions('codex'),
      cwd: codex.cwd,
      env: { ...codex.env, ...TAG.env },
      config: { [`model_providers.${CODEX_FAKE_PROVIDER}.base_url`]: server.responsesBaseUrl('text') },
    }),
  gemini: () =>
    agentRx('gemini', { executable: GEMINI.command, executableArgs: GEMINI.args, cwd: gemini.cwd, env: { ...gemini.env, GOOGLE_GEMINI_BASE_URL: gemini.baseUrlFor('text'), ...TAG.env }, approvalMode: 'yolo' }),
  qwen: () => agentRx('qwen', { ...executableOptions('qwen'), model: 'text', cwd: qwen.cwd, env: { ...qwen.env, ...TAG.env }, approvalMode: 'yolo' }),
} as const;

const say = (scenario: string, text = 'please'): string => `${scenarioMarker(scenario)} ${text}`;

describe.each(['pi', 'claude', 'codex', 'gemini', 'qwen'] as const)('agentRx(%s) in the AI SDK', (agent) => {
  it('streamText: the answer as text parts, the agent’s own tool call and its result as a provider-executed dynamic tool, usage and the session id', async () => {
    const result = streamText({ model: models[agent](), prompt: say('bash_tool') });
    const parts = [];
    for await (const part of result.stream) parts.push(part);
    const types = parts.map((part) => part.type);
    expect(types[0]).toBe('start');
    expect(types.at(-1)).toBe('finish');
    const call = parts.find((part) => part.type === 'tool-call');
    expect(call).toMatchObject({ providerExecuted: true, dynamic: true });
    expect(JSON.stringify(call?.input)).toContain('echo hello');
    const toolResult = parts.find((part) => part.type === 'tool-result');
    expect(toolResult).toMatchObject({ toolCallId: call?.toolCallId, providerExecuted: true, dynamic: true });
    expect(String(toolResult?.type === 'tool-result' ? toolResult.output : '')).toContain('hello');
    // The tool's parts come between the text before it and the answer after it.
    expect(types.indexOf('tool-call')).toBeLessThan(types.lastIndexOf('text-delta'));
    expect(await result.text).toContain(expectedText('bash_tool'));
    expect(await result.finishReason).toBe('stop');
    const final = await result.finalStep;
    const metadata = final.providerMetadata?.['agentRx'];
    expect(typeof metadata?.['sessionId']).toBe('string');
    expect(final.response.id).toBe(metadata?.['sessionId']);
    expect((await result.usage).inputTokens).toBeGreaterThan(0);
  }, 120_000);

  it('generateText: the answer, its usage and finish reason; Output.object: the answer typed by its schema', async () => {
    const model = models[agent]();
    const result = await generateText({ model, prompt: say('text') });
    expect(result.text).toBe(expectedText('text'));
    expect(result.finishReason).toBe('stop');
    expect(result.usage.inputTokens).toBeGreaterThanOrEqual(FAKE_INPUT_TOKENS);
    expect(result.usage.outputTokens).toBeGreaterThan(0);
    const typed = await generateText({ model, prompt: say('json_ok'), output: Output.object({ schema: z.object({ answer: z.string(), n: z.number() }) }) });
    expect(typed.output).toEqual(JSON_OK_VALUE);
  }, 120_000);
});

describe('agentRx(pi): conversations, stops and failures', () => {
  it('a call with the earlier answer’s response messages, or naming its session, resumes that session and sends the new turn only', async () => {
    const model = agentRx('pi', { executable: PI.command, executableArgs: PI.args, provider: OPENAI_PROVIDER, model: 'recall', cwd: pi.cwd, env: { ...pi.env, ...TAG.env } });
    const first: ModelMessage[] = [{ role: 'user', content: 'first question' }];
    const one = await generateText({ model, messages: first });
    expect(one.text).toContain('User texts in context: 1');
    const two = await generateText({ model, messages: [...first, ...one.finalStep.response.messages, { role: 'user', content: 'second question' }] });
    expect(two.text).toContain('User texts in context: 2 ("first question" | "second question")');
    expect(two.finalStep.response.id).toBe(one.finalStep.response.id);
    expect(two.warnings).toEqual([]);
    // Or named by the call itself: its prompt is the new turn.
    const three = await generateText({ model, prompt: 'third question', providerOptions: { agentRx: { sessionId: one.finalStep.response.id } } });
    expect(three.text).toContain('User texts in context: 3 ("first question" | "second question" | "third question")');
  }, 120_000);

  it('earlier turns that name no session go as text in one prompt, with a warning saying so', async () => {
    const model = agentRx('pi', { executable: PI.command, executableArgs: PI.args, provider: OPENAI_PROVIDER, model: 'recall', cwd: pi.cwd, env: { ...pi.env, ...TAG.env } });
    const result = await generateText({
      model,
      messages: [
        { role: 'user', content: 'what is 2+2?' },
        { role: 'assistant', content: 'It is 4.' },
        { role: 'user', content: 'and times 3?' },
      ],
    });
    expect(result.text).toContain('User texts in context: 1');
    expect(result.text).toContain('User: what is 2+2?');
    expect(result.text).toContain('Assistant: It is 4.');
    expect(result.text).toContain('and times 3?');
    expect(result.warnings).toEqual([expect.objectContaining({ type: 'compatibility', feature: 'earlier turns' })]);
  }, 120_000);

  it('generateObject (the SDK’s older call, deprecated in version 7 but still used) gets the typed answer too', async () => {
    // eslint-disable-next-line @typescript-eslint/no-deprecated -- the older call is what many callers still use
    const { object } = await generateObject({ model: models.pi(), prompt: say('json_ok'), schema: jsonSchema<{ answer: string; n: number }>({ type: 'object', properties: { answer: { type: 'string' }, n: { type: 'number' } }, required: ['answer', 'n'] }) });
    expect(object).toEqual(JSON_OK_VALUE);
  }, 120_000);

  it('an answer that fails the schema is the SDK’s own NoObjectGeneratedError, with the answer’s text', async () => {
    const error = await generateText({ model: models.pi(), prompt: say('json_bad'), output: Output.object({ schema: z.object({ answer: z.string(), n: z.number() }) }) }).catch((thrown: unknown) => thrown);
    expect(NoObjectGeneratedError.isInstance(error)).toBe(true);
    expect((error as NoObjectGeneratedError).text).toContain('"answer"');
  }, 120_000);

  it('abortSignal mid-stream stops the agent: its process is gone', async () => {
    const controller = new AbortController();
    const result = streamText({ model: models.pi(), prompt: say('endless_text'), abortSignal: controller.signal, include: { rawChunks: true } });
    let pid: number | undefined;
    const types: string[] = [];
    for await (const part of result.stream) {
      types.push(part.type);
      if (part.type === 'raw' && (part.rawValue as { type?: string }).type === 'session.started') pid = (part.rawValue as { pid?: number }).pid;
      if (part.type === 'text-delta' && !controller.signal.aborted) controller.abort();
    }
    expect(types).toContain('abort');
    expect(pid).toBeGreaterThan(0);
    const deadline = Date.now() + 15_000;
    while (isAlive(pid as number) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(isAlive(pid as number)).toBe(false);
  }, 120_000);

  it('a failed run is an APICallError with the API’s status and isRetryableFailure’s verdict; the SDK’s maxRetries retries a retryable one', async () => {
    const model = models.pi();
    const unauthorized = await generateText({ model, prompt: say('http401'), maxRetries: 3 }).catch((error: unknown) => error);
    expect(APICallError.isInstance(unauthorized)).toBe(true);
    expect(unauthorized).toMatchObject({ statusCode: 401, isRetryable: false });
    expect((unauthorized as APICallError).data).toMatchObject({ type: 'terminal.failed', reason: 'agent-error', httpStatus: 401 });
    const before = server.requests.length;
    const failing = await generateText({ model, prompt: say('http500'), maxRetries: 1 }).catch((error: unknown) => error);
    expect(RetryError.isInstance(failing)).toBe(true);
    const { errors } = failing as RetryError;
    expect(errors).toHaveLength(2);
    expect(errors.every((error) => APICallError.isInstance(error) && error.isRetryable && error.statusCode === 500)).toBe(true);
    // Two runs reached the model.
    expect(server.requests.length - before).toBeGreaterThanOrEqual(2);
  }, 120_000);

  it('streamText: a run that fails before any content rejects the call (the SDK’s error part), not a silent empty answer', async () => {
    const errors: unknown[] = [];
    const result = streamText({ model: models.pi(), prompt: say('http401'), maxRetries: 0, onError: ({ error }) => void errors.push(error) });
    await result.consumeStream();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ statusCode: 401, isRetryable: false });
  }, 120_000);

  it('refuses the caller’s function tools at call time and options that are not the agent’s at creation; sampling settings are warnings', async () => {
    const error = await generateText({ model: models.pi(), prompt: 'hi', tools: { weather: tool({ inputSchema: z.object({ city: z.string() }), execute: () => 'sunny' }) } }).catch((thrown: unknown) => thrown);
    expect(UnsupportedFunctionalityError.isInstance(error)).toBe(true);
    const sampled = await generateText({ model: models.pi(), prompt: say('text'), temperature: 0.2, maxOutputTokens: 100 });
    expect(sampled.text).toBe(expectedText('text'));
    expect(sampled.warnings).toEqual([expect.objectContaining({ type: 'unsupported', feature: 'maxOutputTokens' }), expect.objectContaining({ type: 'unsupported', feature: 'temperature' })]);
    expect(() => agentRx('pi', { sandbox: 'read-only' } as never)).toThrow(TypeError);
    expect(() => agentRx('nobody' as never)).toThrow(/agent's name/);
  }, 120_000);
});
