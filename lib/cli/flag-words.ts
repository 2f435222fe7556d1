import type { CliMessage, FailureReason, SessionMessage } from '../messages.js';

/**
 * The library's words in a failure's message (they are the API's, and documented), and the
 * command line's for them: its flags, and an interruption for a stop by the host, which on the
 * command line is always a signal (Ctrl-C, SIGTERM, SIGHUP).
 */
const FLAG_WORDS: Readonly<Partial<Record<FailureReason, readonly (readonly [RegExp, string])[]>>> = {
  spawn: [[/or pass `executable`\.$/, 'or pass `--executable <path>`.']],
  timeout: [
    [/\btimeoutMs \(/, '--timeout ('],
    [/\bidleTimeoutMs \(/, '--idle-timeout ('],
    [/\(gracePeriodMs\)/, '(--grace)'],
  ],
  stopped: [[/^the host stopped the (.+) run \(stopAllRuns\)$/, 'the $1 run was interrupted']],
  'output-schema': [[/\boutputSchema\b/, '--output-schema']],
};

/**
 * A failure as a person at the command line reads it: the API's option names in its message
 * (`executable`, `timeoutMs`, `idleTimeoutMs`, `gracePeriodMs`, `outputSchema`) replaced by the flags
 * (`--executable <path>`, `--timeout`, `--idle-timeout`, `--grace`, `--output-schema`), and `stopAllRuns` by an
 * interruption. Other messages pass unchanged; so do all of them with `--json` (they are data).
 */
export function inFlagWords<M extends CliMessage | SessionMessage>(message: M): M {
  if (message.type !== 'terminal.failed' && message.type !== 'turn.failed') return message;
  const words = FLAG_WORDS[message.reason];
  if (words === undefined) return message;
  const text = words.reduce((current, [api, flag]) => current.replace(api, flag), message.message);
  return text === message.message ? message : { ...message, message: text };
}
