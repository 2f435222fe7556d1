import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DefaultChatTransport, readUIMessageStream, type UIMessage, type UIMessageChunk } from 'ai';
import { chatRun, pipeUIMessageStream, uiMessageStreamResponse, type AgentRxModelOptions } from '../../lib/ai-sdk.js';
import { stopAllRuns } from '../../lib/index.js';
import { createProcessTag } from '../helpers/tagged-processes.js';
import { scenarioMarker, startFakeModelServer, type FakeModelServer } from '../conformance/fake-model-server.js';
import { createPiEnv, OPENAI_PROVIDER, piCommand, type PiEnv } from '../conformance/pi-env.js';

// Runs served as the UI message stream a `useChat` page reads, read back by the AI SDK's own
// transport (what useChat uses): over Node's http (pipeUIMessageStream) and through the Fetch API
// (uiMessageStreamResponse), with the real pi against the fake model server's `recall` scenario,
// which answers with the user texts in its context.

const PI = piCommand();
const TAG = createProcessTag('AGENT_RX_UI_STREAM');

let model: FakeModelServer;
let pi: PiEnv;
let http: Server;
let api = '';
let options: AgentRxModelOptions<'pi'>;

beforeAll(async () => {
  model = await startFakeModelServer();
  pi = await createPiEnv({ baseUrl: model.baseUrl });
  options = { executable: PI.command, executableArgs: PI.args, provider: OPENAI_PROVIDER, model: 'recall', cwd: pi.cwd, env: { ...pi.env, ...TAG.env } };
  http = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const { messages } = JSON.parse(body) as { messages: UIMessage[] };
      void pipeUIMessageStream(chatRun('pi', options, messages), response);
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  api = `http://127.0.0.1:${String((http.address() as AddressInfo).port)}/api/chat`;
});

afterAll(async () => {
  await stopAllRuns();
  await new Promise((resolve) => http.close(resolve));
  await model.close();
  await pi.cleanup();
});

const user = (text: string): UIMessage => ({ id: `u-${text}`, role: 'user', parts: [{ type: 'text', text }] });

/** The assistant message a stream of chunks makes, as useChat makes it. */
async function answerOf(stream: ReadableStream<UIMessageChunk>): Promise<UIMessage> {
  let last: UIMessage | undefined;
  for await (const message of readUIMessageStream({ stream })) last = message;
  if (last === undefined) throw new Error('no message');
  return last;
}

const textOf = (message: UIMessage): string => message.parts.map((part) => (part.type === 'text' ? part.text : '')).join('');

describe('a run as a useChat stream', () => {
  it('over Node http: the answer streams in; the next request resumes the agent session named in the answer’s metadata', async () => {
    const transport = new DefaultChatTransport<UIMessage>({ api });
    const first = [user('first question')];
    const one = await answerOf(await transport.sendMessages({ trigger: 'submit-message', chatId: 'c1', messageId: undefined, messages: first, abortSignal: undefined }));
    expect(textOf(one)).toContain('User texts in context: 1');
    const sessionId = (one.metadata as { agentRx?: { sessionId?: string } }).agentRx?.sessionId;
    expect(typeof sessionId).toBe('string');
    const two = await answerOf(await transport.sendMessages({ trigger: 'submit-message', chatId: 'c1', messageId: undefined, messages: [...first, one, user('second question')], abortSignal: undefined }));
    expect(textOf(two)).toContain('User texts in context: 2 ("first question" | "second question")');
    expect((two.metadata as { agentRx?: { sessionId?: string } }).agentRx?.sessionId).toBe(sessionId);
  }, 120_000);

  it('the agent’s own tool as a dynamic tool part with its input and output', async () => {
    const transport = new DefaultChatTransport<UIMessage>({ api });
    const answer = await answerOf(await transport.sendMessages({ trigger: 'submit-message', chatId: 'c2', messageId: undefined, messages: [user(`${scenarioMarker('bash_tool')} go`)], abortSignal: undefined }));
    expect(answer.parts.find((part) => part.type === 'dynamic-tool')).toMatchObject({ toolName: 'bash', state: 'output-available', input: { command: 'echo hello' }, output: 'hello\n' });
    expect(textOf(answer)).toContain('The command printed "hello". Done.');
  }, 120_000);

  it('a Stop (the request aborted) closes the response, which stops the agent: no process of the run is left', async () => {
    const transport = new DefaultChatTransport<UIMessage>({ api });
    const controller = new AbortController();
    const stream = await transport.sendMessages({ trigger: 'submit-message', chatId: 'c3', messageId: undefined, messages: [user(`${scenarioMarker('endless_text')} go`)], abortSignal: controller.signal });
    const reader = stream.getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error('the endless answer ended');
      if (value.type === 'text-delta') break;
    }
    expect(TAG.processes().length).toBeGreaterThan(0);
    controller.abort();
    await reader.read().catch(() => undefined);
    expect(await TAG.waitUntilNone(15_000)).toEqual([]);
  }, 120_000);

  it('through the Fetch API (uiMessageStreamResponse): the same stream, read by the same transport', async () => {
    const transport = new DefaultChatTransport<UIMessage>({
      api: 'http://127.0.0.1/not-used',
      fetch: (_url, init) => {
        const { messages } = JSON.parse(typeof init?.body === 'string' ? init.body : '') as { messages: UIMessage[] };
        return Promise.resolve(uiMessageStreamResponse(chatRun('pi', options, messages)));
      },
    });
    const answer = await answerOf(await transport.sendMessages({ trigger: 'submit-message', chatId: 'c4', messageId: undefined, messages: [user('over fetch')], abortSignal: undefined }));
    expect(textOf(answer)).toContain('User texts in context: 1 ("over fetch")');
    expect(answer.metadata).toMatchObject({ agentRx: { stopReason: 'end_turn' } });
  }, 120_000);
});
