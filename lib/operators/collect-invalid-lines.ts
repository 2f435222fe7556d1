import { defer, filter, map, type OperatorFunction } from 'rxjs';
import type { InvalidOutputLine } from '../messages.js';
import { isExit, type InvalidLineItem, type RunExit } from './items.js';
import { checkInteger, isObject, shown } from './validate.js';

/** Options of {@link collectInvalidLines}: how much of the invalid output is kept. */
export interface CollectInvalidLinesOptions {
  /** How many invalid lines to keep. Default 50. */
  readonly maxLines?: number;
  /** How many bytes of each kept line. Default 2048. */
  readonly maxLineBytes?: number;
}

/**
 * Removes invalid items from the stream and keeps them, bounded (the first `maxLines`, each cut to
 * `maxLineBytes`, plus a count of the rest), on the exit item as `invalidOutput`, where the
 * terminal message picks them up.
 *
 * ```
 * source:  -e--i1--e--i2--x|
 * result:  -e------e------y|     y = { ...x, invalidOutput: { lines: [i1, i2], omitted: 0 } }
 * ```
 *
 * @example
 * processLines('pi', args).pipe(parseJsonLine(), collectInvalidLines({ maxLines: 10 }));
 */
export function collectInvalidLines<T extends { readonly kind: string }>(
  options: CollectInvalidLinesOptions = {},
): OperatorFunction<T, Exclude<T, InvalidLineItem>> {
  if (!isObject(options)) throw new TypeError(`agent-rx: collectInvalidLines takes an options object; got ${shown(options)}`);
  const maxLines = options.maxLines ?? 50;
  const maxLineBytes = options.maxLineBytes ?? 2048;
  checkInteger(maxLines, 'maxLines', 0);
  checkInteger(maxLineBytes, 'maxLineBytes', 1);
  return (source) =>
    defer(() => {
      const lines: InvalidOutputLine[] = [];
      let omitted = 0;
      return source.pipe(
        filter((item) => {
          if (item.kind !== 'invalid') return true;
          if (lines.length < maxLines) lines.push(bounded(item as unknown as InvalidLineItem, maxLineBytes));
          else omitted += 1;
          return false;
        }),
        map((item) => {
          if (!isExit(item)) return item as Exclude<T, InvalidLineItem>;
          const exit: RunExit = { ...item, invalidOutput: { lines: [...lines], omitted } };
          return exit as unknown as Exclude<T, InvalidLineItem>;
        }),
      );
    });
}

function bounded(item: InvalidLineItem, maxLineBytes: number): InvalidOutputLine {
  const { lineNumber, reason, detail, text, bytes } = item;
  const textBytes = Buffer.byteLength(text);
  if (textBytes <= maxLineBytes) return { lineNumber, reason, detail, text, bytes, truncated: textBytes < bytes };
  let cut = Buffer.from(text).subarray(0, maxLineBytes).toString('utf8');
  if (cut.endsWith('\uFFFD')) cut = cut.slice(0, -1);
  return { lineNumber, reason, detail, text: cut, bytes, truncated: true };
}
