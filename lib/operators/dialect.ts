import type { CliMessage, FailureReason, OutputIssue, StopReason, ToolKind, Usage } from '../messages.js';
import type { TurnEnd } from './buffer-thinking-until-turn-end.js';
import type { AgentEvent, RunExit } from './items.js';
import type { EventValidator } from './parse-json-line.js';
import type { TextReader } from './snapshot-to-delta.js';

/** How a dialect reads the end of a run from the events it saw. */
export type Conclusion =
  | {
      readonly kind: 'completed';
      readonly stopReason: StopReason;
      /** The agent's own value, kept as `agentStopReason`. */
      readonly agentStopReason?: string;
      readonly usage?: Usage;
      /**
       * The answer as a value, for an agent given the schema natively (Claude Code's
       * `structured_output`, Qwen Code's `structured_result`): the terminal's `output`, which the
       * run's schema then checks instead of the final text.
       */
      readonly output?: unknown;
    }
  | {
      readonly kind: 'failed';
      /**
       * `output-schema`: the agent, given the schema natively, gave up on an answer in its form
       * (Claude Code after its retries; Qwen Code on prose). `budget`: the agent's own spending cap
       * ended the run (Claude Code's `--max-budget-usd`). The issues and the answer, when the
       * agent said them; else the run's `outputSchema` check adds them from the final text.
       */
      readonly reason: Extract<FailureReason, 'agent-error' | 'aborted' | 'output-schema' | 'budget'>;
      readonly message: string;
      /** With `output-schema`: how the last answer failed the schema, as the agent said. */
      readonly outputIssues?: readonly OutputIssue[];
      /** With `output-schema`: the last answer the agent tried, if any (bounded). */
      readonly answer?: string;
      /**
       * The agent reported that its run ended (pi: `agent_end`; Claude Code: a `result` line).
       * Such a failure explains a non-zero exit code, which then adds nothing.
       */
      readonly ended: boolean;
    }
  | { readonly kind: 'inconclusive'; readonly message: string };

/**
 * What `mapToCliMessage` needs to know about one agent CLI: how its events become messages and
 * how a run ended. State is created per subscription by `createState`, so the object can be shared.
 */
export interface MessageMapping<S = unknown, E extends AgentEvent = AgentEvent> {
  /** The agent's name in diagnostics, e.g. `pi`. */
  readonly name: string;
  /** Added to the message when the executable, looked up on PATH, was not found there runnable: how to install it. */
  readonly installHint?: string;
  /** Makes the state of one run: called once per subscription. */
  createState(): S;
  /** The messages an event stands for (never a terminal message); may update the state. */
  map(state: S, event: E): readonly CliMessage[];
  /** How the run ended, judged from the events alone, when the process exited normally. */
  conclude(state: S): Conclusion;
  /** The agent's last reported error, for diagnostics. */
  lastError(state: S): string | undefined;
  /**
   * What the agent reported about its last error, as data: the model API's HTTP status and a
   * retry-after hint. They go into `terminal.failed`, where `isRetryableFailure` reads them before
   * any text. `exit` is how the process ended (`null` when the output ended without an exit item),
   * for an agent whose exit code says something (Gemini CLI exits with the HTTP status).
   */
  failureDetails?(state: S, exit: RunExit | null): FailureDetails;
  /**
   * What of stderr explains a failed exit, for the failure's message (the whole stderr stays in
   * `terminal.failed.stderr`). Default: its first meaningful line, the one that says what is wrong
   * (`meaningfulLines` leaves out blank lines, stack frames, Node's banners, bare links and paths,
   * "see …" hints). An agent that prints routine lines of its own, or errors over several lines,
   * says better.
   */
  stderrLine?(stderr: string): string | undefined;
  /**
   * The messages a line of stderr stands for (never a terminal message), for an agent that reports
   * there what stdout does not say (Gemini CLI's retries). Its source must ask for stderr lines
   * (`stderrLines`); without this function they are ignored.
   */
  mapStderrLine?(state: S, line: string): readonly CliMessage[];
  /** The agent's session id so far, for the terminal message's `sessionId`. */
  sessionId(state: S): string | undefined;
  /**
   * The type of an event this dialect does not know, or `undefined` for one it knows: one it reads,
   * and one the agent sends that is left aside on purpose. A run (or a session) says each unknown
   * type once, with an `agent.warning`, and ignores the event as before; that is how a change of
   * the agent's protocol shows. The type may be finer than the event's `type` (an ACP update's
   * kind, a Codex item's type). Pure; `knownTypes` builds one from a list. Without it, nothing is
   * said.
   */
  unknownType?(event: E): string | undefined;
  /**
   * The agent's tools, by the names it gives them: each `tool.call` gets its `kind` and `summary`
   * from here (unless the agent reported them itself). Without it, tool calls have neither.
   */
  readonly tools?: ToolVocabulary;
}

/** An agent's tools: what kind each is, and what a call does in one line. Pure. */
export interface ToolVocabulary {
  /** The kind of the tool `name` (`other` for one the agent's vocabulary does not know, e.g. an MCP server's). */
  kind(name: string): ToolKind;
  /** What a call of `name` with `input` does, in one line (`echo hello`, `src/index.ts`); `undefined` when nothing says it better than the input. */
  summary(name: string, input: unknown): string | undefined;
}

/** Structured facts about a failure, for `terminal.failed`. */
export interface FailureDetails {
  /** The HTTP status of the model API's error (401, 429, 500, …). */
  readonly httpStatus?: number;
  /** How long the API asked to wait before trying again, in ms. */
  readonly retryAfterMs?: number;
}

/**
 * Everything agent-specific, in one object: how to parse and validate its lines, where its text is,
 * where a turn ends, and how its events become messages. `agentOutputToMessages(dialect)` is the
 * whole pipeline for it; a new agent is a new dialect, and nothing else in the pipeline changes.
 */
export interface Dialect<S = unknown, E extends AgentEvent = AgentEvent> extends MessageMapping<S, E> {
  /** Validators of the event types it reads (zod schemas); other types pass through untouched. */
  readonly schemas: Readonly<Record<string, EventValidator>>;
  /**
   * Its own line parser, when it has one: it throws where `JSON.parse` throws and returns what it
   * returns, with a `type` added where the agent's messages have none (see `parseJsonLine`'s `parse`).
   */
  readonly parse?: (line: string) => unknown;
  /**
   * A byte-level line parser, when it has one (see `parseJsonLine`'s `parseBytes`): it reads a
   * line without decoding it, and may leave out of the event what the dialect never reads. Its
   * source then asks for undecoded lines (`lineEncoding: 'buffer'`).
   */
  readonly parseBytes?: (chunks: readonly Buffer[]) => unknown;
  /** A text reader for one run (called once per subscription): where its events carry text. */
  createTextReader(): TextReader<E>;
  /**
   * Whether a message may begin by repeating the text of the messages before it (some pi versions
   * do, in their snapshots, after a tool turn): see `snapshotToDelta`'s `replayedPrefix`.
   */
  readonly replayedPrefix?: boolean;
  /** Which events end a turn, for `bufferThinkingUntilTurnEnd`. */
  turnEnd(event: E): TurnEnd;
}
