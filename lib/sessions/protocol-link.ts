import type { AgentEvent } from '../operators/items.js';
import { errorMessage } from '../process/error-message.js';
import type { ProcessExit } from '../process/items.js';
import type { ProtocolChannel, ProtocolFact, ProtocolOutput, ProtocolReaction, SessionAsk, SessionProtocol } from '../operators/session-protocol.js';

/** What a protocol link acts on, and whom it tells. */
export interface ProtocolLinkIo {
  /** The agent's stdin: a line, or its end. */
  readonly stdin: { write(text: string): void; end(): void };
  /**
   * Kills the processes the agent started since `bornSince` (a process start time), its root
   * aside; `null` when there is no process to ask.
   */
  killTools(bornSince: string): Promise<{ readonly killed: readonly number[]; readonly confirmed: boolean }> | null;
  /** Now, as a process start time (`startTimeNow`). */
  now(): string;
  /** A fact for the session machine. */
  fact(fact: ProtocolFact): void;
  /** Whether the session is still on: nothing is written or reported once it is over. */
  live(): boolean;
  /** Runs what the protocol does outside an ask or an event (a late reaction, a kill's result): what it throws ends the session. */
  guard(work: () => void): void;
}

/**
 * One session's protocol, carried out: the machine's asks (start, steer, abort, end) and the
 * agent's events go to the protocol; what it has done (lines on stdin, the end of stdin, a kill of
 * the running turn's tools) is done, and the facts it reports go to the machine, after its outputs.
 * A `killTools` ends the processes started since the running turn began, and its result comes back
 * to the protocol as an `agent-rx.tools-killed` event, unless the session is over by then.
 */
export class ProtocolLink<P> {
  readonly #protocol: SessionProtocol<P>;
  readonly #io: ProtocolLinkIo;
  readonly #state: P;
  /** When the running turn began, as a process start time: the processes a `killTools` may end started since. */
  #turnBegan = '';
  #closed = false;
  /** What the protocol may use at any time; nothing once the session is over. */
  readonly channel: ProtocolChannel;

  /** Makes the protocol's state for one session (`createState`). */
  constructor(protocol: SessionProtocol<P>, io: ProtocolLinkIo) {
    this.#protocol = protocol;
    this.#io = io;
    this.#state = protocol.createState();
    this.channel = {
      write: (line) => {
        if (io.live()) this.#carryOut({ type: 'write', line });
      },
      react: (reaction) => {
        if (io.live()) {
          io.guard(() => {
            this.#react(reaction);
          });
        }
      },
    };
  }

  /** The session's own arguments, after the command's. */
  args(): readonly string[] {
    return this.#protocol.args?.(this.#state) ?? [];
  }

  /** Whether the agent announces its session before the first prompt (the commands wait for `opened`). */
  announcesSession(): boolean {
    return this.#protocol.announcesSession?.(this.#state) === true;
  }

  /** Sends what the protocol sends once the process is started. */
  open(): void {
    this.#react({ outputs: this.#protocol.open(this.#state, this.channel) });
  }

  /** Carries out an ask of the machine; a `start` marks when the turn began. */
  ask(ask: SessionAsk): void {
    if (ask.type === 'start') this.#turnBegan = this.#io.now();
    this.#react(this.#protocol.act(this.#state, ask));
  }

  /** Gives the protocol an event of the agent. */
  read(event: AgentEvent): void {
    this.#react(this.#protocol.read(this.#state, event));
  }

  /** Whether the process ended the way its agent does at the end of its input: not stopped, no signal, and a clean exit by the protocol (default: code 0). */
  cleanExit(exit: ProcessExit): boolean {
    return exit.startError === null && exit.stoppedBy === undefined && exit.signal === null && (this.#protocol.cleanExit?.(this.#state, exit) ?? exit.exitCode === 0);
  }

  /** The session is over: the protocol releases what it made (once). A protocol that fails to is reported, never fatal. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.#protocol.close?.(this.#state);
    } catch (error: unknown) {
      process.emitWarning(`agent-rx: the ${this.#protocol.name} protocol's close threw: ${errorMessage(error)}`);
    }
  }

  #react(reaction: ProtocolReaction): void {
    for (const output of reaction.outputs ?? []) this.#carryOut(output);
    for (const fact of reaction.facts ?? []) this.#io.fact(fact);
  }

  #carryOut(output: ProtocolOutput): void {
    switch (output.type) {
      case 'write':
        this.#io.stdin.write(`${JSON.stringify(output.line)}\n`);
        return;
      case 'endInput':
        this.#io.stdin.end();
        return;
      case 'killTools': {
        const killing = this.#io.killTools(this.#turnBegan);
        if (killing === null) return;
        void killing.then((result) => {
          if (!this.#io.live()) return;
          this.#io.guard(() => {
            this.read({ type: 'agent-rx.tools-killed', ...result });
          });
        });
        return;
      }
    }
  }
}
