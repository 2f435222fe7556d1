import type { CliMessage } from '../messages.js';
import type { MessageMapping } from './dialect.js';
import type { AgentEvent, PipelineItem, RunExit } from './items.js';

/** A pipeline item before the exit: what carries the agent's content. */
export type ContentItem<E extends AgentEvent = AgentEvent> = Exclude<PipelineItem<E>, RunExit>;

/**
 * What one item before the exit stands for, through a dialect, each message handed to `emit` in
 * order: an event's messages (`map`), a text item as `assistant` or `assistant.thought`, withdrawn
 * answer text as `assistant.withdrawn`, a stderr line's messages (`mapStderrLine`, when the dialect
 * has one); nothing for an invalid line (it is kept for the exit's diagnostics). A run's
 * `mapToCliMessage` and a session's turns both read their content through it.
 */
export function emitItemMessages<S, E extends AgentEvent>(dialect: MessageMapping<S, E>, state: S, item: ContentItem<E>, emit: (message: CliMessage) => void): void {
  switch (item.kind) {
    case 'event':
      for (const message of eventMessages(dialect, state, item.event)) emit(message);
      return;
    case 'text':
      emit(item.channel === 'assistant' ? { type: 'assistant', text: item.text } : { type: 'assistant.thought', text: item.text });
      return;
    case 'withdraw':
      // Thinking is withdrawn where it is held (bufferThinkingUntilTurnEnd); a thought already shown stays.
      if (item.channel === 'assistant') emit({ type: 'assistant.withdrawn', text: item.text });
      return;
    case 'stderr-line':
      if (dialect.mapStderrLine !== undefined) for (const message of dialect.mapStderrLine(state, item.text)) emit(message);
      return;
    case 'invalid':
      return;
  }
}

/**
 * The messages an agent event stands for, by the dialect, each `tool.call` with its tool's `kind`
 * and `summary` from the dialect's vocabulary (what the agent reported itself stays).
 */
export function eventMessages<S, E extends AgentEvent>(dialect: MessageMapping<S, E>, state: S, event: E): readonly CliMessage[] {
  const messages = dialect.map(state, event);
  const tools = dialect.tools;
  if (tools === undefined || !messages.some((message) => message.type === 'tool.call')) return messages;
  return messages.map((message) => {
    if (message.type !== 'tool.call') return message;
    const kind = message.kind ?? tools.kind(message.name);
    const summary = message.summary ?? tools.summary(message.name, message.input);
    return { ...message, kind, ...(summary === undefined ? {} : { summary }) };
  });
}
