import { Observable, type OperatorFunction } from 'rxjs';
import type { CliMessage, SessionResumed, SessionStarted, TerminalMessage } from '../messages.js';
import { currentRunScope, RunScope } from '../process/run-scope.js';
import type { MessageMapping } from './dialect.js';
import { emitItemMessages } from './item-messages.js';
import type { AgentEvent, PipelineItem } from './items.js';
import { missingExitFailure, terminalAtExit } from './terminal-at-exit.js';
import { UnknownTypes } from './unknown-types.js';
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
 * The first event of each type the dialect does not know (its `unknownType`) is said with an
 * `agent.warning` before what the event stands for (nothing, mostly): once per type in a run.
 *
 * The stream completes after the terminal message. If the source completes without an exit item,
 * a `missing-terminal` failure is emitted, so there is always exactly one terminal message. What a
 * dialect function throws errors the stream instead (a bug, not something the agent did), and the
 * dialect is not called again.
 *
 * ```
 * source:  -e1--a--e2--x|      e = agent events, a = text item, x = exit (code 0)
 * result:  -m1--A--m2--(T|)    A = { type: 'assistant' }, T = { type: 'terminal.completed' }
 *
 * source:  -u--u--x|           u = an event of a type the dialect does not know
 * result:  -w-----(T|)         w = { type: 'agent.warning' } (once for its type)
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
      const unknown = new UnknownTypes(dialect);
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
      // The process this subscription starts, if it starts one: where its session message says the agent is.
      const scope = new RunScope(currentRunScope());
      const emit = (message: CliMessage): void => {
        subscriber.next(message.type === 'session.started' || message.type === 'session.resumed' ? withProcess(message, scope) : message);
      };
      const subscription = scope.run(() => source.subscribe({
        next: (item) => {
          if (ended) return;
          try {
            if (item.kind === 'exit') {
              end(terminalAtExit(dialect, state, item));
              return;
            }
            const warning = item.kind === 'event' ? unknown.see(item.event) : undefined;
            if (warning !== undefined) emit(warning);
            emitItemMessages(dialect, state, item, emit);
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
            end(missingExitFailure(dialect, state));
          } catch (error: unknown) {
            fail(error);
          }
        },
      }));
      return subscription;
    });
}

/** A session message with the pid and process group of the process its subscription started (none for a recording). */
function withProcess<M extends SessionStarted | SessionResumed>(message: M, scope: RunScope): M {
  if (message.pid !== undefined) return message;
  for (const control of scope.controls()) {
    const facts = control.process?.();
    if (facts !== null && facts !== undefined) return { ...message, pid: facts.pid, processGroup: facts.processGroup };
  }
  return message;
}


const DIALECT_FUNCTIONS = ['createState', 'map', 'conclude', 'lastError', 'sessionId'] as const;

function checkDialect(dialect: unknown): void {
  if (!isObject(dialect)) throw new TypeError(`agent-rx: mapToCliMessage takes a dialect object; got ${shown(dialect)}`);
  const name = property(dialect, 'name');
  if (typeof name !== 'string') throw new TypeError(`agent-rx: the dialect's name must be a string; got ${shown(name)}`);
  for (const key of DIALECT_FUNCTIONS) checkFunction(property(dialect, key), `the ${name} dialect's ${key}`);
  for (const key of ['failureDetails', 'stderrLine', 'mapStderrLine', 'unknownType'] as const) {
    const optional = property(dialect, key);
    if (optional !== undefined) checkFunction(optional, `the ${name} dialect's ${key}`);
  }
  const hint = property(dialect, 'installHint');
  if (hint !== undefined && typeof hint !== 'string') throw new TypeError(`agent-rx: the ${name} dialect's installHint must be a string; got ${shown(hint)}`);
}
