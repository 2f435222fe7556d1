// The replay agents' pacing: how long a recorded line waits at speed 1, so that a replay streams
// as the agent did (deltas slowly, tools and model calls a little slower, bookkeeping at once).

// Milliseconds to wait before a line at speed 1: streamed deltas slowly, bookkeeping at once.
export function delayBefore(event, previous) {
  if (previous?.type === 'auto_retry_start') return (Number(previous.delayMs) || 0) / 4;
  switch (event.type) {
    case 'message_update': {
      const delta = event.assistantMessageEvent?.delta;
      return typeof delta === 'string' ? 20 + Math.min(40, delta.length * 4) : 8;
    }
    case 'message_start':
      return event.message?.role === 'assistant' ? 250 : 2;
    case 'stream_event': {
      // Claude Code: streamed deltas at the same pace as pi's.
      const delta = event.event?.delta?.text ?? event.event?.delta?.thinking;
      return typeof delta === 'string' ? 20 + Math.min(40, delta.length * 4) : 8;
    }
    case 'tool_execution_update':
    case 'tool_execution_end':
      return 150;
    // Codex prints whole items: a message after a model call, a command when it has run.
    case 'item.started':
      return 150;
    // Gemini CLI: streamed deltas at the same pace, tools a little slower.
    case 'message':
      return event.role === 'assistant' ? 20 + Math.min(40, String(event.content ?? '').length * 4) : 2;
    case 'tool_use':
    case 'tool_result':
      return 150;
    case 'item.completed':
      return event.item?.type === 'command_execution' ? 150 : 400;
    default:
      return 2;
  }
}
