// Caller-side retries that resume the failed attempt's pi session, so that a retry continues the
// conversation instead of starting over.
//
//   npx tsx examples/retry-resume.ts           offline: the bundled replay agent fails once (HTTP 500), then answers
//   npx tsx examples/retry-resume.ts --real    the `pi` on PATH
//
// Offline, the replay agent only plays recordings: it accepts `--session <id>` but does not load
// the session, so it shows the mechanics (which attempt resumes which session, with which prompt).
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defer, tap, type Observable } from 'rxjs';
import { retryAgentRun, runPi, type CliMessage, type RetryAgentRunOptions, type RunPiOptions, type TerminalFailed } from '../lib/index.js';

/** The prompt of a resumed attempt: the original prompt is already in the session. */
export const CONTINUE_PROMPT = 'The previous attempt failed before it finished. Continue where you left off.';

/** What a retry resumes: the session of a failed attempt. */
export interface Resume {
  readonly sessionId: string;
  readonly failure: TerminalFailed;
}

/**
 * The session a failed attempt leaves to resume, if any. pi saves a session once it holds an
 * assistant message, and an error reply counts (`agentError`); a run killed before its first reply
 * saved nothing, and `--session <id>` would then fail with "No session found".
 */
export function resumable(failure: TerminalFailed): Resume | undefined {
  return failure.sessionId !== undefined && failure.agentError !== undefined ? { sessionId: failure.sessionId, failure } : undefined;
}

/**
 * Runs attempts with `retryAgentRun`; `attempt(resume)` builds each one. `resume` is `undefined`
 * for the first attempt (and for retries while no failed attempt left a session), else the
 * latest session to resume.
 */
export function retryResumingSession(
  attempt: (resume: Resume | undefined) => Observable<CliMessage>,
  options: RetryAgentRunOptions = {},
): Observable<CliMessage> {
  return defer(() => {
    // Per subscription: two subscribers never resume each other's sessions.
    let resume: Resume | undefined;
    return defer(() => attempt(resume)).pipe(
      // Upstream of retryAgentRun, so it also sees the failures that the retry swallows.
      tap((message) => {
        if (message.type === 'terminal.failed') resume = resumable(message) ?? resume;
      }),
      retryAgentRun(options),
    );
  });
}

/** runPi options for an attempt: the original run, or a continuation of `resume`'s session. */
export function resumeOptions(options: RunPiOptions, resume: Resume | undefined, continuePrompt = CONTINUE_PROMPT): RunPiOptions {
  return resume === undefined ? options : { ...options, session: { id: resume.sessionId }, prompt: continuePrompt };
}

const REPLAY_SCRIPT = fileURLToPath(new URL('./replay-agent/pi-replay.mjs', import.meta.url));

// Offline stand-in for a provider that fails once: the first attempt replays an HTTP 500, the rest an answer.
function replayed(resume: Resume | undefined): RunPiOptions {
  return {
    prompt: 'Say hello.',
    executable: process.execPath,
    executableArgs: [REPLAY_SCRIPT],
    model: resume === undefined ? 'http500_noretry' : 'text',
    env: { PI_REPLAY_SPEED: '0.3' },
  };
}

function main(real: boolean): void {
  const run$ = retryResumingSession((resume) => runPi(resumeOptions(real ? { prompt: 'Say hello.' } : replayed(resume), resume)), {
    maxAttempts: 3,
  });
  run$.subscribe((message) => {
    switch (message.type) {
      case 'session.started':
        process.stdout.write(`session ${message.sessionId}\n`);
        break;
      case 'assistant':
        process.stdout.write(message.text);
        break;
      case 'run.retrying': {
        const resume = resumable(message.failure);
        const how = resume === undefined ? 'in a new session' : `resuming session ${resume.sessionId}`;
        const why = message.failure.agentError ?? message.failure.message;
        process.stdout.write(`⟳ ${why}: attempt ${message.attempt} in ${message.delayMs} ms, ${how}\n`);
        break;
      }
      case 'terminal.completed':
        process.stdout.write(`\ndone (${message.stopReason})\n`);
        break;
      case 'terminal.failed':
        process.stdout.write(`\nfailed (${message.reason}): ${message.message}\n`);
        process.exitCode = 1;
        break;
      default:
        break;
    }
  });
}

// Runs only as a script, so the helpers above can be imported.
function isEntryPoint(): boolean {
  try {
    return process.argv[1] !== undefined && realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isEntryPoint()) main(process.argv.includes('--real'));
