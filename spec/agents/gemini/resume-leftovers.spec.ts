import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NEVER, of, startWith } from 'rxjs';
import { removeResumeLeftovers, removingResumeLeftovers } from '../../../lib/agents/gemini/setup/resume-leftovers.js';
import type { CliMessage } from '../../../lib/index.js';

const ID = '02efb871-b724-4519-9de7-e6b1268a6f78';
const OTHER = '02efb871-0000-4000-8000-000000000000';

const header = (sessionId: string): string => JSON.stringify({ sessionId, projectHash: 'h', startTime: 't', lastUpdated: 't', kind: 'main' });
const contextMessage = { id: 'c', type: 'user', content: [{ text: '<session_context>\nThis is the Gemini CLI.\n</session_context>' }] };
const context = JSON.stringify({ $set: { messages: [contextMessage], lastUpdated: 't' } });
const user = JSON.stringify({ id: 'u', timestamp: 't', type: 'user', content: [{ text: 'hello' }] });
const rewrite = JSON.stringify({ $set: { messages: [contextMessage, { id: 'u', type: 'user', content: [{ text: 'hello' }] }] } });

let home: string;
let chats: string;

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'agent-rx-leftovers-'));
  chats = join(home, '.gemini', 'tmp', 'work', 'chats');
  mkdirSync(chats, { recursive: true });
});

afterEach(() => {
  rmSync(home, { recursive: true, force: true });
});

function write(name: string, lines: readonly string[]): string {
  const file = join(chats, name);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

const conversation = (): string => write('session-2026-12-02T09-00-02efb871.jsonl', [header(ID), context, user]);
const leftover = (): string => write('session-2026-12-02T10-30-02efb871.jsonl', [header(ID), context]);

describe('removeResumeLeftovers', () => {
  it("removes the empty recording beside the session's conversation, and nothing else", () => {
    const kept = conversation();
    const left = leftover();
    expect(removeResumeLeftovers(home, ID, Date.now() - 1_000)).toEqual([left]);
    expect(readdirSync(chats)).toEqual([kept.slice(chats.length + 1)]);
  });

  it('takes a file whose messages were rewritten with more than the context for a conversation', () => {
    const kept = write('session-2026-12-02T09-00-02efb871.jsonl', [header(ID), rewrite]);
    const left = leftover();
    expect(removeResumeLeftovers(home, ID, Date.now() - 1_000)).toEqual([left]);
    expect(existsSync(kept)).toBe(true);
  });

  it('keeps an empty recording that has no conversation beside it (it may be all there is)', () => {
    const left = leftover();
    expect(removeResumeLeftovers(home, ID, Date.now() - 1_000)).toEqual([]);
    expect(existsSync(left)).toBe(true);
  });

  it('keeps an empty recording written before the run started', () => {
    conversation();
    const left = leftover();
    const old = new Date(Date.now() - 60_000);
    utimesSync(left, old, old);
    expect(removeResumeLeftovers(home, ID, Date.now() - 1_000)).toEqual([]);
    expect(existsSync(left)).toBe(true);
  });

  it("keeps another session's files that share the short id, and files it cannot read as records", () => {
    conversation();
    const other = write('session-2026-12-02T10-31-02efb871.jsonl', [header(OTHER), context]);
    const garbled = write('session-2026-12-02T10-32-02efb871.jsonl', [header(ID), '{"$set":']);
    expect(removeResumeLeftovers(home, ID, Date.now() - 1_000)).toEqual([]);
    expect(existsSync(other)).toBe(true);
    expect(existsSync(garbled)).toBe(true);
  });

  it('does nothing and does not throw where Gemini CLI has no folders', () => {
    rmSync(join(home, '.gemini'), { recursive: true });
    expect(removeResumeLeftovers(home, ID, 0)).toEqual([]);
    expect(removeResumeLeftovers(join(home, 'missing'), ID, 0)).toEqual([]);
  });
});

describe('removingResumeLeftovers', () => {
  const resumed: CliMessage = { type: 'session.resumed', sessionId: ID };
  const completed: CliMessage = { type: 'terminal.completed', stopReason: 'end_turn', sessionId: ID };

  it('removes the leftover before the terminal message is passed on', () => {
    conversation();
    const left = leftover();
    const atTerminal: boolean[] = [];
    of(resumed, completed)
      .pipe(removingResumeLeftovers(() => home))
      .subscribe((message) => {
        if (message.type === 'terminal.completed') atTerminal.push(existsSync(left));
      });
    expect(atTerminal).toEqual([false]);
  });

  it('removes it when the run is unsubscribed after the resume', () => {
    conversation();
    const left = leftover();
    const subscription = NEVER.pipe(startWith(resumed), removingResumeLeftovers(() => home)).subscribe();
    expect(existsSync(left)).toBe(true);
    subscription.unsubscribe();
    expect(existsSync(left)).toBe(false);
  });

  it('touches nothing in a run that did not resume', () => {
    conversation();
    const left = leftover();
    const started: CliMessage = { type: 'session.started', sessionId: ID };
    of(started, completed)
      .pipe(removingResumeLeftovers(() => home))
      .subscribe();
    expect(existsSync(left)).toBe(true);
  });
});
