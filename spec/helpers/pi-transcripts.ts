import { readFileSync } from 'node:fs';
import { lastValueFrom, toArray } from 'rxjs';
import { runPi, type CliMessage, type RunPiOptions } from '../../lib/index.js';
import { fixture } from './processes.js';

export interface TranscriptFacts {
  /**
   * Text blocks of every assistant message_end, concatenated in order; for a message cut off
   * before its end (a killed run), the text deltas it streamed.
   */
  readonly answer: string;
  /** Thinking blocks of every assistant message_end. */
  readonly thinking: readonly string[];
  /** Tool results by call id, from tool_execution_end. */
  readonly toolResults: ReadonlyMap<string, { name: string; isError: boolean }>;
  readonly sessionId: string | undefined;
}

interface Block {
  type: string;
  text?: string;
  thinking?: string;
}

/** Reads what a transcript says happened, straight from its JSON lines (not through the library). */
export function transcriptFacts(name: string): TranscriptFacts {
  let answer = '';
  const thinking: string[] = [];
  const toolResults = new Map<string, { name: string; isError: boolean }>();
  let sessionId: string | undefined;
  let open = '';
  for (const raw of readFileSync(fixture(`pi/${name}.jsonl`), 'utf8').split('\n')) {
    if (raw === '') continue;
    const event = JSON.parse(raw) as Record<string, unknown>;
    if (event['type'] === 'session') sessionId = event['id'] as string;
    if (event['type'] === 'tool_execution_end') {
      toolResults.set(event['toolCallId'] as string, { name: event['toolName'] as string, isError: event['isError'] === true });
    }
    const update = event['assistantMessageEvent'] as { type?: string; delta?: string } | undefined;
    if (update?.type === 'text_delta') open += update.delta ?? '';
    const message = event['message'] as { role?: string; content?: Block[] } | undefined;
    if (event['type'] !== 'message_end' || message?.role !== 'assistant') continue;
    open = '';
    for (const block of message.content ?? []) {
      if (block.type === 'text') answer += block.text ?? '';
      if (block.type === 'thinking' && block.thinking !== undefined && block.thinking !== '') thinking.push(block.thinking);
    }
  }
  return { answer: answer + open, thinking, toolResults, sessionId };
}

/** Runs a recorded transcript through runPi, with a fake pi that prints it. */
export function replay(name: string, options: Partial<RunPiOptions> & { exit?: string } = {}): Promise<CliMessage[]> {
  const { exit = '0', env, ...rest } = options;
  return lastValueFrom(
    runPi({
      prompt: 'replayed',
      executable: process.execPath,
      executableArgs: [fixture('fake-pi.mjs'), fixture(`pi/${name}.jsonl`)],
      env: { FAKE_PI_EXIT: exit, ...env },
      ...rest,
    }).pipe(toArray()),
  );
}

export function answerOf(messages: readonly CliMessage[]): string {
  return messages.map((message) => (message.type === 'assistant' ? message.text : '')).join('');
}
