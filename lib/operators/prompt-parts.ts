import type { ImageMimeType, Prompt, PromptPart } from '../messages.js';
import { IMAGE_MIME_TYPES } from '../messages.js';
import { outputInstruction as outputInstructionOf, type OutputContract } from './output-schema.js';

/**
 * A prompt as an agent is given it: its parts in order, each image's bytes in base64 with their
 * type (sniffed from the bytes), each file read into text with its absolute path. Made at call
 * time (`loadPrompt` for a run, when a command is read for a session) and checked there: an agent
 * gets only parts it can take.
 */
export type PromptContent = readonly ContentPart[];

/** One part of a {@link PromptContent}. */
export type ContentPart =
  | { readonly type: 'text'; readonly text: string }
  | {
      readonly type: 'image';
      /** Base64. */
      readonly data: string;
      readonly mimeType: ImageMimeType;
      /** The image's size in bytes. */
      readonly bytes: number;
      /** Where it was read from, when it was a file (absolute). */
      readonly path?: string;
    }
  | { readonly type: 'file'; readonly path: string; readonly text: string };

/** The largest image a prompt takes, in bytes (every agent's model takes this size: Anthropic's API stops at 5 MB). */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;
/** The largest file a prompt takes, in bytes: its text goes into the prompt. */
export const MAX_FILE_BYTES = 1024 * 1024;

/** What an agent (or a transport of it) takes besides text: the parts' types. */
export interface PromptAbilities {
  readonly image: boolean;
  readonly file: boolean;
}

/**
 * The image type of `bytes`, from their first bytes (PNG, JPEG, GIF, WebP), or `undefined` for
 * anything else.
 */
export function sniffImageType(bytes: Uint8Array): ImageMimeType | undefined {
  const at = (offset: number, ...values: number[]): boolean => values.every((value, index) => bytes[offset + index] === value);
  if (at(0, 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'image/png';
  if (at(0, 0xff, 0xd8, 0xff)) return 'image/jpeg';
  if (at(0, 0x47, 0x49, 0x46, 0x38)) return 'image/gif';
  if (at(0, 0x52, 0x49, 0x46, 0x46) && at(8, 0x57, 0x45, 0x42, 0x50)) return 'image/webp';
  return undefined;
}

/** How the parts of a prompt are read: `readFile` gives a file's bytes (it throws when it cannot). */
export interface PromptReader {
  readFile(path: string): Uint8Array;
  /** A path made absolute (against the run's working folder). */
  resolve(path: string): string;
}

/**
 * A prompt made into {@link PromptContent}: strings become text parts, images are read and
 * checked (type from their bytes, at most {@link MAX_IMAGE_BYTES}), files are read as UTF-8 text (at
 * most {@link MAX_FILE_BYTES}, no NUL byte). Throws a `TypeError` naming the part (`prompt[1]`) and
 * what is wrong.
 */
export function promptContent(prompt: Prompt, reader: PromptReader, what = 'prompt'): PromptContent {
  if (typeof prompt === 'string') return [{ type: 'text', text: prompt }];
  if (!Array.isArray(prompt)) throw new TypeError(`agent-rx: ${what} must be a string or an array of parts`);
  const parts = prompt as readonly unknown[];
  const content = parts.map((part, index) => contentPart(part, reader, `${what}[${index}]`));
  if (!content.some((part) => part.type === 'text' ? part.text.trim() !== '' : true)) throw new TypeError(`agent-rx: ${what} must not be empty`);
  return content;
}

function contentPart(part: unknown, reader: PromptReader, where: string): ContentPart {
  if (typeof part === 'string') return { type: 'text', text: part };
  if (typeof part !== 'object' || part === null) throw new TypeError(`agent-rx: ${where} must be a string or a part ({ type: 'text' | 'image' | 'file', … })`);
  const value = part as Partial<Record<string, unknown>> & PromptPart;
  switch (value.type) {
    case 'text':
      if (typeof value.text !== 'string') throw new TypeError(`agent-rx: ${where}.text must be a string`);
      return { type: 'text', text: value.text };
    case 'image':
      return imagePart(value, reader, where);
    case 'file': {
      if (typeof value.path !== 'string' || value.path === '') throw new TypeError(`agent-rx: ${where}.path must be a non-empty string`);
      const path = reader.resolve(value.path);
      const bytes = read(reader, path, where);
      if (bytes.length > MAX_FILE_BYTES) throw new TypeError(`agent-rx: ${where}: ${path} has ${bytes.length} bytes; a file part takes at most ${MAX_FILE_BYTES}`);
      if (sniffImageType(bytes) !== undefined) throw new TypeError(`agent-rx: ${where}: ${path} is an image; give it as { type: 'image', path }`);
      if (bytes.includes(0)) throw new TypeError(`agent-rx: ${where}: ${path} is not a text file (it has NUL bytes)`);
      return { type: 'file', path, text: new TextDecoder('utf-8').decode(bytes) };
    }
    default:
      throw new TypeError(`agent-rx: ${where}.type must be 'text', 'image' or 'file'; got ${shownValue((value as { type?: unknown }).type)}`);
  }
}

function imagePart(value: Partial<Record<string, unknown>>, reader: PromptReader, where: string): ContentPart {
  const said = value['mimeType'];
  if (said !== undefined && !(IMAGE_MIME_TYPES as readonly unknown[]).includes(said)) {
    throw new TypeError(`agent-rx: ${where}.mimeType must be one of ${IMAGE_MIME_TYPES.join(', ')}; got ${JSON.stringify(said)}`);
  }
  let bytes: Uint8Array;
  let path: string | undefined;
  if (typeof value['path'] === 'string' && value['path'] !== '') {
    path = reader.resolve(value['path']);
    bytes = read(reader, path, where);
  } else if (value['data'] instanceof Uint8Array) {
    bytes = value['data'];
  } else if (typeof value['data'] === 'string') {
    if (said === undefined) throw new TypeError(`agent-rx: ${where}.mimeType is needed with data`);
    bytes = base64Bytes(value['data'], where);
  } else {
    throw new TypeError(`agent-rx: ${where} needs a path, or data (bytes or base64) with a mimeType`);
  }
  const shown = path ?? `${where}.data`;
  if (bytes.length === 0) throw new TypeError(`agent-rx: ${where}: ${shown} is empty`);
  if (bytes.length > MAX_IMAGE_BYTES) throw new TypeError(`agent-rx: ${where}: ${shown} has ${bytes.length} bytes; an image takes at most ${MAX_IMAGE_BYTES}`);
  const sniffed = sniffImageType(bytes);
  if (sniffed === undefined) throw new TypeError(`agent-rx: ${where}: ${shown} is not a PNG, JPEG, GIF or WebP image`);
  if (said !== undefined && said !== sniffed) throw new TypeError(`agent-rx: ${where}: ${shown} is ${sniffed}, not ${shownValue(said)}`);
  return { type: 'image', data: bytesToBase64(bytes), mimeType: sniffed, bytes: bytes.length, ...(path === undefined ? {} : { path }) };
}

function read(reader: PromptReader, path: string, where: string): Uint8Array {
  try {
    return reader.readFile(path);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new TypeError(`agent-rx: ${where}: cannot read ${path}${typeof code === 'string' ? ` (${code})` : ''}`, { cause: error });
  }
}

function shownValue(value: unknown): string {
  if (typeof value === 'function' || typeof value === 'symbol' || value === undefined) return typeof value;
  return JSON.stringify(value);
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function base64Bytes(data: string, where: string): Uint8Array {
  const clean = data.replace(/\s+/g, '');
  if (clean.length % 4 !== 0 || !BASE64.test(clean)) throw new TypeError(`agent-rx: ${where}.data is not base64`);
  const binary = atob(clean);
  const bytes = new Uint8Array(binary.length);
  for (let index = 0; index < binary.length; index += 1) bytes[index] = binary.charCodeAt(index);
  return bytes;
}

function bytesToBase64(bytes: Uint8Array): string {
  let binary = '';
  const step = 0x8000;
  for (let start = 0; start < bytes.length; start += step) binary += String.fromCharCode(...bytes.subarray(start, start + step));
  return btoa(binary);
}

/** Whether content has an image. */
export function hasImage(content: PromptContent): boolean {
  return content.some((part) => part.type === 'image');
}

/**
 * The content as one text, for an agent or transport that takes text only: text parts as they
 * are, each file as a `<file path="…">` block holding its text, joined by blank lines. Throws
 * when it holds an image (check {@link hasImage} first).
 */
export function contentText(content: PromptContent): string {
  return content
    .map((part) => {
      if (part.type === 'text') return part.text;
      if (part.type === 'file') return fileBlock(part.path, part.text);
      throw new TypeError('agent-rx: an image cannot be given as text');
    })
    .filter((text) => text !== '')
    .join('\n\n');
}

/** A file given in a prompt, as text: its path and its content. */
export function fileBlock(path: string, text: string): string {
  return `<file path=${JSON.stringify(path)}>\n${text}${text.endsWith('\n') ? '' : '\n'}</file>`;
}

/** What a prompt's text says, for `turn.started.prompt` and the like: the text parts, and a note for each image and file. */
export function contentSummary(content: PromptContent): string {
  return content
    .map((part) => (part.type === 'text' ? part.text : part.type === 'image' ? `[image ${part.path ?? part.mimeType}]` : `[file ${part.path}]`))
    .filter((text) => text !== '')
    .join('\n\n');
}

/**
 * Throws a `TypeError` naming the agent and the part when `content` holds a part `abilities` does
 * not take (`agent-rx: Gemini CLI runs cannot take an image (prompt[1])`).
 */
export function refuseUnsupported(content: PromptContent, abilities: PromptAbilities, who: string, what = 'prompt'): void {
  content.forEach((part, index) => {
    if (part.type === 'image' && !abilities.image) throw new TypeError(`agent-rx: ${who} cannot take an image (${what}[${index}])`);
    if (part.type === 'file' && !abilities.file) throw new TypeError(`agent-rx: ${who} cannot take a file (${what}[${index}])`);
  });
}

/**
 * A command's prompt made ready by the session before its machine reads it (its parts read and
 * checked, its schema made ready), or why it cannot be: carried on the command under
 * {@link PREPARED_PROMPT}, a key no JSON has.
 */
export type PreparedPrompt = { readonly content: PromptContent; readonly output?: OutputContract } | { readonly refused: string };

/** The key of a command's {@link PreparedPrompt}. */
export const PREPARED_PROMPT: unique symbol = Symbol('agent-rx.preparedPrompt');

/** The {@link PreparedPrompt} a command carries, if any. */
export function preparedPromptOf(command: unknown): PreparedPrompt | undefined {
  if (typeof command !== 'object' || command === null) return undefined;
  return (command as { readonly [PREPARED_PROMPT]?: PreparedPrompt })[PREPARED_PROMPT];
}

/**
 * A run's prompt made ready at call time: its content (parts read and checked) and its schema.
 * An agent's run invocation gives it to its agent: as text (`runPromptText`) on a transport
 * that takes text only, or as a one-prompt session's first command.
 */
export interface RunPrompt {
  readonly content: PromptContent;
  readonly output?: OutputContract;
}

/**
 * A run's prompt as one text (files as `<file>` blocks), with the schema's instruction last unless
 * the agent is given the schema natively. Throws when it holds an image (check {@link hasImage}).
 */
export function runPromptText(prompt: RunPrompt, nativeOutput = false): string {
  const text = contentText(prompt.content);
  return prompt.output === undefined || nativeOutput ? text : `${text}\n\n${outputInstructionOf(prompt.output)}`;
}

/** The key under which a run's command carries its {@link RunPrompt} to the session (made ready there for its agent). */
export const RUN_PROMPT: unique symbol = Symbol('agent-rx.runPrompt');

/** The {@link RunPrompt} a command carries, if any. */
export function runPromptOf(command: unknown): RunPrompt | undefined {
  if (typeof command !== 'object' || command === null) return undefined;
  return (command as { readonly [RUN_PROMPT]?: RunPrompt })[RUN_PROMPT];
}
