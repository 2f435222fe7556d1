import { CliMessageSchema, type CliMessage } from '../messages.js';

// What a reader's cursors and a run's keys are made of: stream entry ids (`<ms>-<seq>`), run ids,
// and the message an entry carries.

const ENTRY_ID = /^\d{1,20}(?:-\d{1,20})?$/;

/** Throws a `TypeError` unless `runId` can name a run (its keys are made of it). */
export function checkRunId(runId: string): void {
  if (typeof runId !== 'string' || !/^[\w.:-]{1,200}$/.test(runId)) {
    throw new TypeError(`agent-rx: a run id is 1 to 200 letters, digits, and _ . : -; got ${JSON.stringify(runId)}`);
  }
}

/** The entry id a reader reads after, from one a caller gave (`<ms>` or `<ms>-<seq>`); a `TypeError` when it is not one. */
export function readAfter(after: string): string {
  if (!ENTRY_ID.test(after)) throw new TypeError(`agent-rx: after must be a stream entry id (<ms>-<seq>); got ${JSON.stringify(after)}`);
  return after.includes('-') ? after : `${after}-0`;
}

/** Orders stream entry ids (`<ms>-<seq>`). */
export function compareIds(a: string, b: string): number {
  const [am = '0', as = '0'] = a.split('-');
  const [bm = '0', bs = '0'] = b.split('-');
  const ms = BigInt(am) - BigInt(bm);
  if (ms !== 0n) return ms < 0n ? -1 : 1;
  const seq = BigInt(as) - BigInt(bs);
  return seq === 0n ? 0 : seq < 0n ? -1 : 1;
}

/** A stream entry's message (`m`), when it is one; anything else is skipped. */
export function parseEntry(fields: readonly string[]): CliMessage | null {
  const at = fields.indexOf('m');
  const text = at === -1 ? undefined : fields[at + 1];
  if (text === undefined) return null;
  try {
    const parsed = CliMessageSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** An entry of a run's stream: its id (for a later `follow`, an SSE `id:`) and its message. */
export interface RunEntry {
  /**
   * The entry's id in the run's Redis Stream: give it to {@link RunDispatcher.follow} as `after` to
   * read on from there (an SSE `id:`).
   */
  readonly id: string;
  /** The run's message. */
  readonly message: CliMessage;
}
