import { asyncScheduler, Observable, Subject, type OperatorFunction, type SchedulerLike, type Subscription } from 'rxjs';
import type { SessionCommand, SessionMessage, TerminalFailed } from '../messages.js';
import { dialectItems } from '../operators/agent-output-to-messages.js';
import type { Dialect } from '../operators/dialect.js';
import type { PipelineItem, RunExit } from '../operators/items.js';
import { terminalAtExit } from '../operators/map-to-cli-message.js';
import type { SettingsOverlay } from '../agents/shared/settings-overlay.js';
import { hostTempDir } from '../process/host-temp.js';
import type { ProcessItem } from '../process/items.js';
import { resolveProcessOptions, type ProcessOptions } from '../process/options.js';
import { startProcessRun, type ProcessRun } from '../process/process-run.js';
import { errorMessage } from '../process/error-message.js';
import { startTimeNow } from '../process/proc-stat.js';
import { setupFailure } from '../process/unstarted-exit.js';
import type { RunOverlay } from '../sources/overlay-run.js';
import type { ProtocolChannel, ProtocolOutput, ProtocolReaction, SessionProtocol } from './protocol.js';
import { INITIAL_SESSION_STATE, OPENING_SESSION_STATE, sessionTransition, type SessionEffect, type SessionInputEvent } from './session-machine.js';
import { StdinChannel } from './stdin-channel.js';

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
  /** For the idle, abort and end limits. Default `asyncScheduler`. */
  readonly scheduler?: SchedulerLike;
}

/**
 * A session on one agent process: an operator from a stream of commands to the session's
 * messages. Each subscription spawns one process, which lives until the command stream completes
 * (then the session ends after the running turn: the agent's input is closed and it exits) or the
 * subscriber leaves (then the stop sequence runs, as for a one-shot run). The session machine
 * decides the turns; the protocol speaks the agent's interactive mode; the dialect maps content.
 *
 * @example
 * // What piSession does, by hand: pi's RPC mode, its dialect for the content, its protocol for the turns.
 * commands
 *   .pipe(
 *     runSession({
 *       command: 'pi',
 *       args: ['--mode', 'rpc'],
 *       processOptions: { interrupt: { signal: 'SIGTERM' } }, // pi ends its tool commands on SIGTERM
 *       dialect: piDialect(),
 *       protocol: piSessionProtocol(),
 *     }),
 *   )
 *   .subscribe(render);
 */
export function runSession<S, P>(spec: SessionSpec<S, P>): OperatorFunction<SessionCommand, SessionMessage> {
  const { command, args, dialect, protocol, overlay } = spec;
  const scheduler = spec.scheduler ?? asyncScheduler;
  // Checked now: a programmer error throws here, not at subscribe time.
  const checked = resolveProcessOptions(command, args, spec.processOptions);
  const idleMs = checked.idleTimeoutMs;
  const graceMs = checked.gracePeriodMs;
  // The session counts silence only while a turn runs: the process itself has no idle limit.
  const resolved = { ...checked, idleTimeoutMs: undefined };
  return (commands) =>
    new Observable<SessionMessage>((subscriber) => {
      const protocolState = protocol.createState();
      // An agent that reports its session before the first prompt: the commands wait for it.
      let machine = protocol.announcesSession?.(protocolState) === true ? OPENING_SESSION_STATE : INITIAL_SESSION_STATE;
      // The dialect reads each later turn afresh: an id the agent used in an earlier turn (a tool
      // call's) is a new one in a later turn.
      let contentState = dialect.createState();
      const stdin = new StdinChannel();
      const items = new Subject<ProcessItem>();
      let run: ProcessRun | null = null;
      let over = false;
      const timers: { idle: Subscription | null; abort: Subscription | null; end: Subscription | null } = { idle: null, abort: null, end: null };
      let lastActivity = scheduler.now();
      /** When the running turn began, as a process start time: the processes a `killTools` may end started since. */
      let turnBegan = '';

      const clearTimer = (name: keyof typeof timers): void => {
        timers[name]?.unsubscribe();
        timers[name] = null;
      };

      // Inputs are handled one at a time, each with all its effects, even when an effect (an
      // emitted message) makes the subscriber send a command at once.
      const queue: SessionInputEvent[] = [];
      let draining = false;
      const dispatch = (input: SessionInputEvent): void => {
        queue.push(input);
        if (draining) return;
        draining = true;
        try {
          for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
            const transition = sessionTransition(machine, next);
            machine = transition.state;
            for (const effect of transition.effects) perform(effect);
          }
        } finally {
          draining = false;
        }
      };

      const perform = (effect: SessionEffect): void => {
        switch (effect.type) {
          case 'emit':
            subscriber.next(effect.message);
            return;
          case 'start':
            // The first turn keeps what was read before it (what the agent said while the session
            // opened, e.g. why it could not).
            if (effect.turn > 1) contentState = dialect.createState();
            turnBegan = startTimeNow();
            react(protocol.act(protocolState, effect));
            return;
          case 'steer':
          case 'abort':
          case 'end':
            react(protocol.act(protocolState, effect));
            return;
          case 'watchIdle':
            clearTimer('idle');
            if (effect.on && idleMs !== undefined) watchIdle(idleMs);
            return;
          case 'watchAbort':
            clearTimer('abort');
            if (effect.on) timers.abort = scheduler.schedule(() => run?.stop({ kind: 'timeout', limit: 'abort', ms: graceMs }), graceMs);
            return;
          case 'watchEnd':
            clearTimer('end');
            timers.end = scheduler.schedule(() => run?.stop({ kind: 'timeout', limit: 'end', ms: graceMs }), graceMs);
            return;
          case 'complete':
            over = true;
            for (const name of ['idle', 'abort', 'end'] as const) clearTimer(name);
            closeProtocol();
            subscriber.complete();
            return;
        }
      };

      const watchIdle = (ms: number): void => {
        lastActivity = scheduler.now();
        const check = (): void => {
          const silent = scheduler.now() - lastActivity;
          if (silent >= ms) {
            timers.idle = null;
            dispatch({ type: 'idleExpired', ms });
          } else {
            timers.idle = scheduler.schedule(check, ms - silent);
          }
        };
        timers.idle = scheduler.schedule(check, ms);
      };

      const react = (reaction: ProtocolReaction): void => {
        for (const output of reaction.outputs ?? []) carryOut(output);
        for (const fact of reaction.facts ?? []) dispatch(fact);
      };

      const carryOut = (output: ProtocolOutput): void => {
        switch (output.type) {
          case 'write':
            stdin.write(`${JSON.stringify(output.line)}\n`);
            return;
          case 'endInput':
            stdin.end();
            return;
          case 'killTools':
            if (run === null) return;
            void run.killDescendants(turnBegan).then((result) => {
              if (over) return;
              guarded(() => {
                react(protocol.read(protocolState, { type: 'agent-rx.tools-killed', ...result }));
              });
            });
            return;
        }
      };

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

      const channel: ProtocolChannel = {
        write: (line) => {
          if (!over) carryOut({ type: 'write', line });
        },
        react: (reaction) => {
          if (!over) guarded(() => {
            react(reaction);
          });
        },
      };
      let closed = false;
      const closeProtocol = (): void => {
        if (closed) return;
        closed = true;
        try {
          protocol.close?.(protocolState);
        } catch (error: unknown) {
          // The session is over: a protocol that fails to clean up is reported, never fatal.
          process.emitWarning(`agent-rx: the ${protocol.name} protocol's close threw: ${errorMessage(error)}`);
        }
      };

      const onItem = (item: PipelineItem): void => {
        if (over) return;
        guarded(() => {
          switch (item.kind) {
            case 'event':
              for (const message of dialect.map(contentState, item.event)) dispatch({ type: 'content', message });
              react(protocol.read(protocolState, item.event));
              return;
            case 'text':
              dispatch({ type: 'content', message: item.channel === 'assistant' ? { type: 'assistant', text: item.text } : { type: 'assistant.thought', text: item.text } });
              return;
            case 'withdraw':
              if (item.channel === 'assistant') dispatch({ type: 'content', message: { type: 'assistant.withdrawn', text: item.text } });
              return;
            case 'stderr-line':
              for (const message of dialect.mapStderrLine?.(contentState, item.text) ?? []) dispatch({ type: 'content', message });
              return;
            case 'exit':
              onExit(item);
              return;
            case 'invalid':
              return;
          }
        });
      };

      const onExit = (exit: RunExit): void => {
        const terminal = terminalAtExit(dialect, contentState, exit, { kind: 'inconclusive', message: `${dialect.name} exited while the session was open` });
        const failure: TerminalFailed =
          terminal.type === 'terminal.failed'
            ? terminal
            : { type: 'terminal.failed', reason: 'missing-terminal', message: `${dialect.name} exited while the session was open`, exitCode: exit.exitCode, signal: exit.signal, stderr: exit.stderr, stderrTruncatedBytes: exit.stderrTruncatedBytes, invalidOutputLines: [], invalidOutputLinesOmitted: 0 };
        const clean =
          exit.startError === null && exit.stoppedBy === undefined && exit.signal === null && (protocol.cleanExit?.(protocolState, exit) ?? exit.exitCode === 0);
        dispatch({ type: 'exited', clean, failure });
      };

      const pipeline = items.pipe(dialectItems(dialect)).subscribe({
        next: onItem,
        error: (error: unknown) => {
          over = true;
          subscriber.error(error);
        },
      });

      // The process: its stdin is the channel, its own idle limit off (the session's counts only in turns).
      let made: SettingsOverlay | null = null;
      let env = resolved.env;
      if (overlay !== undefined) {
        try {
          made = overlay.create({ ...process.env, ...resolved.env }, hostTempDir());
          env = { ...resolved.env, [overlay.env]: made.dir };
        } catch (error) {
          items.next(setupFailure(`could not prepare ${overlay.what}: ${errorMessage(error)}`));
        }
      }
      if (!subscriber.closed && (overlay === undefined || made !== null)) {
        run = startProcessRun(
          command,
          [...args, ...(protocol.args?.(protocolState) ?? [])],
          {
            ...resolved,
            env,
            stdin: stdin.stream,
            onStopped: (report) => {
              made?.remove();
              resolved.onStopped?.(report);
            },
          },
          {
            frame: (frame) => {
              lastActivity = scheduler.now();
              items.next(frame);
            },
            exit: (exit) => {
              items.next(exit);
            },
          },
        );
        react({ outputs: protocol.open(protocolState, channel) });
      }

      const input = subscriber.closed
        ? null
        : commands.subscribe({
            next: (command) => {
              guarded(() => {
                dispatch({ type: 'command', command });
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
        over = true;
        closeProtocol();
        input?.unsubscribe();
        for (const name of ['idle', 'abort', 'end'] as const) clearTimer(name);
        run?.stop({ kind: 'unsubscribe' });
        pipeline.unsubscribe();
      };
    });
}
