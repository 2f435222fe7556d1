import type { TerminalFailed, TerminalMessage, Timeout } from '../messages.js';
import { budgetText } from './budget-text.js';
import type { StartFailure } from '../process/items.js';
import { terminalFailed } from '../terminal-failed.js';
import type { Conclusion, MessageMapping } from './dialect.js';
import type { AgentEvent, RunExit } from './items.js';
import { firstMeaningfulLine } from './stderr-lines.js';

/**
 * The terminal message for a run's exit item, by the precedence `mapToCliMessage` documents: the
 * run could not start (`spawn`, `setup`); the library stopped it (`stopped`, `timeout`); a signal
 * or a non-zero exit the agent did not explain (`exit`); what the dialect concludes from the
 * events; else `invalid-output` or `missing-terminal`.
 */
export function terminalAtExit<S, E extends AgentEvent>(dialect: MessageMapping<S, E>, state: S, exit: RunExit): TerminalMessage {
  const early = failureBeforeConclusion(dialect, state, exit);
  if (early !== null) return early;
  const conclusion = dialect.conclude(state);
  const unexplained = unexplainedExit(dialect, state, exit, conclusion);
  if (unexplained !== null) return unexplained;
  switch (conclusion.kind) {
    case 'completed': {
      const sessionId = dialect.sessionId(state);
      return {
        type: 'terminal.completed',
        stopReason: conclusion.stopReason,
        ...(conclusion.agentStopReason === undefined ? {} : { agentStopReason: conclusion.agentStopReason }),
        ...(conclusion.usage === undefined ? {} : { usage: conclusion.usage }),
        ...(sessionId === undefined ? {} : { sessionId }),
        ...(conclusion.output === undefined ? {} : { output: conclusion.output }),
      };
    }
    case 'failed': {
      const failed = failure(dialect, state, exit, conclusion.reason, conclusion.message);
      return {
        ...failed,
        ...(conclusion.outputIssues === undefined ? {} : { outputIssues: [...conclusion.outputIssues] }),
        ...(conclusion.answer === undefined ? {} : { answer: conclusion.answer }),
      };
    }
    case 'inconclusive':
      return inconclusive(dialect, state, exit, conclusion.message);
  }
}

/**
 * The failure for the exit of a session's process: as for a run, except that the events conclude
 * nothing (the session's turns took what they said): an exit that nothing else explains is
 * `invalid-output` or `missing-terminal`, with `message`.
 */
export function sessionExitFailure<S, E extends AgentEvent>(dialect: MessageMapping<S, E>, state: S, exit: RunExit, message: string): TerminalFailed {
  return (
    failureBeforeConclusion(dialect, state, exit) ??
    unexplainedExit(dialect, state, exit, { kind: 'inconclusive', message }) ??
    inconclusive(dialect, state, exit, message)
  );
}

/**
 * The failure for the output of a run that ended without an exit item (`missing-terminal`).
 */
export function missingExitFailure<S, E extends AgentEvent>(dialect: MessageMapping<S, E>, state: S): TerminalFailed {
  return failure(dialect, state, null, 'missing-terminal', `the ${dialect.name} output ended without an exit`);
}

/** A run that could not start, or that the library stopped: whatever the agent said before. */
function failureBeforeConclusion<S, E extends AgentEvent>(dialect: MessageMapping<S, E>, state: S, exit: RunExit): TerminalFailed | null {
  const name = dialect.name;
  const start = exit.startError;
  if (start !== null) {
    // The code once; the first line of the error.
    const first = (start.message.split('\n')[0] ?? '').replace(/\.$/, '');
    const detail = first.includes(start.code) ? first : `${start.code}: ${first}`;
    if (start.stage === 'setup') return failure(dialect, state, exit, 'setup', `the ${name} run could not be prepared: ${detail}`);
    if (start.stage === 'input') return failure(dialect, state, exit, 'setup', `the ${name} run's input could not be read: ${detail}`);
    return failure(dialect, state, exit, 'spawn', `${name} could not be started: ${cannotStart(start, detail, dialect.installHint)}`);
  }
  const stopped = exit.stoppedBy;
  if (stopped === undefined) return null;
  if (stopped.kind === 'host') return failure(dialect, state, exit, 'stopped', `the host stopped the ${name} run (stopAllRuns)`);
  if (stopped.kind === 'budget') return { ...failure(dialect, state, exit, 'budget', `the ${name} run was stopped: ${budgetText(stopped.exceeded)}`), budget: stopped.exceeded };
  return { ...failure(dialect, state, exit, 'timeout', `${timeoutText(name, stopped.limit, stopped.ms)}; it was stopped`), timeout: { limit: stopped.limit, ms: stopped.ms } };
}

/** Killed by a signal, or a non-zero exit that the agent did not explain by reporting the end of its run with an error. */
function unexplainedExit<S, E extends AgentEvent>(dialect: MessageMapping<S, E>, state: S, exit: RunExit, conclusion: Conclusion): TerminalFailed | null {
  const explained = exit.signal === null && conclusion.kind === 'failed' && conclusion.ended;
  if ((exit.signal === null && exit.exitCode === 0) || explained) return null;
  const how = exit.signal !== null ? `was killed by ${exit.signal}` : `exited with code ${String(exit.exitCode)}`;
  // A tail that was cut begins mid-line: that part of a line is left out.
  const stderr = exit.stderrTruncatedBytes > 0 ? exit.stderr.slice(exit.stderr.indexOf('\n') + 1) : exit.stderr;
  const stderrLine = dialect.stderrLine === undefined ? firstMeaningfulLine(stderr) : dialect.stderrLine(stderr);
  const detail = [stderrLine, dialect.lastError(state)].filter((part) => part !== undefined && part !== '');
  return failure(dialect, state, exit, 'exit', `${dialect.name} ${how}${detail.length > 0 ? `: ${detail.join(' | ')}` : ''}`);
}

/** Nothing conclusive: `invalid-output` when invalid lines explain it, else `missing-terminal`. */
function inconclusive<S, E extends AgentEvent>(dialect: MessageMapping<S, E>, state: S, exit: RunExit, message: string): TerminalFailed {
  const invalid = exit.invalidOutput;
  if (invalid !== undefined && invalid.lines.length + invalid.omitted > 0) {
    const count = invalid.lines.length + invalid.omitted;
    const first = invalid.lines[0];
    const example = first === undefined ? '' : ` (line ${first.lineNumber}: ${first.reason}, ${first.detail})`;
    return failure(dialect, state, exit, 'invalid-output', `${message}; ${count} line(s) of output were not understood${example}`);
  }
  return failure(dialect, state, exit, 'missing-terminal', message);
}

/**
 * Why a program could not be started, in words: what the file system showed (a path that does
 * not exist, a file that is not executable, a missing working directory), else the error itself;
 * the install hint only for a program looked up on PATH, not for a path the caller gave.
 */
function cannotStart(start: StartFailure, detail: string, installHint: string | undefined): string {
  const problem = start.problem;
  switch (problem?.kind) {
    case 'not-on-path':
      return `${detail}.${installHint === undefined ? '' : ` ${installHint}`}`;
    case 'missing':
      return `${problem.path} does not exist (${start.code}).`;
    case 'not-executable':
      return `${problem.path} is not executable (${start.code}); \`chmod +x ${shellWord(problem.path)}\` makes it so.`;
    case 'directory':
      return `${problem.path} is a directory, not a program (${start.code}).`;
    case 'missing-cwd':
      return `its working directory ${problem.cwd} does not exist (${start.code}).`;
    case 'cwd-not-directory':
      return `its working directory ${problem.cwd} is not a directory (${start.code}).`;
    case undefined:
      return `${detail}.`;
  }
}

// A path as one word for a POSIX shell: single-quoted when it has anything a shell would read.
function shellWord(path: string): string {
  return /^[\w@%+=:,./-]+$/.test(path) ? path : `'${path.replaceAll("'", `'\\''`)}'`;
}

/** What ran out, in words: `the pi run took longer than timeoutMs (500 ms)`. */
function timeoutText(name: string, limit: Timeout['limit'], ms: number): string {
  switch (limit) {
    case 'run':
      return `the ${name} run took longer than timeoutMs (${ms} ms)`;
    case 'idle':
      return `${name} printed nothing for idleTimeoutMs (${ms} ms)`;
    case 'abort':
      return `${name} did not end its turn within ${ms} ms of the abort (gracePeriodMs)`;
    case 'end':
      return `${name} did not exit within ${ms} ms of the end of the session (gracePeriodMs)`;
  }
}

/** A failure with the exit's evidence (none without an exit) and what the dialect knows of the agent's error and session. */
function failure<S, E extends AgentEvent>(
  dialect: MessageMapping<S, E>,
  state: S,
  exit: RunExit | null,
  reason: TerminalFailed['reason'],
  message: string,
): TerminalFailed {
  const agentError = dialect.lastError(state);
  const sessionId = dialect.sessionId(state);
  const details = dialect.failureDetails?.(state, exit) ?? {};
  const invalid = exit?.invalidOutput;
  return terminalFailed(reason, message, {
    exitCode: exit?.exitCode,
    signal: exit?.signal,
    stderr: exit?.stderr,
    stderrTruncatedBytes: exit?.stderrTruncatedBytes,
    invalidOutputLines: invalid === undefined ? undefined : [...invalid.lines],
    invalidOutputLinesOmitted: invalid?.omitted,
    agentError,
    httpStatus: details.httpStatus,
    retryAfterMs: details.retryAfterMs,
    sessionId,
  });
}
