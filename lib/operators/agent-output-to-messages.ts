import { pipe, type OperatorFunction } from 'rxjs';
import type { CliMessage } from '../messages.js';
import type { ProcessItem } from '../process/items.js';
import { bufferThinkingUntilTurnEnd } from './buffer-thinking-until-turn-end.js';
import { collectInvalidLines } from './collect-invalid-lines.js';
import type { Dialect } from './dialect.js';
import type { PipelineItem } from './items.js';
import { mapToCliMessage } from './map-to-cli-message.js';
import { parseJsonLine } from './parse-json-line.js';
import { snapshotToDelta } from './snapshot-to-delta.js';
import { checkFunction, isObject, property, shown } from './validate.js';

/**
 * The whole pipeline for one agent, built from its dialect: an agent's stdout items (lines, as text
 * or as bytes, and the exit item, as `processLines` emits them) in, `CliMessage`s out. A source is `processLines`
 * piped through this; on its own it replays recorded output without a process.
 *
 * ```
 * source:  -l-l-l-l-x|         l = JSON lines, x = exit item
 * result:  -s---a-a-(T|)       s = session.started, a = assistant, T = terminal
 * ```
 *
 * It is the five operators in a row: `parseJsonLine` (the dialect's schemas and parser),
 * `collectInvalidLines`, `snapshotToDelta` (its text reader), `bufferThinkingUntilTurnEnd` (its
 * turn end) and `mapToCliMessage` (its mapping):
 *
 * ```
 * runPi(options) = processLines(pi, args, { stdin: prompt, interrupt: SIGTERM })
 *   .pipe(
 *     parseJsonLine({ schemas: piEventSchemas }),          line → event | invalid item
 *     collectInvalidLines(),                               invalid items kept, bounded, on the exit item
 *     snapshotToDelta({ createReader, replayedPrefix }),   text → true deltas, in their place
 *     bufferThinkingUntilTurnEnd({ turnEnd }),             thinking held until the turn really ends
 *     mapToCliMessage(dialect),                            events → CliMessage, one terminal at the exit
 *   )
 * ```
 *
 * The process exit travels as the last item of the stream (not as an error), so every operator is
 * a synchronous transform and the terminal message is decided from everything before it. State
 * lives inside each subscription, so two subscribers (or a `retry`) never share it. User callbacks
 * (a reader, `turnEnd`, a dialect's functions, validators) are guarded: one that throws errors the
 * stream with that very error, the source is unsubscribed (for a real run, its stop sequence
 * starts), nothing is emitted after, and the callback is not called again. Bad output never errors
 * the stream.
 *
 * @example
 * // A recorded pi run (its stdout lines, then its exit item) read again as messages.
 * from(recordedItems).pipe(agentOutputToMessages(piDialect())).subscribe(console.log);
 */
export function agentOutputToMessages<S>(dialect: Dialect<S>): OperatorFunction<ProcessItem, CliMessage> {
  // Everything the dialect gives is checked now (the operators below check the rest at call time too).
  if (!isObject(dialect)) throw new TypeError(`agent-rx: agentOutputToMessages takes a dialect object; got ${shown(dialect)}`);
  checkFunction(property(dialect, 'createTextReader'), `the ${String(property(dialect, 'name'))} dialect's createTextReader`);
  checkFunction(property(dialect, 'turnEnd'), `the ${String(property(dialect, 'name'))} dialect's turnEnd`);
  const replayedPrefix = property(dialect, 'replayedPrefix');
  if (replayedPrefix !== undefined && typeof replayedPrefix !== 'boolean') {
    throw new TypeError(`agent-rx: the dialect's replayedPrefix must be a boolean; got ${shown(replayedPrefix)}`);
  }
  return pipe(dialectItems(dialect), mapToCliMessage(dialect));
}

/**
 * The pipeline up to the messages: stdout items in, the dialect's events with its text as deltas
 * and its thinking held to the turn's end out (`parseJsonLine`, `collectInvalidLines`,
 * `snapshotToDelta`, `bufferThinkingUntilTurnEnd`). A run maps them with `mapToCliMessage`; a
 * session with its turns.
 */
export function dialectItems<S>(dialect: Dialect<S>): OperatorFunction<ProcessItem, PipelineItem> {
  return pipe(
    parseJsonLine({
      schemas: dialect.schemas,
      ...(dialect.parse === undefined ? {} : { parse: dialect.parse }),
      ...(dialect.parseBytes === undefined ? {} : { parseBytes: dialect.parseBytes }),
    }),
    collectInvalidLines(),
    snapshotToDelta({ createReader: () => dialect.createTextReader(), replayedPrefix: dialect.replayedPrefix === true }),
    bufferThinkingUntilTurnEnd({ turnEnd: (event) => dialect.turnEnd(event) }),
  );
}
