import type { InvalidOutputLine } from '../messages.js';
import type { ProcessExit, ProcessStderrLine } from '../process/items.js';

/** A parsed agent event: a JSON object with a string `type`. Unknown types pass through. */
export interface AgentEvent {
  readonly type: string;
  readonly [key: string]: unknown;
}

/** A parsed stdout line: an agent event that passed its validator. */
export interface EventItem<E extends AgentEvent = AgentEvent> {
  readonly kind: 'event';
  readonly event: E;
  /** 1-based position among the run's stdout lines. */
  readonly lineNumber: number;
}

/** A stdout line that is not a usable event, with the reason. */
export interface InvalidLineItem extends Omit<InvalidOutputLine, 'truncated'> {
  readonly kind: 'invalid';
}

/** Text produced from events: an assistant delta, or thinking. */
export interface TextItem {
  readonly kind: 'text';
  readonly channel: TextChannel;
  readonly text: string;
}

/** Which text a text item belongs to: the answer (`assistant`) or thinking (`thought`). */
export type TextChannel = 'assistant' | 'thought';

/**
 * The agent changed text it already streamed (a snapshot that diverged, a fallback answer that
 * differs from the abandoned stream): the last `text.length` characters of the channel's text so
 * far, which are exactly `text`, are withdrawn. What replaces them follows as text items.
 */
export interface WithdrawItem {
  readonly kind: 'withdraw';
  readonly channel: TextChannel;
  readonly text: string;
}

/** Invalid lines kept for diagnostics, bounded. */
export interface InvalidOutputSummary {
  readonly lines: readonly InvalidOutputLine[];
  /** Invalid lines seen but not kept. */
  readonly omitted: number;
}

/** The process exit, as the last item of the stream, with what the operators learned on the way. */
export interface RunExit extends ProcessExit {
  readonly invalidOutput?: InvalidOutputSummary;
}

/**
 * A line of the agent's stderr (only when the source asked for them, `stderrLines`): the operators
 * pass it on untouched, and `mapToCliMessage` gives it to the dialect's `mapStderrLine`.
 */
export type StderrLineItem = ProcessStderrLine;

/** What flows between the operators of a run. */
export type PipelineItem<E extends AgentEvent = AgentEvent> = EventItem<E> | InvalidLineItem | TextItem | WithdrawItem | StderrLineItem | RunExit;

export function isExit(item: { readonly kind: string }): item is RunExit {
  return item.kind === 'exit';
}

/** What one event says about a text: a delta, a cumulative snapshot, or both. */
export interface TextReading {
  readonly channel: TextChannel;
  /**
   * Which text this is (e.g. a message id, or a message and block). Snapshots are compared with
   * what was emitted for the same key; state is kept across turns, so a replayed message is never
   * emitted twice.
   */
  readonly key: string;
  /** The new piece, when the event carries one. Preferred over the snapshot. */
  readonly delta?: string;
  /** The whole text of the key so far. */
  readonly snapshot?: string;
  /**
   * The snapshot is the key's final text (pi: the message's `message_end`): a snapshot held back as
   * a possible replayed prefix (`replayedPrefix`) is then decided, not held any longer.
   */
  readonly final?: boolean;
}

/** Says what text an event carries, if any. */
export type TextReader<E extends AgentEvent = AgentEvent> = (event: E) => TextReading | readonly TextReading[] | null;
