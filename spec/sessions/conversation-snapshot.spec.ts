import { afterEach, describe, expect, it } from '@jest/globals';
import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AGENTS, createAgentPool, codexSession, geminiSession, piSession, qwenSession, folderStore, restoreSnapshot, takeSnapshot, type ConversationKeeping, type ConversationPlace } from '../../lib/index.js';
import { claudeProjectName } from '../../lib/agents/claude/conversation.js';

// Snapshots of the agents' conversation files on a real file system, and the folder store. That
// the agents resume what is restored is in the conformance specs (`conversation-suite.ts`).

const folders: string[] = [];
afterEach(async () => {
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true });
});
async function temporary(): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), 'agent-rx-snapshot-'));
  folders.push(folder);
  return folder;
}

function placeOf<O>(keeping: ConversationKeeping<O> | undefined, options: O, home: string, cwd: string): ConversationPlace<O> {
  if (keeping === undefined) throw new Error('no keeping');
  return { keeping, options, env: { HOME: home }, cwd };
}

describe('where the agents keep a conversation', () => {
  it("pi: <agent dir>/sessions/--<cwd>--/<time>_<id>.jsonl, or --session-dir; 'none' keeps nothing", () => {
    const keeping = AGENTS.pi.conversation;
    expect(keeping?.folder({}, { HOME: '/home/u' }, '/srv/app')).toBe('/home/u/.pi/agent/sessions/--srv-app--');
    expect(keeping?.folder({}, { HOME: '/home/u', PI_CODING_AGENT_DIR: '~/pi' }, '/srv/app')).toBe('/home/u/pi/sessions/--srv-app--');
    expect(keeping?.folder({ sessionDir: '/var/pi' }, { HOME: '/home/u' }, '/srv/app')).toBe('/var/pi');
    expect(keeping?.folder({ session: 'none' }, { HOME: '/home/u' }, '/srv/app')).toEqual({ refused: "pi keeps no conversation with session: 'none'" });
    expect(keeping?.holds('2026-12-05T10-00-00-000Z_abc.jsonl', 'abc')).toBe(true);
    expect(keeping?.holds('2026-12-05T10-00-00-000Z_abcd.jsonl', 'abc')).toBe(false);
    expect(keeping?.resume({ model: 'm', session: 'new' }, 'abc')).toEqual({ model: 'm', session: { id: 'abc' } });
  });

  it('Claude Code: <config>/projects/<cwd, non-alphanumerics made dashes>/<id>.jsonl and <id>/, long names cut and hashed', () => {
    const keeping = AGENTS.claude.conversation;
    expect(keeping?.folder({}, { HOME: '/home/u' }, '/srv/my.app')).toBe('/home/u/.claude/projects/-srv-my-app');
    expect(keeping?.folder({}, { HOME: '/home/u', CLAUDE_CONFIG_DIR: '/etc/claude' }, '/srv/app')).toBe('/etc/claude/projects/-srv-app');
    expect(keeping?.holds('abc.jsonl', 'abc')).toBe(true);
    expect(keeping?.holds('abc/tool-results/1.txt', 'abc')).toBe(true);
    expect(keeping?.holds('abcd.jsonl', 'abc')).toBe(false);
    expect(keeping?.resume({ session: 'new' }, 'abc')).toEqual({ session: { resume: 'abc' } });
    const long = `/${'deep/'.repeat(50)}work`;
    const name = claudeProjectName(long);
    expect(name).toMatch(/^.{200}-[0-9a-z]+$/);
    expect(name.slice(0, 200)).toBe(long.replace(/[^a-zA-Z0-9]/g, '-').slice(0, 200));
    expect(claudeProjectName(`${long}2`)).not.toBe(name);
  });

  it('Codex: <CODEX_HOME>/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl, whatever the cwd; ephemeral keeps nothing', () => {
    const keeping = AGENTS.codex.conversation;
    expect(keeping?.folder({}, { HOME: '/home/u' }, '/srv/app')).toBe('/home/u/.codex/sessions');
    expect(keeping?.folder({}, { HOME: '/home/u', CODEX_HOME: '/var/codex' }, '/srv/app')).toBe('/var/codex/sessions');
    expect(keeping?.folder({ ephemeral: true }, { HOME: '/home/u' }, '/srv/app')).toEqual({ refused: 'Codex keeps no thread with ephemeral: true' });
    expect(keeping?.holds('2026/12/05/rollout-2026-12-05T10-00-00-01a2.jsonl', '01a2')).toBe(true);
    expect(keeping?.holds('2026/12/05/rollout-2026-12-05T10-00-00-x01a2.jsonl', '01a2')).toBe(false);
    expect(keeping?.holds('rollout-2026-12-05T10-00-00-01a2.jsonl', '01a2')).toBe(false);
    expect(keeping?.resume({ model: 'm' }, '01a2')).toEqual({ model: 'm', session: { resume: '01a2' } });
  });

  it('Qwen Code: <runtime>/projects/<cwd, non-alphanumerics made dashes>/chats/<id>.jsonl and its files beside it, the runtime QWEN_RUNTIME_DIR, QWEN_HOME or ~/.qwen', () => {
    const keeping = AGENTS.qwen.conversation;
    const long = `/srv/${'a rather long folder name/'.repeat(12)}work`;
    expect(keeping?.folder({}, { HOME: '/home/u' }, '/srv/my.app')).toBe('/home/u/.qwen/projects/-srv-my-app');
    expect(keeping?.folder({}, { HOME: '/home/u' }, long)).toBe(`/home/u/.qwen/projects/${long.replace(/[^a-zA-Z0-9]/g, '-')}`);
    expect(keeping?.folder({}, { HOME: '/home/u', QWEN_HOME: '~/qwen' }, '/srv/app')).toBe('/home/u/qwen/projects/-srv-app');
    expect(keeping?.folder({}, { HOME: '/home/u', QWEN_HOME: '/etc/qwen' }, '/srv/app')).toBe('/etc/qwen/projects/-srv-app');
    expect(keeping?.folder({}, { HOME: '/home/u', QWEN_HOME: '/etc/qwen', QWEN_RUNTIME_DIR: 'out' }, '/srv/app')).toBe('/srv/app/out/projects/-srv-app');
    expect(keeping?.folder({}, { HOME: '/home/u', QWEN_RUNTIME_DIR: '~/run' }, '/srv/app')).toBe('/home/u/run/projects/-srv-app');
    expect(keeping?.holds('chats/abc.jsonl', 'abc')).toBe(true);
    expect(keeping?.holds('chats/abc.ledger.jsonl', 'abc')).toBe(true);
    expect(keeping?.holds('chats/abcd.jsonl', 'abc')).toBe(false);
    expect(keeping?.holds('chats/archive/abc.jsonl', 'abc')).toBe(false);
    expect(keeping?.holds('abc.jsonl', 'abc')).toBe(false);
    expect(keeping?.holds('meta.json', 'abc')).toBe(false);
    expect(keeping?.resume({ model: 'm' }, 'abc')).toEqual({ model: 'm', session: { resume: 'abc' } });
  });

  it('Gemini CLI says nothing: its ACP session/load (0.61) cannot be trusted with a conversation, so its sessions refuse idleMs', () => {
    expect(AGENTS.gemini.conversation).toBeUndefined();
  });
});

describe('takeSnapshot and restoreSnapshot', () => {
  it("take the conversation's files only; restored under another home and cwd, the old cwd is replaced in their text", async () => {
    const root = await temporary();
    const from = placeOf(AGENTS.claude.conversation, {}, join(root, 'home-a'), '/srv/a');
    const folder = join(root, 'home-a', '.claude', 'projects', '-srv-a');
    await mkdir(join(folder, 's1', 'tool-results'), { recursive: true });
    await writeFile(join(folder, 's1.jsonl'), '{"cwd":"/srv/a","text":"in /srv/a/x"}\n');
    await writeFile(join(folder, 's1', 'tool-results', 'r.txt'), 'result');
    await writeFile(join(folder, 's2.jsonl'), 'another conversation');
    const snapshot = await takeSnapshot(from, { agent: 'claude', sessionId: 's1', turns: 3 });
    expect(snapshot).toEqual({
      version: 1,
      agent: 'claude',
      sessionId: 's1',
      cwd: '/srv/a',
      takenAt: expect.any(String),
      turns: 3,
      files: [
        { path: 's1.jsonl', text: '{"cwd":"/srv/a","text":"in /srv/a/x"}\n' },
        { path: 's1/tool-results/r.txt', text: 'result' },
      ],
    });
    const to = placeOf(AGENTS.claude.conversation, {}, join(root, 'home-b'), '/home/b/work');
    await restoreSnapshot(to, snapshot);
    const target = join(root, 'home-b', '.claude', 'projects', '-home-b-work');
    expect(await readFile(join(target, 's1.jsonl'), 'utf8')).toBe('{"cwd":"/home/b/work","text":"in /home/b/work/x"}\n');
    expect(await readFile(join(target, 's1', 'tool-results', 'r.txt'), 'utf8')).toBe('result');
    expect((await stat(join(target, 's1.jsonl'))).mode & 0o777).toBe(0o600);
  });

  it('a conversation with no file is an error naming it', async () => {
    const root = await temporary();
    await expect(takeSnapshot(placeOf(AGENTS.pi.conversation, {}, root, '/srv/a'), { agent: 'pi', sessionId: 'nope', turns: 0 })).rejects.toThrow(/no file of the conversation nope in /);
  });

  it("refuses a snapshot's file that would land outside the folder, or that is not of its conversation", async () => {
    const root = await temporary();
    const place = placeOf(AGENTS.claude.conversation, {}, root, '/srv/a');
    const base = { version: 1 as const, agent: 'claude', sessionId: 's1', cwd: '/srv/a', takenAt: '', turns: 1 };
    await expect(restoreSnapshot(place, { ...base, files: [{ path: 's1/../../../evil.jsonl', text: 'x' }] })).rejects.toThrow('is not one of the conversation s1');
    await expect(restoreSnapshot(place, { ...base, files: [{ path: 'other.jsonl', text: 'x' }] })).rejects.toThrow('is not one of the conversation s1');
    expect(await readdir(root)).toEqual([]);
  });
});

describe('folderStore', () => {
  it('keeps a snapshot as one 0600 file per conversation id, and gives undefined for an id it has not got', async () => {
    const root = await temporary();
    const store = folderStore(join(root, 'store'));
    expect(await store.load('chat/1')).toBeUndefined();
    const snapshot = { version: 1 as const, agent: 'pi', sessionId: 's', cwd: '/w', takenAt: 't', turns: 2, files: [{ path: 'a_s.jsonl', text: 'x' }] };
    await store.save('chat/1', snapshot);
    await store.save('chat/1', { ...snapshot, turns: 3 });
    expect(await store.load('chat/1')).toEqual({ ...snapshot, turns: 3 });
    expect(await readdir(join(root, 'store'))).toEqual(['chat%2F1.json']);
    expect((await stat(join(root, 'store', 'chat%2F1.json'))).mode & 0o777).toBe(0o600);
  });

  it('a file that is not a snapshot is an error naming it', async () => {
    const root = await temporary();
    await writeFile(join(root, 'c.json'), '{"version":2}');
    await writeFile(join(root, 'd.json'), 'not json');
    await expect(folderStore(root).load('c')).rejects.toThrow(/c\.json is not a conversation snapshot: version/);
    await expect(folderStore(root).load('d')).rejects.toThrow(/d\.json is not JSON/);
  });
});

describe('the conversation options, checked at call time', () => {
  it('an agent whose definition says nothing of its conversations refuses them with a TypeError, as do a pi or Codex session that keeps none', () => {
    expect(() => geminiSession({ idleMs: 1_000 })).toThrow(new TypeError('agent-rx: Gemini CLI sessions cannot resume a conversation in a new process: idleMs, conversationId and store are not taken'));
    expect(() => geminiSession({ conversationId: 'c' })).toThrow(TypeError);
    expect(() => geminiSession({ store: folderStore('unused') })).toThrow(TypeError);
    expect(() => codexSession({ idleMs: 1_000, ephemeral: true })).toThrow(new TypeError('agent-rx: Codex keeps no thread with ephemeral: true: idleMs needs a conversation the agent keeps'));
    expect(() => piSession({ idleMs: 1_000, session: 'none' })).toThrow(new TypeError("agent-rx: pi keeps no conversation with session: 'none': idleMs needs a conversation the agent keeps"));
    // Qwen Code's are taken: nothing starts until a subscription.
    expect(() => qwenSession({ idleMs: 1_000, conversationId: 'c', store: folderStore('unused') })).not.toThrow();
  });

  it('a pool refuses them: its processes serve one conversation each, for their life', () => {
    expect(() => createAgentPool({ agent: AGENTS.pi, options: { idleMs: 1_000 }, size: 1 })).toThrow(
      new TypeError('agent-rx: a pooled process serves one conversation for its life: idleMs, conversationId and store cannot be pooled'),
    );
  });

  it('bad values are refused with a TypeError naming the option', () => {
    expect(() => piSession({ idleMs: -1 })).toThrow(/idleMs/);
    expect(() => piSession({ conversationId: '' })).toThrow(/conversationId/);
    expect(() => piSession({ store: {} as never })).toThrow(/store must be a store/);
    expect(() => qwenSession({ session: { resume: '' } })).toThrow(/session/);
    expect(() => qwenSession({ session: 'latest' as never })).toThrow(/session must be \{ resume \}/);
  });
});
