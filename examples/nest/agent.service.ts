import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { defer, finalize, Subject, tap, type Observable } from 'rxjs';
import { isTerminal, piSession, runPi, stopAllRuns, type CliMessage, type SessionCommand, type SessionMessage } from '../../lib/index.js';
import { conversationOptionsFor, runOptionsFor, sessionOptionsFor, type PiChoice } from './options.js';

/** The injection token of the pi the app runs (a `PiChoice`). */
export const PI_CHOICE = 'agent-rx:pi-choice';

/**
 * Runs and sessions of pi, as cold Observables: whoever subscribes (Nest, for an SSE response)
 * starts the agent, and unsubscribing (the client leaving) stops it. A session is kept by its id
 * only while its stream is open, so that prompts and aborts posted for that id reach it. With
 * `--conversations`, its conversation outlives the stream, the process and the app: pi falls
 * asleep when idle, and the session opened again under the same id resumes the conversation.
 */
@Injectable()
export class AgentService implements OnModuleDestroy {
  readonly #pi: PiChoice;
  readonly #sessions = new Map<string, Subject<SessionCommand>>();
  readonly #logger = new Logger(AgentService.name);

  // An explicit token: tsx (esbuild) does not emit decorator metadata, so Nest cannot read the parameter's type.
  constructor(@Inject(PI_CHOICE) pi: PiChoice) {
    this.#pi = pi;
  }

  /** One run of `prompt`: messages until its terminal message. */
  run(prompt: string): Observable<CliMessage> {
    return runPi(runOptionsFor(this.#pi, prompt)).pipe(
      tap((message) => {
        this.#logEnd('run', message);
      }),
    );
  }

  /** Whether the session `id` has its stream open. */
  hasSession(id: string): boolean {
    return this.#sessions.has(id);
  }

  /**
   * The session `id`: subscribing starts its agent process, which takes the commands sent for
   * that id until the session ends (`end`: after the running turn) or the subscriber leaves (the
   * stop sequence). One subscription per id at a time.
   */
  session(id: string): Observable<SessionMessage> {
    return defer(() => {
      if (this.#sessions.has(id)) throw new Error(`the session ${id} already has its stream`);
      const commands = new Subject<SessionCommand>();
      this.#sessions.set(id, commands);
      return commands.pipe(
        piSession({ ...sessionOptionsFor(this.#pi), ...conversationOptionsFor(this.#pi, id) }),
        tap((message) => {
          this.#logEnd(`session ${id}`, message);
        }),
        finalize(() => {
          if (this.#sessions.get(id) === commands) this.#sessions.delete(id);
        }),
      );
    });
  }

  /** A prompt, steer, follow-up or abort for the session `id`; `false` when it has no open stream. */
  send(id: string, command: SessionCommand): boolean {
    const commands = this.#sessions.get(id);
    commands?.next(command);
    return commands !== undefined;
  }

  /** Ends the session `id` after its running turn: the agent exits by itself and the stream ends. */
  end(id: string): boolean {
    const commands = this.#sessions.get(id);
    commands?.complete();
    return commands !== undefined;
  }

  /**
   * At shutdown (`app.close()`, or a signal with `enableShutdownHooks()`), before the HTTP server
   * closes: every run and session still going is stopped, each open stream gets its
   * `terminal.failed` (reason `stopped`) and ends, and this resolves when their processes are gone.
   */
  async onModuleDestroy(): Promise<void> {
    await stopAllRuns();
  }

  #logEnd(what: string, message: SessionMessage): void {
    if (!isTerminal(message)) return;
    this.#logger.log(`${what}: ${message.type}${message.type === 'terminal.failed' ? ` (${message.reason}: ${message.message})` : ''}`);
  }
}
