import { pipe, type OperatorFunction } from 'rxjs';
import type { CliMessage } from '../../messages.js';
import { bufferThinkingUntilTurnEnd } from '../../operators/buffer-thinking-until-turn-end.js';
import { collectInvalidLines } from '../../operators/collect-invalid-lines.js';
import { mapToCliMessage } from '../../operators/map-to-cli-message.js';
import { parseJsonLine } from '../../operators/parse-json-line.js';
import { snapshotToDelta } from '../../operators/snapshot-to-delta.js';
import type { ProcessItem } from '../../process/items.js';
import { claudeDialect, claudeTurnEnd, createClaudeTextReader, type ClaudeDialectOptions } from './dialect.js';
import { claudeEventSchemas } from './events.js';

/**
 * The whole Claude Code pipeline as one operator: the CLI's stdout items (lines and the exit
 * item, as `processLines` emits them) in, `CliMessage`s out. On its own it replays recorded output.
 *
 * ```
 * source:  -l-l-l-l-x|         l = stream-json lines, x = exit item
 * result:  -s---a-a-(T|)       s = session.started, a = assistant, T = terminal
 * ```
 *
 * @example
 * from(recordedItems).pipe(claudeOutputToMessages()).subscribe(console.log);
 */
export function claudeOutputToMessages(options: ClaudeDialectOptions = {}): OperatorFunction<ProcessItem, CliMessage> {
  return pipe(
    parseJsonLine({ schemas: claudeEventSchemas }),
    collectInvalidLines(),
    snapshotToDelta({ read: { create: createClaudeTextReader } }),
    bufferThinkingUntilTurnEnd({ turnEnd: claudeTurnEnd }),
    mapToCliMessage(claudeDialect(options)),
  );
}
