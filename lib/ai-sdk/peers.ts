import type * as Provider from '@ai-sdk/provider';
import type * as Ai from 'ai';

// The AI SDK, the optional peers agent-rx/ai-sdk runs on: loaded by import() rather than by name,
// so that a missing package fails here, in words, instead of failing the link of the entry point
// with Node's bare ERR_MODULE_NOT_FOUND.

const NEEDS = 'agent-rx/ai-sdk needs the optional packages ai and @ai-sdk/provider: npm install ai @ai-sdk/provider';

const missing = (name: string) => (error: unknown) => (error instanceof Error && (error as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND' && error.message.includes(`'${name}'`) ? name : error);

const [provider, ai] = await Promise.all([import('@ai-sdk/provider').catch(missing('@ai-sdk/provider')), import('ai').catch(missing('ai'))]);
const absent = [provider, ai].filter((loaded): loaded is string => typeof loaded === 'string');
if (absent.length > 0) throw new Error(`${NEEDS} (${absent.join(' and ')} cannot be found from agent-rx)`);
for (const loaded of [provider, ai]) if (loaded instanceof Error) throw loaded;

const sdk = { provider: provider as typeof Provider, ai: ai as typeof Ai };

export const APICallError: typeof Provider.APICallError = sdk.provider.APICallError;
export const UnsupportedFunctionalityError: typeof Provider.UnsupportedFunctionalityError = sdk.provider.UnsupportedFunctionalityError;
export const createUIMessageStreamResponse: typeof Ai.createUIMessageStreamResponse = sdk.ai.createUIMessageStreamResponse;
export const pipeUIMessageStreamToResponse: typeof Ai.pipeUIMessageStreamToResponse = sdk.ai.pipeUIMessageStreamToResponse;
