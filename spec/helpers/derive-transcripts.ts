import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { pathToFileURL } from 'node:url';
import { fixture } from './processes.js';

/**
 * Output shapes that the recorded agents did not produce in our runs, derived from recorded
 * transcripts by a deterministic transformation of their lines. Each derived fixture is written
 * once under `spec/fixtures/<agent>/derived/` (with a README line saying from what and how it was
 * made), and a spec checks that the file on disk is still exactly what its derivation gives.
 *
 * To write them again: `npx tsx spec/helpers/derive-transcripts.ts`.
 */

type Json = Record<string, unknown>;

export interface DerivedFixture {
  /** The file, relative to `spec/fixtures`. */
  readonly name: string;
  /** The recorded transcript it is made from, relative to `spec/fixtures`. */
  readonly from: string;
  /** How it was made, for the README. */
  readonly how: string;
  readonly derive: (lines: readonly string[]) => string[];
}

/** The non-empty lines of a fixture file. */
export function fixtureLines(name: string): string[] {
  return readFileSync(fixture(name), 'utf8')
    .split('\n')
    .filter((line) => line !== '');
}

/** The text of a derived fixture file, as its derivation gives it. */
export function derivedText(derived: DerivedFixture): string {
  return `${derived.derive(fixtureLines(derived.from)).join('\n')}\n`;
}

// Every line is re-serialized with JSON.stringify, which gives the recorded lines back byte for
// byte (both agents print JSON.stringify output): a line the transformation leaves alone is unchanged.
function eachEvent(lines: readonly string[], change: (event: Json) => void): string[] {
  return lines.map((line) => {
    const event = JSON.parse(line) as Json;
    change(event);
    return JSON.stringify(event);
  });
}

function object(value: unknown): Json | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : undefined;
}

/** The objects in a list (anything else, or no list, gives none). */
function objects(list: unknown): Json[] {
  if (!Array.isArray(list)) return [];
  return list.flatMap((item: unknown) => {
    const found = object(item);
    return found === undefined ? [] : [found];
  });
}

function blocks(message: unknown): Json[] {
  return objects(object(message)?.['content']);
}

// ---------------------------------------------------------------------------------------------
// pi

/** Every message object an event holds: `message`, `assistantMessageEvent.partial`, `messages[]`. */
function piMessages(event: Json): Json[] {
  const found: Json[] = [];
  const message = object(event['message']);
  if (message !== undefined) found.push(message);
  const partial = object(object(event['assistantMessageEvent'])?.['partial']);
  if (partial !== undefined) found.push(partial);
  found.push(...objects(event['messages']));
  return found;
}

/** pi versions that send snapshots only: every `assistantMessageEvent.delta` removed. */
export function piSnapshotsOnly(lines: readonly string[]): string[] {
  return eachEvent(lines, (event) => {
    if (event['type'] !== 'message_update') return;
    const update = object(event['assistantMessageEvent']);
    if (update !== undefined) delete update['delta'];
  });
}

/**
 * pi versions that send snapshots only and, after a tool turn, begin each assistant message by
 * repeating the earlier assistant messages' text: `piSnapshotsOnly`, then every copy of an
 * assistant message after the first (`message_start`, `message_update` partial and message,
 * `message_end`, `turn_end`, `agent_end`) begins with the text of the assistant messages before it
 * (their `message_end` text, concatenated): prepended to its first text block, or as a text block
 * of its own in front when it has none yet. A `text_end` of that first block says the same.
 */
export function piReplayedPrefix(lines: readonly string[]): string[] {
  const plain = piSnapshotsOnly(lines);
  // The text before each assistant message, by its timestamp (pi's message key).
  const before = new Map<number, string>();
  let earlier = '';
  for (const line of plain) {
    const event = JSON.parse(line) as Json;
    const message = object(event['message']);
    if (event['type'] !== 'message_end' || message?.['role'] !== 'assistant' || typeof message['timestamp'] !== 'number') continue;
    before.set(message['timestamp'], earlier);
    earlier += blocks(message).map((block) => (block['type'] === 'text' && typeof block['text'] === 'string' ? block['text'] : '')).join('');
  }
  return eachEvent(plain, (event) => {
    const update = object(event['assistantMessageEvent']);
    const partial = object(update?.['partial']);
    const prefixOf = (message: Json): string => {
      const timestamp = message['timestamp'];
      return message['role'] === 'assistant' && typeof timestamp === 'number' ? (before.get(timestamp) ?? '') : '';
    };
    // text_end repeats its block's text: the first text block's is prefixed too (checked before the blocks change).
    if (update?.['type'] === 'text_end' && partial !== undefined && typeof update['content'] === 'string') {
      const index = update['contentIndex'];
      const first = blocks(partial).findIndex((block) => block['type'] === 'text');
      if (index === first) update['content'] = prefixOf(partial) + update['content'];
    }
    for (const message of piMessages(event)) {
      const prefix = prefixOf(message);
      if (prefix === '') continue;
      const text = blocks(message).find((block) => block['type'] === 'text');
      if (text !== undefined) text['text'] = prefix + (typeof text['text'] === 'string' ? text['text'] : '');
      else if (Array.isArray(message['content'])) message['content'].unshift({ type: 'text', text: prefix });
    }
  });
}

function emptyText(message: unknown): void {
  for (const block of blocks(message)) {
    if (block['type'] === 'text') block['text'] = '';
    if (block['type'] === 'thinking') block['thinking'] = '';
  }
}

/**
 * pi sending deltas only: the deltas kept, and the text of every `message_update` snapshot removed
 * (text and thinking blocks of `partial` and `message` emptied, and the `content` of `text_end` and
 * `thinking_end`). With `endText: false`, the assistant `message_end` has no text either.
 */
export function piDeltasOnly(lines: readonly string[], options: { readonly endText: boolean }): string[] {
  return eachEvent(lines, (event) => {
    if (event['type'] === 'message_update') {
      const update = object(event['assistantMessageEvent']);
      emptyText(update?.['partial']);
      emptyText(event['message']);
      if (update !== undefined && typeof update['content'] === 'string') update['content'] = '';
    }
    if (!options.endText && event['type'] === 'message_end' && object(event['message'])?.['role'] === 'assistant') emptyText(event['message']);
  });
}

// ---------------------------------------------------------------------------------------------
// Claude Code

export interface AbandonOptions {
  /** Which streamed top-level message to abandon (0 = the first `message_start`). */
  readonly message: number;
  /** How many of its `content_block_delta` lines were streamed before the stream stalled. */
  readonly deltas: number;
  /** The text of the fallback's text block, when it differs from what the recording says. */
  readonly fallbackText?: string;
}

function hash(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function uuidFrom(seed: string): string {
  const hex = hash(seed);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** The synthetic end of an abandoned stream, as the CLI printed it in `claude/cancel-sigint.jsonl`. */
function abandonTemplates(): { stop: Json; delta: Json; messageStop: Json } {
  const lines = fixtureLines('claude/cancel-sigint.jsonl').map((line) => JSON.parse(line) as Json);
  const at = lines.findIndex((line) => object(line['abandoned_blocks']) !== undefined);
  const [stop, delta, messageStop] = lines.slice(at - 2, at + 1);
  if (stop === undefined || delta === undefined || messageStop === undefined) throw new Error('cancel-sigint.jsonl has no abandoned_blocks line');
  return { stop, delta, messageStop };
}

/**
 * Claude Code abandoning a stalled stream (PROTOCOL.md §5, `hang`): the chosen message's stream is
 * cut after `deltas` deltas; then come the synthetic `content_block_stop`, `message_delta` and
 * `message_stop` with `abandoned_blocks` (copied from cancel-sigint.jsonl, with this run's session,
 * message id and block index); then the non-streaming fallback: one block-level `assistant` line per
 * block of the recorded message, under a NEW message id, with the message's real `stop_reason`
 * (`end_turn`, or `tool_use`), and with the text block's text replaced by `fallbackText` if given.
 * The recording's lines after that message's `message_stop` follow unchanged.
 */
export function claudeAbandoned(lines: readonly string[], options: AbandonOptions): string[] {
  const events = lines.map((line) => JSON.parse(line) as Json);
  const inner = (line: Json): Json | undefined => (line['type'] === 'stream_event' ? object(line['event']) : undefined);
  const starts = events.filter((line) => inner(line)?.['type'] === 'message_start' && line['parent_tool_use_id'] == null);
  const id = starts[options.message]?.['api_message_id'];
  if (typeof id !== 'string') throw new Error(`no streamed message ${options.message}`);
  const ofMessage = (line: Json): boolean => line['api_message_id'] === id || (line['type'] === 'assistant' && object(line['message'])?.['id'] === id);
  const deltaAt = events.flatMap((line, index) => (ofMessage(line) && inner(line)?.['type'] === 'content_block_delta' ? [index] : []));
  const cut = deltaAt[options.deltas - 1];
  const stopAt = events.findIndex((line) => ofMessage(line) && inner(line)?.['type'] === 'message_stop');
  if (cut === undefined || stopAt === -1) throw new Error(`message ${id} has fewer than ${options.deltas} deltas`);
  for (const line of events.slice(cut + 1, stopAt)) if (!ofMessage(line)) throw new Error(`a line of another message inside ${id}'s stream`);

  const cutEvent = events[cut] as Json;
  const blockIndex = inner(cutEvent)?.['index'];
  const session = cutEvent['session_id'];
  const stopReason = object(events.slice(cut, stopAt).map((line) => inner(line)).find((event) => event?.['type'] === 'message_delta')?.['delta'])?.['stop_reason'];
  const template = abandonTemplates();
  const synthetic = (line: Json, event: Json, n: number): Json => ({ ...line, event, session_id: session, uuid: uuidFrom(`${id}:abandon:${n}`), api_message_id: id });
  const abandonEnd = [
    synthetic(template.stop, { ...object(template.stop['event']), index: blockIndex }, 1),
    synthetic(template.delta, object(template.delta['event']) ?? {}, 2),
    { ...synthetic(template.messageStop, object(template.messageStop['event']) ?? {}, 3), abandoned_blocks: { api_message_id: id, from_block_index: blockIndex } },
  ];

  const fallbackId = `msg_${hash(`${id}:fallback`).slice(0, 24)}`;
  let texts = 0;
  const fallback = events
    .filter((line) => line['type'] === 'assistant' && object(line['message'])?.['id'] === id)
    .map((line, n): Json => {
      const message = structuredClone(object(line['message']) ?? {});
      message['id'] = fallbackId;
      message['stop_reason'] = stopReason;
      for (const block of blocks(message)) {
        if (block['type'] !== 'text' || options.fallbackText === undefined) continue;
        texts += 1;
        block['text'] = options.fallbackText;
      }
      return { ...line, message, uuid: uuidFrom(`${id}:fallback:${n}`), request_id: `req_${hash(`${id}:fallback`).slice(0, 24)}` };
    });
  if (options.fallbackText !== undefined && texts !== 1) throw new Error(`fallbackText needs exactly one text block in ${id}; found ${texts}`);

  return [...events.slice(0, cut + 1), ...abandonEnd, ...fallback, ...events.slice(stopAt + 1)].map((line) => JSON.stringify(line));
}

// ---------------------------------------------------------------------------------------------
// The derived fixtures

export const TOOL_THEN_TEXT = 'pi/tool_call_then_text.jsonl';
export const THINKING_TEXT = 'pi/thinking_text.jsonl';

export const PI_DERIVED: readonly DerivedFixture[] = [
  {
    name: 'pi/derived/tool_call_then_text.snapshots-only.jsonl',
    from: TOOL_THEN_TEXT,
    how: 'every `assistantMessageEvent.delta` removed; the snapshots kept (pi versions that send snapshots only).',
    derive: piSnapshotsOnly,
  },
  {
    name: 'pi/derived/thinking_text.snapshots-only.jsonl',
    from: THINKING_TEXT,
    how: 'every `assistantMessageEvent.delta` removed; the snapshots kept.',
    derive: piSnapshotsOnly,
  },
  {
    name: 'pi/derived/tool_call_then_text.replayed-prefix.jsonl',
    from: TOOL_THEN_TEXT,
    how:
      'snapshots only, and every copy of the assistant message after the tool turn (`message_start`, `message_update` partial and message, ' +
      '`message_end`, `turn_end`, `agent_end`) begins with the first assistant message\'s text, "Let me run a tool first." ' +
      '(prepended to its first text block, or a text block of its own when it has none yet; its `text_end` content too).',
    derive: piReplayedPrefix,
  },
  {
    name: 'pi/derived/tool_call_then_text.deltas-only.jsonl',
    from: TOOL_THEN_TEXT,
    how: 'the deltas kept; every `message_update` snapshot without text (text and thinking blocks of `partial` and `message` emptied, `text_end`/`thinking_end` content emptied); `message_end` unchanged.',
    derive: (lines) => piDeltasOnly(lines, { endText: true }),
  },
  {
    name: 'pi/derived/thinking_text.deltas-only.jsonl',
    from: THINKING_TEXT,
    how: 'as tool_call_then_text.deltas-only: deltas kept, `message_update` snapshots emptied, `message_end` unchanged.',
    derive: (lines) => piDeltasOnly(lines, { endText: true }),
  },
  {
    name: 'pi/derived/tool_call_then_text.deltas-only-no-end-text.jsonl',
    from: TOOL_THEN_TEXT,
    how: 'as tool_call_then_text.deltas-only, and the assistant `message_end` text blocks emptied too: the deltas are the only text.',
    derive: (lines) => piDeltasOnly(lines, { endText: false }),
  },
  {
    name: 'pi/derived/thinking_text.deltas-only-no-end-text.jsonl',
    from: THINKING_TEXT,
    how: 'as thinking_text.deltas-only, and the assistant `message_end` text and thinking blocks emptied too.',
    derive: (lines) => piDeltasOnly(lines, { endText: false }),
  },
];

export const TEXT_PARTIAL = 'claude/text-partial.jsonl';
export const TOOL_PARTIAL = 'claude/tool-partial.jsonl';
/** The fallback text of the variant in which the non-streaming answer differs from the stream. */
export const DIFFERENT_FALLBACK = 'Hello from a different answer.';

export const CLAUDE_DERIVED: readonly DerivedFixture[] = [
  {
    name: 'claude/derived/text-partial.abandoned-continued.jsonl',
    from: TEXT_PARTIAL,
    how:
      'the stream cut after 2 of 3 deltas ("Hello ", "from the "); the synthetic `content_block_stop`, `message_delta` and `message_stop` with ' +
      '`abandoned_blocks` (as in cancel-sigint.jsonl); a fallback block-level `assistant` line with a new message id, the full text ' +
      '"Hello from the fake server." and `stop_reason: "end_turn"`; then the recorded `result`.',
    derive: (lines) => claudeAbandoned(lines, { message: 0, deltas: 2 }),
  },
  {
    name: 'claude/derived/text-partial.abandoned-different.jsonl',
    from: TEXT_PARTIAL,
    how: `as text-partial.abandoned-continued, but the fallback's text is "${DIFFERENT_FALLBACK}" (it departs from the streamed "Hello from the " after "Hello from "); the recorded \`result\` unchanged.`,
    derive: (lines) => claudeAbandoned(lines, { message: 0, deltas: 2, fallbackText: DIFFERENT_FALLBACK }),
  },
  {
    name: 'claude/derived/tool-partial.abandoned-after-tool.jsonl',
    from: TOOL_PARTIAL,
    how: 'the second message (after the tool turn) cut after 1 of 2 deltas ("The command "); the synthetic end with `abandoned_blocks`; a fallback line with a new id, "The command printed: hello" and `stop_reason: "end_turn"`; then the recorded `result`.',
    derive: (lines) => claudeAbandoned(lines, { message: 1, deltas: 1 }),
  },
  {
    name: 'claude/derived/tool-partial.abandoned-before-tool.jsonl',
    from: TOOL_PARTIAL,
    how:
      'the first message cut after 1 of 2 text deltas ("I will run "), before its tool_use block; the synthetic end with `abandoned_blocks`; ' +
      'the fallback as two block-level lines under a new id (text "I will run a command.", then the same tool_use) with `stop_reason: "tool_use"`; ' +
      'then the recording from the tool result on.',
    derive: (lines) => claudeAbandoned(lines, { message: 0, deltas: 1 }),
  },
];

function readme(agent: string, derived: readonly DerivedFixture[]): string {
  const lines = [
    `# Derived ${agent} transcripts`,
    '',
    'Output shapes our recorded runs did not produce, made from the recorded transcripts in the folder above by',
    'the deterministic transformations in `spec/helpers/derive-transcripts.ts` (re-run `npx tsx spec/helpers/derive-transcripts.ts`',
    'to write them again; a spec checks that these files are what the derivation gives). Not recordings: nothing here was printed by a real agent.',
    '',
    ...derived.map((item) => `- \`${item.name.slice(item.name.lastIndexOf('/') + 1)}\`: from \`${item.from.slice(item.from.indexOf('/') + 1)}\`; ${item.how}`),
    '',
  ];
  return lines.join('\n');
}

/** The README of a derived folder (`pi` or `claude`), as the derivation writes it. */
export function derivedReadme(agent: 'pi' | 'claude'): string {
  return readme(agent === 'pi' ? 'pi' : 'Claude Code', agent === 'pi' ? PI_DERIVED : CLAUDE_DERIVED);
}

/** Writes every derived fixture and the two READMEs. */
export function writeDerivedFixtures(): void {
  for (const derived of [...PI_DERIVED, ...CLAUDE_DERIVED]) {
    mkdirSync(dirname(fixture(derived.name)), { recursive: true });
    writeFileSync(fixture(derived.name), derivedText(derived));
  }
  writeFileSync(fixture('pi/derived/README.md'), derivedReadme('pi'));
  writeFileSync(fixture('claude/derived/README.md'), derivedReadme('claude'));
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) writeDerivedFixtures();
