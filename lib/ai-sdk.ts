/**
 * `agent-rx/ai-sdk`: every agent as a language model of the Vercel AI SDK (`streamText`,
 * `generateText`, typed output), and every run as the UI message stream a `useChat` page reads. It
 * needs the AI SDK (`ai` and `@ai-sdk/provider`, optional peer dependencies: nothing else of
 * agent-rx loads them).
 *
 * @example
 * import { streamText } from 'ai';
 * import { agentRx } from 'agent-rx/ai-sdk';
 *
 * const result = streamText({ model: agentRx('codex', { sandbox: 'read-only' }), prompt: 'What does this repo do?' });
 * for await (const text of result.textStream) process.stdout.write(text);
 *
 * @module agent-rx/ai-sdk
 */

export { agentRx, type AgentRxModelOptions, type AgentRxCallOptions } from './ai-sdk/language-model.js';
export { modelParts, PROVIDER_KEY, type ModelPartsContext } from './ai-sdk/model-parts.js';
export { runFailureError } from './ai-sdk/errors.js';
export { toUIMessageChunks, uiMessageStream, uiMessageStreamResponse, pipeUIMessageStream, type UIMessageStreamOptions, type UIMessageResponseInit, type AgentRxMessageMetadata } from './ai-sdk/ui-message-stream.js';
export { chatRequestTurn, chatRun, type ChatTurn } from './ai-sdk/chat-request.js';
