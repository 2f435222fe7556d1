import { pipe, type OperatorFunction } from 'rxjs';
import type { CliMessage } from '../../messages.js';
import { bufferThinkingUntilTurnEnd } from '../../operators/buffer-thinking-until-turn-end.js';
import { collectInvalidLines } from '../../operators/collect-invalid-lines.js';
import { mapToCliMessage } from '../../operators/map-to-cli-message.js';
import { parseJsonLine } from '../../operators/parse-json-line.js';
import { snapshotToDelta } from '../../operators/snapshot-to-delta.js';
import type { ProcessItem } from '../../process/items.js';
import { piDialect, piTurnEnd, readPiText, type PiDialectOptions } from './dialect.js';
import { parsePiLine, piEventSchemas } from './events.js';

/**
 * The whole pi pipeline as one operator: pi's stdout items (lines and the exit item, as
 * `processLines` emits them) in, `CliMessage`s out. `runPi` is `processLines(...)` piped through
 * this; on its own it replays recorded output without a process.
 *
 * ```
 * source:  -l-l-l-l-x|         l = pi JSON lines, x = exit item
 * result:  -s---a-a-(T|)       s = session.started, a = assistant, T = terminal
 * ```
 *
 * @example
 * from([...recordedLines.map((text) => ({ kind: 'line', text })), exitItem])
 *   .pipe(piOutputToMessages())
 *   .subscribe(console.log);
 */
export function piOutputToMessages(options: PiDialectOptions = {}): OperatorFunction<ProcessItem, CliMessage> {
  return pipe(
    parseJsonLine({ schemas: piEventSchemas, parse: parsePiLine }),
    collectInvalidLines(),
    snapshotToDelta({ read: readPiText }),
    bufferThinkingUntilTurnEnd({ turnEnd: piTurnEnd }),
    mapToCliMessage(piDialect(options)),
  );
}
