import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import * as z from 'zod';
import type { ConversationKeeping } from '../agents/definition.js';

/**
 * A conversation's state taken out of its agent's home: the files the agent CLI keeps it in, with
 * what is needed to put them back and resume it, in this host or another.
 */
export interface ConversationSnapshot {
  readonly version: 1;
  /** The agent it belongs to (`pi`, `claude`). */
  readonly agent: string;
  /** The agent's session id, which its resume names. */
  readonly sessionId: string;
  /** The working folder the conversation ran in: written over by the new one where they differ. */
  readonly cwd: string;
  /** When it was taken (ISO 8601). */
  readonly takenAt: string;
  /** The turns the session had numbered when it was taken: the next activation numbers on from there. */
  readonly turns: number;
  /** The files, by their path from the agent's folder of conversations (`/` between names), as UTF-8 text. */
  readonly files: readonly ConversationFile[];
}

/** One file of a {@link ConversationSnapshot}. */
export interface ConversationFile {
  readonly path: string;
  readonly text: string;
}

/** Validates a {@link ConversationSnapshot} read from a store. */
export const ConversationSnapshotSchema = z.strictObject({
  version: z.literal(1),
  agent: z.string().min(1),
  sessionId: z.string().min(1),
  cwd: z.string().min(1),
  takenAt: z.string(),
  turns: z.number().int().nonnegative(),
  files: z.array(z.strictObject({ path: z.string().min(1), text: z.string() })).min(1),
});

/**
 * Where a session's snapshots are kept, by conversation id: a folder ({@link folderStore}, the
 * default), Redis on a fleet, or the caller's own. `load` gives `undefined` for an id it has not
 * got; both may reject (the session then ends `terminal.failed`, reason `setup`).
 */
export interface ConversationStore {
  /** The snapshot kept for a conversation id, or `undefined` for none. */
  load(conversationId: string): Promise<ConversationSnapshot | undefined>;
  /** Keeps a snapshot for a conversation id, in place of the one before. */
  save(conversationId: string, snapshot: ConversationSnapshot): Promise<void>;
}

/**
 * A store that keeps each snapshot as one JSON file in `folder` (made on first save, mode 0700;
 * files 0600: a conversation may hold secrets). A save replaces the file whole (written beside it,
 * then renamed), so a reader never sees half of one.
 *
 * @example
 * commands.pipe(piSession({ idleMs: 60_000, conversationId: 'chat-42', store: folderStore('./conversations') }))
 */
export function folderStore(folder: string): ConversationStore {
  const fileOf = (id: string): string => join(folder, `${encodeURIComponent(id)}.json`);
  return {
    load: async (id) => {
      let text: string;
      try {
        text = await readFile(fileOf(id), 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw error;
      }
      return parseSnapshot(text, fileOf(id));
    },
    save: async (id, snapshot) => {
      await mkdir(folder, { recursive: true, mode: 0o700 });
      const file = fileOf(id);
      const temporary = `${file}.${process.pid}.${Date.now()}.tmp`;
      await writeFile(temporary, JSON.stringify(snapshot), { mode: 0o600 });
      await rename(temporary, file);
    },
  };
}

/**
 * A session's options for a conversation that outlives its processes, taken by every agent whose
 * definition says where its CLI keeps a conversation (refused with a `TypeError` by the others).
 */
export interface ConversationOptions {
  /**
   * After this long without a turn (ms), the session saves its conversation in `store`, ends its
   * agent process gracefully and says `session.passivated`; it stays subscribed, and the next
   * command starts a process that resumes the conversation (`session.resumed` with `resumeMs`).
   * Default: never.
   */
  readonly idleMs?: number;
  /**
   * The conversation's key in `store`. A session whose key has a snapshot there resumes it (in this
   * host or another, under its own `cwd`); its turns go on from the snapshot's. Default: the
   * agent's session id.
   */
  readonly conversationId?: string;
  /**
   * Where snapshots are kept: after every completed turn and when the session sleeps. Default: a
   * {@link folderStore} in the system's temporary folder (`agent-rx-conversations`).
   */
  readonly store?: ConversationStore;
}

/**
 * A snapshot from its JSON text, checked (`where` names it in the error): for a store of the
 * caller's own.
 *
 * @example
 * const response = await fetch('http://127.0.0.1:8080/conversations/chat-42');
 * const snapshot = parseSnapshot(await response.text(), 'conversation chat-42');
 */
export function parseSnapshot(text: string, where: string): ConversationSnapshot {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error(`${where} is not JSON`);
  }
  const checked = ConversationSnapshotSchema.safeParse(value);
  if (!checked.success) throw new Error(`${where} is not a conversation snapshot: ${checked.error.issues[0]?.path.join('.') ?? ''} ${checked.error.issues[0]?.message ?? ''}`.trim());
  return checked.data;
}

/** Where a session's conversations are, and the session's options, environment and working folder. */
export interface ConversationPlace<SessionOptions> {
  readonly keeping: ConversationKeeping<SessionOptions>;
  readonly options: SessionOptions;
  /** The process's whole environment. */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
}

/** The folder of a place's conversations, or a `TypeError` saying why it keeps none. */
export function conversationFolder<SessionOptions>(place: ConversationPlace<SessionOptions>): string {
  const folder = place.keeping.folder(place.options, place.env, place.cwd);
  if (typeof folder !== 'string') throw new TypeError(`agent-rx: ${folder.refused}: idleMs needs a conversation the agent keeps`);
  return folder;
}

/**
 * Reads the files of the conversation `sessionId` from its place. Rejects when it has none.
 *
 * @example
 * // The session id a pi session said in its `session.started`:
 * const sessionId = '01a24637-76c3-7277-b817-4d4261baa1b7';
 * const place = { keeping: AGENTS.pi.conversation!, options: {}, env: process.env, cwd: process.cwd() };
 * const snapshot = await takeSnapshot(place, { agent: 'pi', sessionId, turns: 3 });
 */
export async function takeSnapshot<SessionOptions>(
  place: ConversationPlace<SessionOptions>,
  about: { readonly agent: string; readonly sessionId: string; readonly turns: number },
): Promise<ConversationSnapshot> {
  const folder = conversationFolder(place);
  const paths = (await filesUnder(folder)).filter((path) => place.keeping.holds(path, about.sessionId)).sort();
  if (paths.length === 0) throw new Error(`no file of the conversation ${about.sessionId} in ${folder}`);
  const files = await Promise.all(paths.map(async (path) => ({ path, text: await readFile(join(folder, ...path.split('/')), 'utf8') })));
  return { version: 1, agent: about.agent, sessionId: about.sessionId, cwd: place.cwd, takenAt: new Date().toISOString(), turns: about.turns, files };
}

/**
 * Writes a snapshot's files into a place (files 0600), the snapshot's working folder replaced by
 * the place's in their text where the two differ. A path that would leave the folder is refused.
 *
 * @example
 * // On another host, under another working folder; then `piSession({ session: { id: snapshot.sessionId } })`.
 * const snapshot = await folderStore('./conversations').load('chat-42');
 * if (snapshot !== undefined) await restoreSnapshot({ keeping: AGENTS.pi.conversation!, options: {}, env: process.env, cwd: '/srv/work' }, snapshot);
 */
export async function restoreSnapshot<SessionOptions>(place: ConversationPlace<SessionOptions>, snapshot: ConversationSnapshot): Promise<void> {
  const folder = resolve(conversationFolder(place));
  const from = JSON.stringify(snapshot.cwd).slice(1, -1);
  const to = JSON.stringify(place.cwd).slice(1, -1);
  for (const file of snapshot.files) {
    const target = resolve(folder, ...file.path.split('/'));
    if (!target.startsWith(folder + sep) || !place.keeping.holds(file.path, snapshot.sessionId)) {
      throw new Error(`the snapshot's file ${JSON.stringify(file.path)} is not one of the conversation ${snapshot.sessionId}`);
    }
    await mkdir(join(target, '..'), { recursive: true, mode: 0o700 });
    await writeFile(target, from === to ? file.text : file.text.split(from).join(to), { mode: 0o600 });
  }
}

/** The files under a folder, by their path from it (`/` between names); none when it does not exist. */
async function filesUnder(folder: string, prefix = ''): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(folder, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const found: string[] = [];
  for (const entry of entries) {
    if (entry.isFile()) found.push(`${prefix}${entry.name}`);
    else if (entry.isDirectory()) found.push(...(await filesUnder(join(folder, entry.name), `${prefix}${entry.name}/`)));
  }
  return found;
}
