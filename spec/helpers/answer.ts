import { expect } from '@jest/globals';
import { from, lastValueFrom, toArray, type OperatorFunction } from 'rxjs';
import type { CliMessage, ProcessItem } from '../../lib/index.js';
import { exit } from './items.js';

// The answer as a consumer builds it: append `assistant`, take `assistant.withdrawn` back from the end.
export function appliedAnswer(messages: readonly CliMessage[]): string {
  let answer = '';
  for (const message of messages) {
    if (message.type === 'assistant') answer += message.text;
    if (message.type === 'assistant.withdrawn') {
      expect(answer.endsWith(message.text)).toBe(true);
      answer = answer.slice(0, answer.length - message.text.length);
    }
  }
  return answer;
}

/** Recorded stdout lines, then an exit item with code 0, through a dialect's pipeline. */
export function replayLines(lines: readonly string[], pipeline: OperatorFunction<ProcessItem, CliMessage>): Promise<CliMessage[]> {
  const items: ProcessItem[] = [...lines.map((text): ProcessItem => ({ kind: 'line', text })), exit()];
  return lastValueFrom(from(items).pipe(pipeline, toArray()));
}
