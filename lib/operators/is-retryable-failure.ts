import type { TerminalFailed } from '../messages.js';

// Billing and quota: some providers send these as 429, but waiting does not refill an account.
const QUOTA = /insufficient[_ ]quota|quota exceeded|exceeded your (?:current )?quota|billing/i;

// Failures that come back the same on every attempt: credentials, the request itself, what it names.
const PERMANENT = new RegExp(
  [
    'unauthori[sz]ed',
    'forbidden',
    'invalid[ _-]?api[ _-]?key',
    'incorrect api key',
    'no api key',
    'authentication',
    'permission',
    'bad request',
    'invalid_request',
    'unknown model',
    'model\\b[^\\n]*\\bnot (?:found|exist|supported)',
    'no session found',
    'session\\b[^\\n]*\\bnot found',
    'context[ _-]length',
    'context window',
    'maximum context',
    'too many tokens',
  ].join('|'),
  'i',
);

// Failures of the moment: rate limits, an overloaded or failing upstream, the network, a timeout.
const TRANSIENT = new RegExp(
  [
    'rate[ _-]?limit',
    'too many requests',
    'overloaded',
    'high demand',
    'internal server error',
    'bad gateway',
    'service unavailable',
    'gateway time-?out',
    '\\bapi_error\\b',
    'server error',
    'connection (?:error|reset|refused|closed|lost|terminated)',
    'network',
    'socket hang up',
    'fetch failed',
    '\\bterminated\\b',
    'other side closed',
    'timed out',
    '\\btime-?out\\b',
    'ECONNRESET|ECONNREFUSED|ECONNABORTED|ETIMEDOUT|EPIPE|EAI_AGAIN|ENOTFOUND|ENETUNREACH|EHOSTUNREACH|UND_ERR_',
  ].join('|'),
  'i',
);

// pi (and the provider SDKs it uses) start an HTTP error with its status: `429 rate limit ...`.
const LEADING_STATUS = /^\s*(\d{3})(?:\s|$|:)/;

/**
 * The default classifier of `retryAgentRun`: whether a `terminal.failed` is worth another attempt.
 *
 * Retryable: rate limits (429), upstream errors (5xx, `overloaded`), request timeouts and
 * conflicts (408, 409), connection, network and timeout errors, a process killed by a signal
 * the library did not send (the library emits nothing after it stops a run itself), and a fleet
 * run `lost` with its worker or the queue.
 *
 * An idle timeout (`idleTimeoutMs`: the agent printed nothing for that long, a stalled model or
 * stream) is retryable, and so is a session's agent that did not end its turn after an abort
 * (limit `abort`: it hung); a run timeout (`timeoutMs`) is not: the next attempt has the same
 * budget for the same work, and neither is an agent that did not exit after its session's end
 * (limit `end`: the work was done). `stopped` (the host stopped the run) is never retried.
 *
 * Not retryable: `spawn` (the executable is missing), `aborted`, `invalid-output` and
 * `missing-terminal` (the agent and this library disagree about the protocol, or the agent was
 * invoked without a prompt: both come back the same), auth (401, 403), bad requests (400, other
 * 4xx), unknown models and sessions, quota and billing errors (even as 429), exhausted context,
 * and anything not recognised. A non-zero exit is retryable only when the agent's error or the
 * stderr tail says why and that reason is transient (pi exits 1 for startup errors such as an
 * unknown session).
 *
 * It reads the `terminal.failed` fields `reason`, `httpStatus` (the model API's status, which the
 * dialect reports), `agentError` (e.g. pi's `errorMessage`: `429 rate limit exceeded`), `signal`,
 * `exitCode` and `stderr`. `httpStatus` decides first (a billing or quota error stays not
 * retryable even as 429), then an HTTP status at the start of `agentError`, then words.
 *
 * | failure | retryable | why |
 * |---|---|---|
 * | `429` (rate limit), `rate limit`, `too many requests` | yes | waiting helps |
 * | `5xx` (`500`, `502`, `503`, `504`, `529`), `overloaded`, `internal server error`, `service unavailable` | yes | the upstream is failing or overloaded for the moment |
 * | `408` (request timeout), `409` (conflict) | yes | transient by definition |
 * | `Connection error.`, `timed out`, `fetch failed`, `socket hang up`, `ECONNRESET`, `ETIMEDOUT`, `EAI_AGAIN`, … | yes | the network, not the request |
 * | reason `exit` with a `signal`, or an exit code 129–159 (128 + n: pi reports SIGTERM as 143) | yes | a crash or kill the library did not cause |
 * | reason `exit` with another non-zero code | only if `agentError` or the last telling stderr line says one of the above | startup errors (an unknown session, a bad flag) come back the same |
 * | `401`, `403`, `invalid api key`, `unauthorized`, `forbidden` | no | credentials do not fix themselves |
 * | `400` and any other `4xx`, `bad request`, `invalid_request` | no | the same request fails the same way |
 * | unknown model or session (`404`, `unknown model`, `No session found`), context length exceeded | no | what the request names does not exist or does not fit |
 * | quota and billing errors (`insufficient_quota`), even as `429` | no | waiting does not refill an account |
 * | reason `spawn`, `setup`, `aborted`, `stopped` | no | missing executable, unpreparable run, cancelled on purpose, stopped by the host |
 * | reason `lost` | yes | a fleet run's worker or Redis failed, not the request (a retry is a new run, on any worker) |
 * | reason `timeout` with `timeout.limit` `idle` or `abort` | yes | a stalled model or stream; a session's agent that hung after an abort |
 * | reason `timeout` with `timeout.limit` `run` or `end` | no | the next attempt has the same budget for the same work; a session's work was done |
 * | reason `invalid-output`, `missing-terminal` | no | a property of the invocation or the version, not of the moment |
 * | reason `budget` | no | the caller's limit was spent: another attempt spends more |
 * | reason `output-schema` | no | the agent finished its work and answered in the wrong shape: a new run repeats that work (and its tools); repair the answer in a session with a follow-up that quotes `outputIssues` |
 * | anything not recognised | no | a retry costs tokens and may repeat work: add your own rule with `isRetryable` |
 *
 * `retryAfterMs` is set when the agent reports a retry-after hint, and {@link retryAgentRun}'s
 * default delay then waits that long (capped at 30 s). pi does not report one: its error message
 * carries only the status and the body.
 *
 * @example
 * runPi({ prompt }).pipe(retryAgentRun({ isRetryable: (failure) => isRetryableFailure(failure) || failure.reason === 'missing-terminal' }));
 */
export function isRetryableFailure(failure: TerminalFailed): boolean {
  switch (failure.reason) {
    case 'spawn':
    case 'setup':
    case 'aborted':
    case 'invalid-output':
    case 'missing-terminal':
    case 'stopped':
    case 'output-schema':
    case 'budget':
      return false;
    case 'lost':
      // The worker or the queue failed, not the request: like a process killed by a signal.
      return true;
    case 'timeout':
      // A stalled stream or a hung agent is a failure of the moment; a run that outgrew its budget would again.
      return failure.timeout?.limit === 'idle' || failure.timeout?.limit === 'abort';
    case 'agent-error':
      return classifyStatus(failure) ?? classifyText(failure.agentError ?? failure.message) ?? false;
    case 'exit':
      if (failure.signal !== null || killedBySignal(failure.exitCode)) return true;
      return classifyStatus(failure) ?? classifyText(failure.agentError ?? '') ?? classifyStderr(failure.stderr) ?? false;
  }
}

// The HTTP status the dialect reported decides first; billing errors sent as 429 are still not retried.
function classifyStatus(failure: TerminalFailed): boolean | undefined {
  const status = failure.httpStatus;
  if (status === undefined || status < 400 || status > 599) return undefined;
  if (QUOTA.test(failure.agentError ?? failure.message)) return false;
  return isRetryableStatus(status);
}

// The last stderr line that says something decides: an agent's outcome comes last (retried errors
// first, then the one it gave up on). (A failure's message quotes the first meaningful line
// instead: what a person reads first.) Stack frames and Node's version banner say nothing.
function classifyStderr(stderr: string): boolean | undefined {
  const lines = stderr.split('\n');
  for (let i = lines.length - 1; i >= 0; i -= 1) {
    const line = lines[i]?.trim() ?? '';
    if (line === '' || line.startsWith('at ') || /^Node\.js v\d/.test(line)) continue;
    const verdict = classifyText(line);
    if (verdict !== undefined) return verdict;
  }
  return undefined;
}

// 128 + n is how a shell, or a program like pi that handles SIGTERM itself (143), reports death by signal n.
function killedBySignal(exitCode: number | null): boolean {
  return exitCode !== null && exitCode > 128 && exitCode < 128 + 32;
}

// true, false, or undefined when the text says nothing either way.
function classifyText(text: string): boolean | undefined {
  if (text === '') return undefined;
  if (QUOTA.test(text)) return false;
  const status = Number(LEADING_STATUS.exec(text)?.[1]);
  if (status >= 400 && status <= 599) return isRetryableStatus(status);
  if (PERMANENT.test(text)) return false;
  if (TRANSIENT.test(text)) return true;
  return undefined;
}

// 408 request timeout, 409 conflict, 429 too many requests, and 5xx; any other 4xx is the request's fault.
function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}
