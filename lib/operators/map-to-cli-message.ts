import { Observable, type OperatorFunction } from 'rxjs';
import type { CliMessage, TerminalFailed, TerminalMessage, Timeout } from '../messages.js';
import type { Conclusion, MessageMapping } from './dialect.js';
import type { StartFailure } from '../process/items.js';
import type { AgentEvent, PipelineItem, RunExit } from './items.js';
import { terminalFailed } from '../terminal-failed.js';
import { firstMeaningfulLine } from './stderr-lines.js';
import { checkFunction, isObject, property, shown } from './validate.js';

/**
 * Turns pipeline items into `CliMessage`s with a dialect: events become messages, text items
 * become `assistant` and `assistant.thought`, and the exit item becomes exactly one terminal
 * message, decided by precedence:
 *
 * 1. the run could not start → `terminal.failed` `spawn` (the executable: a path that does not exist
 *    or is not executable says so; the dialect's install hint only for a program not found on PATH)
 *    or `setup` (what was prepared before the process, or a recording);
 * 2. the library stopped it while it was listened to → `stopped` (`stopAllRuns()`) or `timeout`
 *    (`timeoutMs`, `idleTimeoutMs`), whatever the agent printed before it was stopped;
 * 3. killed by a signal, or a non-zero exit that the agent did not explain → `terminal.failed`
 *    `exit` (an agent that reported the end of its run with an error, then exited 1, gets 4.);
 * 4. what the dialect concludes from the events (`agent-error`, `aborted`, `terminal.completed`);
 * 5. nothing conclusive → `invalid-output` when invalid lines explain it, else `missing-terminal`.
 *
 * The stream completes after the terminal message. If the source completes without an exit item,
 * a `missing-terminal` failure is emitted, so there is always exactly one terminal message. What a
 * dialect function throws errors the stream instead (a bug, not something the agent did), and the
 * dialect is not called again.
 *
 * ```
 * source:  -e1--a--e2--x|      e = agent events, a = text item, x = exit (code 0)
 * result:  -m1--A--m2--(T|)    A = { type: 'assistant' }, T = { type: 'terminal.completed' }
 * ```
 *
 * @example
 * items.pipe(mapToCliMessage(piDialect())).subscribe((message) => console.log(message.type));
 */
export function mapToCliMessage<S, E extends AgentEvent>(dialect: MessageMapping<S, E>): OperatorFunction<PipelineItem<E>, CliMessage> {
  checkDialect(dialect);
  return (source) =>
    new Observable<CliMessage>((subscriber) => {
      // A createState that throws errors the stream on subscribe (rxjs sends it to subscriber.error).
      const state = dialect.createState();
      let ended = false;
      const end = (terminal: TerminalMessage): void => {
        ended = true;
        subscriber.next(terminal);
        subscriber.complete();
      };
      // The dialect is user code: what it throws errors the stream, as rxjs does for user code (a
      // throw out of this observer would be lost), and the dialect is not called again.
      const fail = (error: unknown): void => {
        ended = true;
        subscriber.error(error);
      };
      const subscription = source.subscribe({
        next: (item) => {
          if (ended) return;
          try {
            switch (item.kind) {
              case 'event':
                for (const message of dialect.map(state, item.event)) subscriber.next(message);
                return;
              case 'text':
                subscriber.next(item.channel === 'assistant' ? { type: 'assistant', text: item.text } : { type: 'assistant.thought', text: item.text });
                return;
              case 'withdraw':
                // Thinking is withdrawn where it is held (bufferThinkingUntilTurnEnd); a thought already shown stays.
                if (item.channel === 'assistant') subscriber.next({ type: 'assistant.withdrawn', text: item.text });
                return;
              case 'exit':
                end(terminalAtExit(dialect, state, item));
                return;
              case 'stderr-line':
                if (dialect.mapStderrLine !== undefined) for (const message of dialect.mapStderrLine(state, item.text)) subscriber.next(message);
                return;
              case 'invalid':
                return;
            }
          } catch (error: unknown) {
            fail(error);
          }
        },
        error: (error: unknown) => {
          subscriber.error(error);
        },
        complete: () => {
          if (ended) return;
          try {
            end(failure(dialect, state, null, 'missing-terminal', `the ${dialect.name} output ended without an exit`));
          } catch (error: unknown) {
            fail(error);
          }
        },
      });
      return subscription;
    });
}

const DIALECT_FUNCTIONS = ['createState', 'map', 'conclude', 'lastError', 'sessionId'] as const;

function checkDialect(dialect: unknown): void {
  if (!isObject(dialect)) throw new TypeError(`agent-rx: mapToCliMessage takes a dialect object; got ${shown(dialect)}`);
  const name = property(dialect, 'name');
  if (typeof name !== 'string') throw new TypeError(`agent-rx: the dialect's name must be a string; got ${shown(name)}`);
  for (const key of DIALECT_FUNCTIONS) checkFunction(property(dialect, key), `the ${name} dialect's ${key}`);
  for (const key of ['failureDetails', 'stderrLine', 'mapStderrLine'] as const) {
    const optional = property(dialect, key);
    if (optional !== undefined) checkFunction(optional, `the ${name} dialect's ${key}`);
  }
  const hint = property(dialect, 'installHint');
  if (hint !== undefined && typeof hint !== 'string') throw new TypeError(`agent-rx: the ${name} dialect's installHint must be a string; got ${shown(hint)}`);
}

/**
 * The terminal message for a run's exit item, by the precedence `mapToCliMessage` documents.
 * `conclusion` replaces what the dialect concludes from its events (a session decides it from its
 * turns).
 */
export function terminalAtExit<S, E extends AgentEvent>(dialect: MessageMapping<S, E>, state: S, exit: RunExit, conclusion?: Conclusion): TerminalMessage {
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
  if (stopped !== undefined) {
    if (stopped.kind === 'host') return failure(dialect, state, exit, 'stopped', `the host stopped the ${name} run (stopAllRuns)`);
    return { ...failure(dialect, state, exit, 'timeout', `${timeoutText(name, stopped.limit, stopped.ms)}; it was stopped`), timeout: { limit: stopped.limit, ms: stopped.ms } };
  }
  conclusion ??= dialect.conclude(state);
  const explained = exit.signal === null && conclusion.kind === 'failed' && conclusion.ended;
  if ((exit.signal !== null || exit.exitCode !== 0) && !explained) {
    const how = exit.signal !== null ? `was killed by ${exit.signal}` : `exited with code ${String(exit.exitCode)}`;
    // A tail that was cut begins mid-line: that part of a line is left out.
    const stderr = exit.stderrTruncatedBytes > 0 ? exit.stderr.slice(exit.stderr.indexOf('\n') + 1) : exit.stderr;
    const stderrLine = dialect.stderrLine === undefined ? firstMeaningfulLine(stderr) : dialect.stderrLine(stderr);
    const detail = [stderrLine, dialect.lastError(state)].filter((part) => part !== undefined && part !== '');
    return failure(dialect, state, exit, 'exit', `${name} ${how}${detail.length > 0 ? `: ${detail.join(' | ')}` : ''}`);
  }
  if (conclusion.kind === 'completed') {
    const sessionId = dialect.sessionId(state);
    return {
      type: 'terminal.completed',
      stopReason: conclusion.stopReason,
      ...(conclusion.agentStopReason === undefined ? {} : { agentStopReason: conclusion.agentStopReason }),
      ...(conclusion.usage === undefined ? {} : { usage: conclusion.usage }),
      ...(sessionId === undefined ? {} : { sessionId }),
    };
  }
  if (conclusion.kind === 'failed') return failure(dialect, state, exit, conclusion.reason, conclusion.message);
  const invalid = exit.invalidOutput;
  if (invalid !== undefined && invalid.lines.length + invalid.omitted > 0) {
    const count = invalid.lines.length + invalid.omitted;
    const first = invalid.lines[0];
    const example = first === undefined ? '' : ` (line ${first.lineNumber}: ${first.reason}, ${first.detail})`;
    return failure(dialect, state, exit, 'invalid-output', `${conclusion.message}; ${count} line(s) of output were not understood${example}`);
  }
  return failure(dialect, state, exit, 'missing-terminal', conclusion.message);
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
export function timeoutText(name: string, limit: Timeout['limit'], ms: number): string {
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
