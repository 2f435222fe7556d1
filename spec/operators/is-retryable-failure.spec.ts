import { describe, expect, it } from '@jest/globals';
import { isRetryableFailure, type TerminalFailed } from '../../lib/index.js';
import { terminalFailed } from '../helpers/items.js';

const failure = (fields: Partial<TerminalFailed>): TerminalFailed => terminalFailed(fields);

const agentError = (text: string) => failure({ reason: 'agent-error', agentError: text, message: `pi reported an error: ${text}` });
const exit = (exitCode: number | null, stderr = '', signal: string | null = null) =>
  failure({ reason: 'exit', exitCode, signal, stderr, message: `pi exited with code ${String(exitCode)}` });

describe('isRetryableFailure', () => {
  it.each([
    ['a rate limit (429)', '429 fake rate limit exceeded'],
    ['an upstream 500', '500 fake internal server error'],
    ['a 502 with an HTML body', '502 <html>Bad Gateway</html>'],
    ['a 503', '503 Service Unavailable'],
    ['an Anthropic overloaded body', '500 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'],
    ['a 529 overloaded', '529 {"type":"error","error":{"type":"overloaded_error"}}'],
    ['a request timeout (408)', '408 request timeout'],
    ['an overloaded error without a status', 'Overloaded'],
    ["Codex's text for a server error (it drops the status)", 'We’re currently experiencing high demand, which may cause temporary errors.'],
    ['a rate limit without a status', 'Rate limit reached for requests'],
    ['a connection error', 'Connection error.'],
    ['a timeout', 'Request timed out.'],
    ['a reset socket', 'read ECONNRESET'],
    ['a failed fetch', 'fetch failed'],
    ['a stream cut by the server', 'terminated'],
  ])('retries an agent error that is %s', (_name, text) => {
    expect(isRetryableFailure(agentError(text))).toBe(true);
  });

  it.each([
    ['unauthorized (401)', '401 fake invalid api key'],
    ['forbidden (403)', '403 Forbidden'],
    ['a bad request (400)', '400 {"error":{"message":"Invalid value for temperature"}}'],
    ['an unknown model (404)', '404 The model `gpt-9` does not exist'],
    ['an unprocessable request (422)', '422 unprocessable entity'],
    ['a quota error sent as 429', '429 You exceeded your current quota, please check your plan and billing details. insufficient_quota'],
    ['an invalid key without a status', 'Invalid API key provided'],
    ['an exhausted context window', 'prompt is too long: context length exceeded'],
    ['an unknown model without a status', 'Unknown model: claude-nope'],
    ['something not recognised', 'the model refused'],
  ])('does not retry an agent error that is %s', (_name, text) => {
    expect(isRetryableFailure(agentError(text))).toBe(false);
  });

  it('does not retry an agent error without any message', () => {
    expect(isRetryableFailure(failure({ reason: 'agent-error', message: 'pi reported an error: unknown error' }))).toBe(false);
  });

  it('retries a process killed by a signal the library did not send, or that reports one as 128 + n', () => {
    expect(isRetryableFailure(exit(null, '', 'SIGKILL'))).toBe(true);
    expect(isRetryableFailure(exit(null, '', 'SIGSEGV'))).toBe(true);
    expect(isRetryableFailure(exit(143))).toBe(true);
    expect(isRetryableFailure(exit(137))).toBe(true);
  });

  it('does not retry a plain non-zero exit: pi exits 1 for startup errors such as an unknown session', () => {
    expect(isRetryableFailure(exit(1, "No session found matching 'deadbeef'\n"))).toBe(false);
    expect(isRetryableFailure(exit(1))).toBe(false);
    expect(isRetryableFailure(exit(2, 'Error: unknown option --bogus\n'))).toBe(false);
    expect(isRetryableFailure(exit(128))).toBe(false);
    expect(isRetryableFailure(exit(160))).toBe(false);
  });

  it('retries a non-zero exit whose stderr or agent error says network or timeout', () => {
    const crash = [
      'Error: connect ECONNREFUSED 127.0.0.1:443',
      '    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1555:16)',
      '',
      'Node.js v20.19.0',
      '',
    ].join('\n');
    expect(isRetryableFailure(exit(1, crash))).toBe(true);
    expect(isRetryableFailure(exit(1, 'Warning: Model "x" not found. Using custom model id.\nError: Request timed out.\n'))).toBe(true);
    expect(isRetryableFailure({ ...exit(1), agentError: '503 Service Unavailable' })).toBe(true);
  });

  it('reads pi without an API key as permanent: the telling line is found whatever hints and docs paths follow it', () => {
    const noKey = 'No API key found for the selected model.\n\nUse /login to log into a provider via OAuth or API key. See:\n  /opt/pi/docs/providers.md\n  /opt/pi/docs/models.md\n';
    expect(isRetryableFailure(exit(1, noKey))).toBe(false);
    // The last telling line decides, as the failure's outcome comes last (a retried error, then the final one).
    expect(isRetryableFailure(exit(1, 'Attempt 1 failed: 503 Service Unavailable\nError: 401 Unauthorized\nsee /opt/agent/docs/auth.md\n'))).toBe(false);
  });

  it('reads the last stderr line that says something, and ignores stack frames that merely mention timers', () => {
    expect(isRetryableFailure(exit(1, 'Error: Request timed out.\nError: 401 Unauthorized\n'))).toBe(false);
    expect(isRetryableFailure(exit(1, 'TypeError: x is not a function\n    at Timeout._onTimeout (file.js:1:1)\n'))).toBe(false);
  });

  it('never retries spawn failures, aborted runs, invalid output or a missing terminal, whatever their text', () => {
    for (const reason of ['spawn', 'aborted', 'invalid-output', 'missing-terminal'] as const) {
      expect(isRetryableFailure(failure({ reason, agentError: '503 Service Unavailable', message: 'Connection error.' }))).toBe(false);
    }
  });

  it('never retries a run the host stopped (stopped), whatever its text or signal', () => {
    expect(isRetryableFailure(failure({ reason: 'stopped', exitCode: null, signal: 'SIGTERM', message: 'the host stopped the pi run (stopAllRuns)' }))).toBe(false);
    expect(isRetryableFailure(failure({ reason: 'stopped', exitCode: 143, agentError: '429 rate limit exceeded', message: 'Connection error.' }))).toBe(false);
  });

  it('retries a fleet run lost with its worker or Redis, whatever its text', () => {
    expect(isRetryableFailure(failure({ reason: 'lost', exitCode: null, message: 'the worker w1 stopped beating (killed, frozen or cut off)' }))).toBe(true);
    expect(isRetryableFailure(failure({ reason: 'lost', exitCode: null, message: 'Redis could not be reached for 10000 ms (lostAfterMs)', agentError: '401 Unauthorized' }))).toBe(true);
  });

  it('retries an idle timeout (a stalled model or stream) and an ignored abort (a hung agent), not a run timeout or an agent slow to exit', () => {
    const timedOut = (limit: 'run' | 'idle' | 'abort' | 'end', ms: number): TerminalFailed =>
      failure({ reason: 'timeout', exitCode: null, signal: 'SIGTERM', message: 'pi was stopped', timeout: { limit, ms } });
    expect(isRetryableFailure(timedOut('idle', 30_000))).toBe(true);
    expect(isRetryableFailure(timedOut('abort', 2000))).toBe(true);
    expect(isRetryableFailure(timedOut('run', 600_000))).toBe(false);
    expect(isRetryableFailure(timedOut('end', 2000))).toBe(false);
    // A timeout without the limit that ran out says too little to retry.
    expect(isRetryableFailure(failure({ reason: 'timeout', message: 'pi timed out' }))).toBe(false);
  });
});
