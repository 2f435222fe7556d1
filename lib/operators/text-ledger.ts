import type { TextChannel, TextItem, TextReading, WithdrawItem } from './items.js';

interface KeyText {
  /** A replayed prefix: the text of earlier messages that this one began by repeating (never emitted). */
  base: string;
  /** What was emitted for this key. */
  emitted: string;
}

interface Pending {
  readonly key: string;
  /** The channel's text before this key: what a replay would repeat. */
  readonly candidate: string;
  /** The latest snapshot, held back while it may still be (the start of) that replay. */
  held: string;
}

/** One channel's text, key by key. */
class Channel {
  /** Every key, in the order it was first read (the oldest is forgotten first). */
  readonly keys = new Map<string, KeyText>();
  /** Keys with text, in the order their text stands in the channel's text. */
  readonly order: string[] = [];
  pending: Pending | null = null;

  text(): string {
    let text = '';
    for (const key of this.order) text += this.keys.get(key)?.emitted ?? '';
    return text;
  }
}

export type LedgerOutput = TextItem | WithdrawItem;
type Out = (item: LedgerOutput) => void;

/**
 * The bookkeeping behind `snapshotToDelta`, per run: what was emitted for every key of every
 * channel, so that a reading becomes exactly the text that is new, in its place. A channel's text
 * is its keys' texts in the order they first had text. A delta is appended to its key. A snapshot
 * that extends what was emitted for its key gives its suffix; a stale or shorter one gives
 * nothing; one that diverges gives a `withdraw` of the text after the common prefix, then the new
 * text. New text for a key that is not the last one (later keys already have text) is put in its
 * place: the later keys' text is withdrawn, the new text emitted, and the later text emitted again.
 * So applying the items in order (append text, remove withdrawn text from the end) always gives
 * the keys' texts once each, in order.
 *
 * With `replayedPrefix`, a new key whose first reading is a snapshot may begin by repeating the
 * channel's earlier text (pi versions that send snapshots only do this after a tool turn): while
 * its snapshot is a proper prefix of that text it is held back; once it contains all of it, only
 * what follows is emitted; once it departs from it, or its final reading comes, or another key of
 * the channel is read, or the run ends (`flush`), it is its own text.
 */
export class TextLedger {
  readonly #maxKeys: number;
  readonly #replayedPrefix: boolean;
  readonly #channels = new Map<TextChannel, Channel>();

  constructor(options: { readonly maxKeys: number; readonly replayedPrefix: boolean }) {
    this.#maxKeys = options.maxKeys;
    this.#replayedPrefix = options.replayedPrefix;
  }

  read(reading: TextReading, out: Out): void {
    const name = reading.channel;
    const channel = this.#channel(name);
    const pending = channel.pending;
    if (pending !== null) {
      if (pending.key !== reading.key || reading.delta !== undefined) {
        // Another key, or a delta for the held one (it streams deltas: no replay): the held text is its own.
        this.#release(name, channel, out);
      } else {
        this.#decide(name, channel, reading.snapshot ?? '', reading.final === true, out);
        return;
      }
    }
    let key = channel.keys.get(reading.key);
    if (key === undefined) {
      if (reading.delta === undefined && this.#replayedPrefix) {
        const candidate = channel.text();
        if (candidate !== '') {
          channel.pending = { key: reading.key, candidate, held: '' };
          this.#decide(name, channel, reading.snapshot ?? '', reading.final === true, out);
          return;
        }
      }
      key = this.#add(channel, reading.key);
    }
    if (reading.delta !== undefined) this.#append(name, channel, reading.key, key, reading.delta, out);
    else this.#snapshot(name, channel, reading.key, key, reading.snapshot ?? '', out);
  }

  /** Emits what is held back (at the end of the run: a held snapshot was text of its own). */
  flush(out: Out): void {
    for (const [name, channel] of this.#channels) this.#release(name, channel, out);
  }

  #channel(name: TextChannel): Channel {
    let channel = this.#channels.get(name);
    if (channel === undefined) {
      channel = new Channel();
      this.#channels.set(name, channel);
    }
    return channel;
  }

  #add(channel: Channel, name: string): KeyText {
    const key: KeyText = { base: '', emitted: '' };
    channel.keys.set(name, key);
    // Bounded: the oldest key is forgotten first (it can no longer be reconciled).
    if (channel.keys.size > this.#maxKeys) {
      const oldest = channel.keys.keys().next().value as string;
      channel.keys.delete(oldest);
      const at = channel.order.indexOf(oldest);
      if (at !== -1) channel.order.splice(at, 1);
    }
    return key;
  }

  // The held snapshot was no replay: it is the key's own text.
  #release(name: TextChannel, channel: Channel, out: Out): void {
    const pending = channel.pending;
    if (pending === null) return;
    channel.pending = null;
    this.#snapshot(name, channel, pending.key, this.#add(channel, pending.key), pending.held, out);
  }

  #decide(name: TextChannel, channel: Channel, snapshot: string, final: boolean, out: Out): void {
    const pending = channel.pending as Pending;
    // Still within the earlier text: hold it, unless this is all the key will ever say.
    if (!final && snapshot.length < pending.candidate.length && pending.candidate.startsWith(snapshot)) {
      pending.held = snapshot;
      return;
    }
    channel.pending = null;
    const key = this.#add(channel, pending.key);
    if (snapshot.startsWith(pending.candidate)) key.base = pending.candidate;
    this.#snapshot(name, channel, pending.key, key, snapshot, out);
  }

  #snapshot(name: TextChannel, channel: Channel, keyName: string, key: KeyText, snapshot: string, out: Out): void {
    const known = key.base + key.emitted;
    // A stale or shorter replay of what is known.
    if (known.startsWith(snapshot)) return;
    if (snapshot.startsWith(known)) {
      this.#append(name, channel, keyName, key, snapshot.slice(known.length), out);
      return;
    }
    // Diverged: keep the common prefix (whole characters: never half a surrogate pair), withdraw the rest, emit the new text.
    let common = 0;
    while (common < known.length && common < snapshot.length && known.charCodeAt(common) === snapshot.charCodeAt(common)) common += 1;
    if (common > 0 && isHighSurrogate(known.charCodeAt(common - 1))) common -= 1;
    if (common < key.base.length) key.base = key.base.slice(0, common);
    this.#rewrite(name, channel, keyName, key, common - key.base.length, snapshot.slice(common), out);
  }

  // Appends text to a key: at the end of the channel's text when it is the last key with text,
  // else in its place (before the later keys' text).
  #append(name: TextChannel, channel: Channel, keyName: string, key: KeyText, text: string, out: Out): void {
    if (text === '') return;
    const last = channel.order.at(-1);
    if (last === keyName || (key.emitted === '' && !channel.order.includes(keyName))) {
      if (last !== keyName) channel.order.push(keyName);
      // State first: downstream may re-enter.
      key.emitted += text;
      out({ kind: 'text', channel: name, text } satisfies TextItem);
      return;
    }
    this.#rewrite(name, channel, keyName, key, key.emitted.length, text, out);
  }

  // Withdraws the key's text after `keep` characters and the text of the keys after it, emits
  // `replacement` for the key, then the later keys' text again.
  #rewrite(name: TextChannel, channel: Channel, keyName: string, key: KeyText, keep: number, replacement: string, out: Out): void {
    let at = channel.order.indexOf(keyName);
    if (at === -1) {
      channel.order.push(keyName);
      at = channel.order.length - 1;
    }
    const later = channel.order.slice(at + 1);
    let withdrawn = key.emitted.slice(keep);
    for (const other of later) withdrawn += channel.keys.get(other)?.emitted ?? '';
    key.emitted = key.emitted.slice(0, keep) + replacement;
    if (withdrawn !== '') out({ kind: 'withdraw', channel: name, text: withdrawn } satisfies WithdrawItem);
    if (replacement !== '') out({ kind: 'text', channel: name, text: replacement } satisfies TextItem);
    for (const other of later) {
      const text = channel.keys.get(other)?.emitted ?? '';
      if (text !== '') out({ kind: 'text', channel: name, text } satisfies TextItem);
    }
  }
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
