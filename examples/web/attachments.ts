// Images the page attaches to a prompt. A session's command carries its image itself (POSTed JSON,
// see sessions.ts); a one-shot run starts with an EventSource, a GET that cannot carry one, so the
// page first POSTs the image to /attachments ({ "data": base64, "mimeType": "image/png" }), gets
// an id, and names it in GET /run?prompt=…&image=<id>. The server builds the image part itself
// from the bytes: a page never names a path, so nothing of the server's disk can be sent to a model.
// An attachment is kept for one run, for at most `ttlMs`; only the newest `max` are kept.
import { randomUUID } from 'node:crypto';
import { IMAGE_MIME_TYPES, type ImageMimeType } from '../../lib/index.js';
import { MAX_IMAGE_BYTES, promptContent } from '../../lib/operators/prompt-parts.js';

/** An image as the page sends it, and as a prompt's part takes it: base64 bytes and their type. */
export interface WebImage {
  readonly data: string;
  readonly mimeType: ImageMimeType;
}

/** The largest body of POST /attachments, in bytes: one image of at most MAX_IMAGE_BYTES, in base64, in JSON. */
export const MAX_ATTACHMENT_BODY_BYTES = Math.ceil(MAX_IMAGE_BYTES / 3) * 4 + 1024;

export interface Attachments {
  /** Keeps an image for one run: its id. */
  put(image: WebImage): string;
  /** The image of `id`, taken (an id is used once); `undefined` when there is none (never given, used, or expired). */
  take(id: string): WebImage | undefined;
}

export function createAttachments(options: { readonly ttlMs?: number; readonly max?: number } = {}): Attachments {
  const ttlMs = options.ttlMs ?? 60_000;
  const max = options.max ?? 16;
  const held = new Map<string, { readonly image: WebImage; readonly until: number }>();
  const sweep = (now: number): void => {
    for (const [id, entry] of held) if (entry.until <= now) held.delete(id);
    // The oldest go first (a Map keeps its insertion order).
    for (const id of held.keys()) {
      if (held.size <= max) break;
      held.delete(id);
    }
  };
  return {
    put: (image) => {
      const id = randomUUID();
      held.set(id, { image, until: performance.now() + ttlMs });
      sweep(performance.now());
      return id;
    },
    take: (id) => {
      sweep(performance.now());
      const entry = held.get(id);
      held.delete(id);
      return entry?.image;
    },
  };
}

/**
 * An image read from a body the page sent (`{ "data": base64, "mimeType": … }`), checked as a
 * prompt's image part is (base64, a PNG, JPEG, GIF or WebP whose bytes are of the type it says, at
 * most MAX_IMAGE_BYTES), or why it is not one.
 */
export function readWebImage(value: unknown, where = 'the image'): WebImage | { readonly problem: string } {
  if (typeof value !== 'object' || value === null) return { problem: `${where} must be { "data": base64, "mimeType": … }` };
  const { data, mimeType } = value as { readonly data?: unknown; readonly mimeType?: unknown };
  if (typeof data !== 'string' || data === '') return { problem: `${where} has no data (base64)` };
  if (!(IMAGE_MIME_TYPES as readonly unknown[]).includes(mimeType)) return { problem: `${where} must be one of ${IMAGE_MIME_TYPES.join(', ')}; got ${mimeType === undefined ? 'none' : JSON.stringify(mimeType)}` };
  try {
    // No reader: a part given as data reads nothing.
    promptContent([{ type: 'image', data, mimeType: mimeType as ImageMimeType }], noFiles, where);
  } catch (error) {
    // `agent-rx: the image[0]: the image[0].data is not a PNG, …` → `the image is not a PNG, …`
    const said = (error instanceof Error ? error.message : String(error)).replace(/^agent-rx: /, '');
    return { problem: said.replaceAll(`${where}[0]: ${where}[0].data`, where).replaceAll(`${where}[0]`, where) };
  }
  return { data, mimeType: mimeType as ImageMimeType };
}

const noFiles = {
  readFile: (): Uint8Array => {
    throw new Error('the web example reads no file for a page');
  },
  resolve: (path: string): string => path,
};
