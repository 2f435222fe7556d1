import type { CliMessage, PermissionDecision, PermissionRequested } from '../messages.js';
import type { AgentEvent } from './items.js';
import type { ProcessExit } from '../process/items.js';
import type { SessionEffect, SessionInput, TurnOutcome } from '../sessions/session-machine.js';

/** What the session machine asks of the agent. */
export type SessionAsk = Extract<SessionEffect, { readonly type: 'start' | 'steer' | 'abort' | 'end' }>;

/** What a session protocol's prompts take besides text, and whether a schema is given to the agent natively. */
export interface SessionPromptAbilities {
  readonly image: boolean;
  readonly file: boolean;
  readonly nativeOutput?: boolean;
}

/** What a protocol has the shell do. */
export type ProtocolOutput =
  /** Write one line (JSON) to the agent's stdin. */
  | { readonly type: 'write'; readonly line: unknown }
  /** Close the agent's stdin. */
  | { readonly type: 'endInput' }
  /**
   * Kill the processes the agent started during the running turn, its root aside: tool commands
   * it leaves running after an abort. The result comes back through `read` as a `ToolsKilledEvent`.
   */
  | { readonly type: 'killTools' };

/** What a protocol tells the session machine. */
export type ProtocolFact =
  | { readonly type: 'turnEnded'; readonly outcome: TurnOutcome }
  | { readonly type: 'inputRejected'; readonly input: SessionInput; readonly reason?: 'rejected' | 'aborted' | 'unsupported'; readonly message: string }
  /** A message the protocol itself reads from the agent (`session.started` from a state reply, a warning). */
  | { readonly type: 'content'; readonly message: CliMessage }
  /**
   * The agent can take turns (for a protocol that `announcesSession`): its session was announced
   * just before, or the protocol knows it will not be (the agent refused to open one).
   */
  | { readonly type: 'opened' }
  /**
   * The agent asks before it uses a tool. The session gives it an id, says `permission.requested`,
   * and calls `answer` exactly once with the decision (a deny when the turn or session ends first):
   * what `answer` returns is carried out.
   */
  | {
      readonly type: 'permission';
      readonly request: PermissionAsk;
      /** Gives the agent the decision (called once); what it returns is carried out. */
      answer(decision: PermissionDecision): ProtocolReaction;
    }
  /** The protocol cancelled the running prompt by itself (an ACP steer): the turn's pending requests are denied now. */
  | { readonly type: 'settlePermissions' };

/** A permission request as a protocol reads it: {@link PermissionRequested} without the id the session gives it. */
export type PermissionAsk = Omit<PermissionRequested, 'type' | 'requestId'>;

/** What a protocol makes of an ask or an event: facts about the turn, and what to send the agent. */
export interface ProtocolReaction {
  readonly facts?: readonly ProtocolFact[];
  readonly outputs?: readonly ProtocolOutput[];
}

/** The event `read` gets when a `killTools` output has been carried out. */
export interface ToolsKilledEvent extends AgentEvent {
  readonly type: 'agent-rx.tools-killed';
  readonly killed: readonly number[];
  readonly confirmed: boolean;
}

/**
 * How one agent's interactive mode is driven: the machine's asks as lines on stdin, and the
 * agent's lines as facts about turns. Content (text, thinking, tools) is not its job: the agent's
 * dialect maps it, as for one-shot runs. State is created per session by `createState`, so the
 * object can be shared.
 */
export interface SessionProtocol<P> {
  /** The agent's name in diagnostics. */
  readonly name: string;
  /**
   * What its prompts take besides text, and whether it is given a turn's `outputSchema` natively
   * (else the session appends the schema's instruction to the prompt). Default: text only, the
   * schema in the prompt. A command with a part it does not take is dropped (`unsupported`).
   * The asks' `input.content` holds the parts (the text first) when the command had any.
   */
  readonly prompts?: SessionPromptAbilities;
  /** Makes the state of one session: called once per subscription. */
  createState(): P;
  /** Arguments of this session's own, after the command's (an id the protocol chose for it). */
  args?(state: P): readonly string[];
  /**
   * Whether the agent tells this session's id before its first prompt (in answer to what `open`
   * sends). Then the session's commands wait, unanswered, until the protocol reports `opened`, so
   * that `session.started` (or `session.resumed`) is the session's first message whenever the
   * first command comes. A protocol that says so must report `opened` once it announced the
   * session or knows it cannot (the process ending also ends the wait). Default: no (commands are
   * read at once; the session is announced when the agent reports it, inside the first turn).
   */
  announcesSession?(state: P): boolean;
  /**
   * What to send once the process is started (a handshake, a state request). `channel` is for a
   * protocol whose library writes and answers later (ACP's SDK): it may use it for as long as the
   * session lasts.
   */
  open(state: P, channel: ProtocolChannel): readonly ProtocolOutput[];
  /** What to send for an ask of the machine (it may be held until the agent is ready). */
  act(state: P, ask: SessionAsk): ProtocolReaction;
  /** An event of the agent (or a `ToolsKilledEvent`): what it means for the turn, and any answer it needs. */
  read(state: P, event: AgentEvent): ProtocolReaction;
  /** Whether an exit after the end of the input is the agent's normal end. Default: exit code 0. */
  cleanExit?(state: P, exit: ProcessExit): boolean;
  /** The session is over (its process is gone, or the subscriber left): release what `open` made. */
  close?(state: P): void;
}

/** What a protocol may do at any time, not only in answer to an ask or an event. */
export interface ProtocolChannel {
  /** Writes one line (JSON) to the agent's stdin; nothing once the session is over. */
  write(line: unknown): void;
  /** Tells the machine facts learned later; nothing once the session is over. */
  react(reaction: ProtocolReaction): void;
}

export const NO_REACTION: ProtocolReaction = Object.freeze({});
