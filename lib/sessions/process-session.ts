import { randomUUID } from 'node:crypto';
import { asyncScheduler, Observable, Subject, type OperatorFunction, type SchedulerLike } from 'rxjs';
import type { AgentWarning, CliMessage, PermissionDecision, SessionCommand, SessionMessage } from '../messages.js';
import { dialectItems } from '../operators/agent-output-to-messages.js';
import type { Dialect } from '../operators/dialect.js';
import { emitItemMessages } from '../operators/item-messages.js';
import type { PipelineItem } from '../operators/items.js';
import { sessionExitFailure } from '../operators/terminal-at-exit.js';
import { UnknownTypes } from '../operators/unknown-types.js';
import type { ProcessItem } from '../process/items.js';
import { resolveProcessOptions, type ProcessOptions } from '../process/options.js';
import { startTimeNow } from '../process/proc-stat.js';
import type { ProcessRun } from '../process/process-run.js';
import { currentRunScope } from '../process/run-scope.js';
import type { RunOverlay } from '../process/overlay.js';
import { InputQueue } from './input-queue.js';
import { OutputWatch } from '../operators/turn-output.js';
import { prepareCommand } from './prepare-command.js';
import type { PermissionPolicy } from '../operators/permission-policy.js';
import type { ProtocolReaction, SessionProtocol } from '../operators/session-protocol.js';
import { PermissionDesk } from './permission-desk.js';
import { ProtocolLink } from './protocol-link.js';
import { startSessionProcess } from './session-process.js';
import { INITIAL_SESSION_STATE, OPENING_SESSION_STATE, sessionTransition, type SessionEffect, type SessionInputEvent } from './session-machine.js';
import { SessionTimers } from './session-timers.js';
import { StdinChannel } from './stdin-channel.js';
import { traceContextOf } from '../process/trace-context.js';

/** Everything a session needs of one agent: its process, its dialect (content) and its protocol (turns). */
export interface SessionSpec<S, P> {
  /** The agent's executable, run without a shell. */
  readonly command: string;
  /** Its arguments (the protocol's own `args` follow them). */
  readonly args: readonly string[];
  /**
   * The process options. `timeoutMs` limits the whole session; `idleTimeoutMs` counts only while a
   * turn runs, and aborts that turn (which then fails with `timeout`); `gracePeriodMs` is also how
   * long an abort may take to end the turn, and the agent to exit after its input ended, before the
   * session is stopped.
   */
  readonly processOptions: Omit<ProcessOptions, 'stdin'>;
  /** How the agent's content (text, thinking, tools) becomes messages, inside each turn. */
  readonly dialect: Dialect<S>;
  /** How the agent's interactive mode is driven: turns, steers, aborts. */
  readonly protocol: SessionProtocol<P>;
  /** A configuration overlay made for each session (pi without its retries). */
  readonly overlay?: RunOverlay;
  /**
   * How the agent's permission requests are answered (those its protocol reports). Default
   * `deny-all`: each request is said and denied at once.
   */
  readonly permission?: PermissionPolicy;
  /** How long `ask` and a callback may take to answer a request before it is denied (`deadline`). Default 300000 (5 minutes). */
  readonly permissionTimeoutMs?: number;
  /** Tools the agent may use without asking the policy (an MCP server's the caller trusts): allowed by `policy` at once. */
  readonly trusted?: (tool: string) => boolean;
  /** For the idle, abort and end limits. Default `asyncScheduler`. */
  readonly scheduler?: SchedulerLike;
}

/** How long `ask` and a permission callback may take by default: 5 minutes. */
export const DEFAULT_PERMISSION_TIMEOUT_MS = 300_000;

/**
 * A session on one agent process: an operator from a stream of commands to the session's
 * messages. Each subscription spawns one process, which lives until the command stream completes
 * (then the session ends after the running turn: the agent's input is closed and it exits) or the
 * subscriber leaves (then the stop sequence runs, as for a one-shot run). The session machine
 * decides the turns; the protocol speaks the agent's interactive mode; the dialect maps content.
 * The first event of each type the dialect does not know is said once in the session, with an
 * `agent.warning` (one that came between turns, at the start of the next turn: content lies inside
 * turns).
 *
 * @example
 * // What piSession does, by hand: pi's RPC mode, its dialect for the content, its protocol for the turns.
 * commands
 *   .pipe(
 *     processSession({
 *       command: 'pi',
 *       args: ['--mode', 'rpc'],
 *       processOptions: { interrupt: { signal: 'SIGTERM' } }, // pi ends its tool commands on SIGTERM
 *       dialect: piDialect(),
 *       protocol: piSessionProtocol(),
 *     }),
 *   )
 *   .subscribe(render);
 */
export function processSession<S, P>(spec: SessionSpec<S, P>): OperatorFunction<SessionCommand, SessionMessage> {
  const { command, args, dialect, protocol, overlay } = spec;
  const scheduler = spec.scheduler ?? asyncScheduler;
  // Checked now: a programmer error throws here, not at subscribe time.
  const checked = resolveProcessOptions(command, args, spec.processOptions);
  // The session counts silence only while a turn runs: the process itself has no idle limit.
  const resolved = { ...checked, idleTimeoutMs: undefined };
  const exitedMessage = `${dialect.name} exited while the session was open`;
  const permission = spec.permission ?? 'deny-all';
  const permissionTimeoutMs = spec.permissionTimeoutMs ?? DEFAULT_PERMISSION_TIMEOUT_MS;
  const abilities = { image: protocol.prompts?.image ?? false, file: true, ...(protocol.prompts?.nativeOutput === true ? { nativeOutput: true } : {}) };
  const who = `${protocol.name} sessions`;
  return (commands) =>
    new Observable<SessionMessage>((subscriber) => {
      const stdin = new StdinChannel();
      const items = new Subject<ProcessItem>();
      let run: ProcessRun | null = null;
      let over = false;

      // The dialect and the protocol are code of their own: what they throw errors the stream (a
      // bug, not something the agent did), and the teardown stops the process.
      const guarded = (work: () => void): void => {
        try {
          work();
        } catch (error: unknown) {
          over = true;
          subscriber.error(error);
        }
      };
      // The agent's requests not answered yet: how to answer each, by the id the session gave it.
      const answers = new Map<string, (decision: PermissionDecision) => ProtocolReaction>();
      const desk = new PermissionDesk(permission, permissionTimeoutMs, scheduler, {
        decided: (requestId, decision, by) => {
          dispatch({ type: 'permissionDecided', requestId, decision, by });
        },
        fail: (error) => {
          guarded(() => {
            throw error;
          });
        },
      }, spec.trusted);
      const answer = (requestId: string, decision: PermissionDecision): void => {
        desk.forget(requestId);
        const respond = answers.get(requestId);
        if (respond === undefined) return;
        answers.delete(requestId);
        link.channel.react(respond(decision));
      };
      const link = new ProtocolLink(protocol, {
        stdin,
        killTools: (bornSince) => run?.killDescendants(bornSince) ?? null,
        now: startTimeNow,
        fact: (fact) => {
          if (fact.type === 'permission') {
            const requestId = randomUUID();
            answers.set(requestId, (decision) => fact.answer(decision));
            dispatch({ type: 'permissionRequested', request: { requestId, ...fact.request } });
            return;
          }
          dispatch(fact);
        },
        live: () => !over,
        guard: guarded,
      });
      // An agent that reports its session before the first prompt: the commands wait for it.
      let machine = link.announcesSession() ? OPENING_SESSION_STATE : INITIAL_SESSION_STATE;
      // The dialect reads each later turn afresh: an id the agent used in an earlier turn (a tool
      // call's) is a new one in a later turn.
      let contentState = dialect.createState();
      // Types of events the dialect does not know, said once per session; those seen between turns
      // wait for the next turn.
      const unknown = new UnknownTypes(dialect);
      const heldWarnings: AgentWarning[] = [];
      const timers = new SessionTimers(scheduler, {
        idleMs: checked.idleTimeoutMs,
        graceMs: checked.gracePeriodMs,
        idleExpired: (ms) => {
          dispatch({ type: 'idleExpired', ms });
        },
        stop: (cause) => {
          run?.stop(cause);
        },
      });
      // One input at a time, each with all its effects, even when an effect (an emitted message)
      // makes the subscriber send a command at once.
      const inputs = new InputQueue<SessionInputEvent>((input) => {
        const transition = sessionTransition(machine, input);
        machine = transition.state;
        for (const effect of transition.effects) perform(effect);
      });
      const dispatch = (input: SessionInputEvent): void => {
        inputs.push(input);
      };

      // The running turn's answer, when its command gave an outputSchema: checked at its end.
      let watch: OutputWatch | null = null;
      const perform = (effect: SessionEffect): void => {
        switch (effect.type) {
          case 'emit': {
            const said = effect.message;
            // Where the agent is: its session message says its pid and process group.
            const facts = said.type === 'session.started' || said.type === 'session.resumed' ? run?.facts : null;
            const message = facts === null || facts === undefined ? said : { ...said, pid: facts.pid, processGroup: facts.processGroup };
            if (watch !== null) {
              if (message.type === 'turn.completed') {
                const turnWatch = watch;
                watch = null;
                // A schema that throws (a refine of the caller's) errors the stream, as a throwing callback does.
                guarded(() => {
                  subscriber.next(turnWatch.completeTurn(message));
                });
                return;
              }
              if (message.type === 'turn.failed') watch = null;
              else watch.see(message);
            }
            subscriber.next(message);
            return;
          }
          case 'start':
            watch = effect.input.output === undefined ? null : new OutputWatch(effect.input.output);
            // The first turn keeps what was read before it (what the agent said while the session
            // opened, e.g. why it could not).
            if (effect.turn > 1) contentState = dialect.createState();
            for (const warning of heldWarnings.splice(0)) content(warning);
            link.ask(withTrace(effect));
            return;
          case 'steer':
          case 'abort':
          case 'end':
            link.ask(effect);
            return;
          case 'watchIdle':
            timers.watchIdle(effect.on);
            return;
          case 'watchAbort':
            timers.watchAbort(effect.on);
            return;
          case 'watchEnd':
            timers.watchEnd();
            return;
          case 'decidePermission':
            desk.decide(effect.request);
            return;
          case 'answerPermission':
            answer(effect.requestId, effect.decision);
            return;
          case 'complete':
            over = true;
            desk.clear();
            timers.clear();
            link.close();
            subscriber.complete();
            return;
        }
      };

      // The agent's content, read through the dialect as a run's is; its events also go to the protocol.
      const content = (message: CliMessage): void => {
        dispatch({ type: 'content', message });
      };
      const onItem = (item: PipelineItem): void => {
        if (over) return;
        guarded(() => {
          if (item.kind === 'exit') {
            const failure = sessionExitFailure(dialect, contentState, item, exitedMessage);
            dispatch({ type: 'exited', clean: link.cleanExit(item), failure });
            return;
          }
          const warning = item.kind === 'event' ? unknown.see(item.event) : undefined;
          if (warning !== undefined) {
            if (machine.phase === 'busy' || machine.phase === 'aborting') content(warning);
            else heldWarnings.push(warning);
          }
          emitItemMessages(dialect, contentState, item, content);
          if (item.kind === 'event') link.read(item.event);
        });
      };

      const pipeline = items.pipe(dialectItems(dialect)).subscribe({
        next: onItem,
        error: (error: unknown) => {
          over = true;
          subscriber.error(error);
        },
      });

      // The process (unless the pipeline failed already): its stdin is the channel, its own idle
      // limit off (the session's counts only in turns).
      if (!subscriber.closed) {
        run = startSessionProcess(command, [...args, ...link.args()], { ...resolved, stdin: stdin.stream }, overlay, {
          frame: (frame) => {
            timers.activity();
            items.next(frame);
          },
          exit: (exit) => {
            items.next(exit);
          },
          // A host stop or a time limit: nothing waits on an approval nobody will give, before any signal.
          stopping: () => {
            if (!over) guarded(() => {
              dispatch({ type: 'settlePermissions', by: 'run-end' });
            });
          },
        });
        if (run !== null) link.open();
      }
      // A budget around the session aborts its running turn; a trace around it gives each turn its context.
      const scope = currentRunScope();
      const withTrace = (effect: Extract<SessionEffect, { type: 'start' }>): Extract<SessionEffect, { type: 'start' }> => {
        const trace = traceContextOf(scope?.turnEnv, 'env');
        return trace === undefined ? effect : { ...effect, trace };
      };
      const detach = scope?.attach({
        abortTurn: (exceeded) => {
          if (over || machine.phase !== 'busy') return false;
          guarded(() => {
            dispatch({ type: 'budgetExceeded', exceeded });
          });
          return true;
        },
      });

      const input = subscriber.closed
        ? null
        : commands.subscribe({
            next: (command) => {
              guarded(() => {
                dispatch({ type: 'command', command: prepareCommand(command, abilities, who, resolved.cwd) });
              });
            },
            error: (error: unknown) => {
              over = true;
              subscriber.error(error);
            },
            complete: () => {
              guarded(() => {
                dispatch({ type: 'inputsCompleted' });
              });
            },
          });

      return () => {
        // Nothing waits on an approval nobody will give: the agent is denied each pending request
        // before it is interrupted.
        detach?.();
        desk.clear();
        if (!over) for (const requestId of [...answers.keys()]) answer(requestId, 'deny');
        over = true;
        link.close();
        input?.unsubscribe();
        timers.clear();
        run?.stop({ kind: 'unsubscribe' });
        pipeline.unsubscribe();
      };
    });
}
