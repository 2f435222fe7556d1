import type { APICallError as ApiCallError } from '@ai-sdk/provider';
import type { TerminalFailed } from '../messages.js';
import { isRetryableFailure } from '../operators/is-retryable-failure.js';
import { APICallError } from './peers.js';

/**
 * A failed run as the AI SDK's providers report a failed API call: an `APICallError` whose
 * `isRetryable` is {@link isRetryableFailure}'s verdict (the SDK's `maxRetries` acts on it),
 * `statusCode` the model API's HTTP status where the agent reported one, `responseBody` the end of
 * the agent's stderr, and `data` the run's whole `terminal.failed`.
 *
 * @example
 * import { runPi } from 'agent-rx';
 * import { runFailureError } from 'agent-rx/ai-sdk';
 *
 * runPi({ prompt: 'Explain this repo' }).subscribe((message) => {
 *   if (message.type === 'terminal.failed') console.log(runFailureError('pi', message, 'Explain this repo').isRetryable);
 * });
 */
export function runFailureError(agent: string, failure: TerminalFailed, prompt: unknown): ApiCallError {
  return new APICallError({
    message: `the ${agent} run failed (${failure.reason}): ${failure.message}`,
    url: `agent-rx:${agent}`,
    requestBodyValues: { agent, prompt },
    ...(failure.httpStatus === undefined ? {} : { statusCode: failure.httpStatus }),
    ...(failure.stderr === '' ? {} : { responseBody: failure.stderr }),
    isRetryable: isRetryableFailure(failure),
    data: failure,
  });
}
