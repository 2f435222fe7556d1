import type { TextChannel, TextItem, WithdrawItem } from './items.js';
import type { TextReading } from './snapshot-to-delta.js';

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

/** One channel's text, key by key, in the order the keys first emitted. */
class Channel {
  readonly order: string[] = [];
  readonly keys = new Map<string, KeyText>();
  pending: Pending | null = null;

  text(): string {
    let text = '';
    for (const key of this.order) text += this.keys.get(key)?.emitted ?? '';
    return text;
  }
}

export type LedgerOutput = TextItem | WithdrawItem;

/**
 * The bookkeeping behind `snapshotToDelta`, per run: what was emitted for every key of every
 * channel, so that a reading becomes exactly the text that is new. A delta is appended. A snapshot
 * that extends what was emitted gives its suffix; a stale or shorter one gives nothing; one that
 * diverges gives a `withdraw` of the text after the common prefix (and of any text emitted for later
 * keys, which is then emitted again), then the new text: the answer is never silently doubled.
 *
 * With `replayedPrefix`, a new key whose first reading is a snapshot may begin by repeating the
 * channel's earlier text (pi versions that send snapshots only do this after a tool turn): while
 * its snapshot is a proper prefix of that text it is held back; once it contains all of it, only
 * what follows is emitted; once it departs from it, it is emitted whole. A held snapshot is
 * emitted when another key of the channel arrives, or at `flush`.
 */
export class TextLedger {
  readonly #maxKeys: number;
  readonly #replayedPrefix: boolean;
  readonly #channels = new Map<TextChannel, Channel>();

  constructor(options: { readonly maxKeys: number; readonly replayedPrefix: boolean }) {
    this.#maxKeys = options.maxKeys;
    this.#replayedPrefix = options.replayedPrefix;
  }

  read(reading: TextReading, out: (item: LedgerOutput) => void): void {
    const channel = this.#channel(reading.channel);
    const pending = channel.pending;
    if (pending !== null && pending.key !== reading.key) this.#release(reading.channel, channel, out);
    if (pending !== null && pending.key === reading.key) {
      // A delta for a held key: it streams deltas, so it was no replay.
      if (reading.delta !== undefined) this.#release(reading.channel, channel, out);
      else {
        this.#decide(reading.channel, channel, reading.snapshot ?? '', out);
        return;
      }
    }
    let key = channel.keys.get(reading.key);
    if (key === undefined) {
      if (reading.delta === undefined && this.#replayedPrefix) {
        const candidate = channel.text();
        if (candidate !== '') {
          channel.pending = { key: reading.key, candidate, held: '' };
          this.#decide(reading.channel, channel, reading.snapshot ?? '', out);
          return;
        }
      }
      key = this.#add(channel, reading.key);
    }
    if (reading.delta !== undefined) this.#emit(reading.channel, channel, reading.key, key, reading.delta, out);
    else this.#snapshot(reading.channel, channel, reading.key, key, reading.snapshot ?? '', out);
  }

  /** Emits what is held back (at the end of the run: a held snapshot was text of its own). */
  flush(out: (item: LedgerOutput) => void): void {
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
      const oldest = channel.order.shift() ?? channel.keys.keys().next().value;
      if (oldest !== undefined) channel.keys.delete(oldest);
    }
    return key;
  }

  // The held snapshot was no replay: it is the key's own text.
  #release(name: TextChannel, channel: Channel, out: (item: LedgerOutput) => void): void {
    const pending = channel.pending;
    if (pending === null) return;
    channel.pending = null;
    this.#snapshot(name, channel, pending.key, this.#add(channel, pending.key), pending.held, out);
  }

  #decide(name: TextChannel, channel: Channel, snapshot: string, out: (item: LedgerOutput) => void): void {
    const pending = channel.pending as Pending;
    if (snapshot.length < pending.candidate.length && pending.candidate.startsWith(snapshot)) {
      pending.held = snapshot;
      return;
    }
    channel.pending = null;
    const key = this.#add(channel, pending.key);
    if (snapshot.startsWith(pending.candidate)) key.base = pending.candidate;
    this.#snapshot(name, channel, pending.key, key, snapshot, out);
  }

  #snapshot(name: TextChannel, channel: Channel, keyName: string, key: KeyText, snapshot: string, out: (item: LedgerOutput) => void): void {
    const known = key.base + key.emitted;
    // A stale or shorter replay of what is known.
    if (known.startsWith(snapshot)) return;
    if (snapshot.startsWith(known)) {
      this.#emit(name, channel, keyName, key, snapshot.slice(known.length), out);
      return;
    }
    // Diverged: keep the common prefix, withdraw the rest, emit the new text.
    let common = 0;
    while (common < known.length && common < snapshot.length && known.charCodeAt(common) === snapshot.charCodeAt(common)) common += 1;
    if (common < key.base.length) key.base = key.base.slice(0, common);
    this.#revise(name, channel, keyName, key, common - key.base.length, snapshot.slice(common), out);
  }

  // Withdraws the key's text after `keep` characters (and the text of later keys), emits
  // `replacement`, then emits the later keys' text again.
  #revise(name: TextChannel, channel: Channel, keyName: string, key: KeyText, keep: number, replacement: string, out: (item: LedgerOutput) => void): void {
    const at = channel.order.indexOf(keyName);
    const later = at === -1 ? [] : channel.order.slice(at + 1);
    let withdrawn = key.emitted.slice(keep);
    for (const other of later) withdrawn += channel.keys.get(other)?.emitted ?? '';
    if (withdrawn !== '') out({ kind: 'withdraw', channel: name, text: withdrawn } satisfies WithdrawItem);
    key.emitted = key.emitted.slice(0, keep);
    this.#emit(name, channel, keyName, key, replacement, out);
    for (const other of later) {
      const text = channel.keys.get(other)?.emitted ?? '';
      if (text !== '') out({ kind: 'text', channel: name, text } satisfies TextItem);
    }
  }

  #emit(name: TextChannel, channel: Channel, keyName: string, key: KeyText, text: string, out: (item: LedgerOutput) => void): void {
    if (text === '') return;
    if (key.emitted === '' && !channel.order.includes(keyName)) channel.order.push(keyName);
    // State first: downstream may re-enter.
    key.emitted += text;
    out({ kind: 'text', channel: name, text } satisfies TextItem);
  }
}
