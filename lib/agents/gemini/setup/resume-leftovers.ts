import { closeSync, openSync, readdirSync, readSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { defer, finalize, tap, type MonoTypeOperatorFunction } from 'rxjs';
import type { CliMessage } from '../../../messages.js';
import { parseJsonObject } from '../../shared/json-object.js';

/*
 * Gemini CLI 0.61 records a session in `<home>/.gemini/tmp/<project>/chats/`, one file per
 * recording, named `session-<YYYY-MM-DDTHH-MM>-<first 8 characters of the id>.jsonl`. A resume
 * (`--resume`) first opens a fresh recording for the current minute, as for a new session, and
 * then switches to the resumed session's file. When the minute differs from the one the session
 * began in, the fresh file stays behind: the session's metadata and the context message, no
 * conversation. At its next start in that folder, Gemini CLI's session cleanup (on by default)
 * takes that file for a broken session and deletes every file of the same short id, the resumed
 * session's own included: the session cannot be resumed again.
 */

/** The biggest file taken for a leftover: one holds the metadata and the context message. */
const MAX_LEFTOVER_BYTES = 256 * 1024;

/** A recording that began this long before the run started is never taken for its leftover. */
const CLOCK_SLACK_MS = 2_000;

/**
 * Removes the file a resume of `sessionId` left behind (see above) in any of Gemini CLI's project
 * folders under `home`: one that belongs to the session, was written since `since` (epoch ms),
 * holds no conversation, and sits beside a file of the same session that does. Returns the paths
 * it removed. Never throws: what cannot be read or removed stays.
 */
export function removeResumeLeftovers(home: string, sessionId: string, since: number): string[] {
  const removed: string[] = [];
  const suffix = `-${sessionId.slice(0, 8)}.jsonl`;
  for (const chats of chatFolders(home)) {
    const files = readNames(chats)
      .filter((name) => name.startsWith('session-') && name.endsWith(suffix))
      .map((name) => join(chats, name));
    const kinds = files.map((file) => ({ file, kind: recordingKind(file, sessionId, since) }));
    if (!kinds.some(({ kind }) => kind === 'conversation')) continue;
    for (const { file, kind } of kinds) {
      if (kind !== 'leftover') continue;
      try {
        unlinkSync(file);
        removed.push(file);
      } catch {
        // Gone already, or not ours to remove.
      }
    }
  }
  return removed;
}

/**
 * After a run that resumed a session (the stream's `session.resumed`), removes what the resume
 * left behind, before the terminal message is passed on (so a run started on it finds the folder
 * clean), or when the run is unsubscribed.
 */
export function removingResumeLeftovers(home: () => string): MonoTypeOperatorFunction<CliMessage> {
  return (source) =>
    defer(() => {
      const since = Date.now();
      let resumed: string | undefined;
      const clean = (): void => {
        if (resumed === undefined) return;
        const sessionId = resumed;
        resumed = undefined;
        removeResumeLeftovers(home(), sessionId, since);
      };
      return source.pipe(
        tap((message) => {
          if (message.type === 'session.resumed') resumed = message.sessionId;
          else if (message.type === 'terminal.completed' || message.type === 'terminal.failed') clean();
        }),
        finalize(clean),
      );
    });
}

function chatFolders(home: string): string[] {
  const tmp = join(home, '.gemini', 'tmp');
  return readNames(tmp).map((project) => join(tmp, project, 'chats'));
}

function readNames(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

type RecordingKind = 'conversation' | 'leftover' | 'other';

/** What a recording file is to the session: its conversation, a resume's leftover, or neither. */
function recordingKind(file: string, sessionId: string, since: number): RecordingKind {
  let size: number;
  let modified: number;
  try {
    const stats = statSync(file);
    if (!stats.isFile()) return 'other';
    size = stats.size;
    modified = stats.mtimeMs;
  } catch {
    return 'other';
  }
  const lines = readHead(file, Math.min(size, MAX_LEFTOVER_BYTES)).split('\n').filter((line) => line.trim() !== '');
  const records = lines.map(parseJsonObject);
  const header = records[0];
  if (header === undefined || header['sessionId'] !== sessionId) return 'other';
  if (records.slice(1).some(isConversation)) return 'conversation';
  // A leftover is small, whole (every line a record) and written by this run.
  if (size > MAX_LEFTOVER_BYTES || records.includes(undefined) || modified < since - CLOCK_SLACK_MS) return 'other';
  return 'leftover';
}

function readHead(file: string, bytes: number): string {
  const buffer = Buffer.alloc(bytes);
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const read = readSync(fd, buffer, 0, bytes, 0);
    return buffer.subarray(0, read).toString('utf8');
  } catch {
    return '';
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** A message record, or a rewrite of the messages that holds more than the context message. */
function isConversation(record: Record<string, unknown> | undefined): boolean {
  if (record === undefined) return false;
  if (typeof record['type'] === 'string') return true;
  const set = record['$set'];
  if (typeof set !== 'object' || set === null) return false;
  const messages = (set as Record<string, unknown>)['messages'];
  return Array.isArray(messages) && messages.some((message) => !isContextMessage(message));
}

/** The `<session_context>` user message every recording starts with. */
function isContextMessage(message: unknown): boolean {
  if (typeof message !== 'object' || message === null) return false;
  const { type, content } = message as Record<string, unknown>;
  if (type !== 'user' || !Array.isArray(content)) return false;
  return content.every((part) => {
    const text = typeof part === 'object' && part !== null ? (part as Record<string, unknown>)['text'] : undefined;
    return typeof text === 'string' && text.trimStart().startsWith('<session_context>');
  });
}
