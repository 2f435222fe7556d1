import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { from, lastValueFrom, toArray } from 'rxjs';
import { AGENTS } from '../../lib/agent-table.js';
import { codexAppServerDialect } from '../../lib/dialects.js';
import { agentOutputToMessages, type CliMessage, type Dialect, type ProcessItem } from '../../lib/index.js';
import { sessionInvocation } from '../../lib/sessions/agent-session.js';
import { exit, scheduler } from '../helpers/items.js';
import { fixture } from '../helpers/processes.js';

// An agent that sends an event of a type its dialect does not know says so once per type (an
// `agent.warning`), and nothing for the types it really sends: every recording of every agent is
// read through the dialect that reads it in a run or a session.

const session = (agent: 'gemini' | 'qwen'): Dialect => {
  const dialect = agent === 'gemini' ? sessionInvocation(AGENTS.gemini, {}).dialect : sessionInvocation(AGENTS.qwen, {}).dialect;
  if (dialect === undefined) throw new Error(`${agent} sessions have no dialect of their own`);
  return dialect;
};

/** The dialect that reads each recording, by its path under spec/fixtures (the first that matches). */
const READERS: readonly [RegExp, () => Dialect][] = [
  [/^(pi|retry)\//, () => AGENTS.pi.dialect()],
  [/^claude\//, () => AGENTS.claude.dialect()],
  [/^codex\/|^codex-content\/exec-/, () => AGENTS.codex.dialect()],
  [/^codex-content\/app-server-/, () => codexAppServerDialect()],
  [/^gemini\//, () => AGENTS.gemini.dialect()],
  [/^qwen\//, () => AGENTS.qwen.dialect()],
  [/^acp\/qwen-/, () => session('qwen')],
  [/^sessions\/pi-/, () => AGENTS.pi.dialect()],
  [/^sessions\/claude-/, () => AGENTS.claude.dialect()],
  [/^sessions\/codex-/, () => codexAppServerDialect()],
  [/^sessions\/gemini-/, () => session('gemini')],
  [/^demo\/claude-/, () => AGENTS.claude.dialect()],
  [/^demo\/codex-/, () => AGENTS.codex.dialect()],
  [/^demo\/gemini-/, () => AGENTS.gemini.dialect()],
  [/^demo\/qwen-/, () => AGENTS.qwen.dialect()],
  [/^demo\//, () => AGENTS.pi.dialect()],
];

function recordings(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return recordings(path);
    return entry.name.endsWith('.jsonl') ? [path] : [];
  });
}

// The demo's recordings (examples/replay-agent/transcripts) are read too, under `demo/`.
const DEMO = fileURLToPath(new URL('../../examples/replay-agent/transcripts/', import.meta.url));
const ALL = [
  ...recordings(fixture('.')).map((path) => relative(fixture('.'), path)),
  ...recordings(DEMO).map((path) => `demo/${relative(DEMO, path)}`),
].sort();

function linesOf(path: string): ProcessItem[] {
  return readFileSync(path.startsWith('demo/') ? join(DEMO, path.slice('demo/'.length)) : fixture(path), 'utf8')
    .split('\n')
    .filter((text) => text !== '')
    .map((text) => ({ kind: 'line', text }));
}

async function warningsOf(dialect: Dialect, items: readonly ProcessItem[]): Promise<string[]> {
  const messages = await lastValueFrom(from<ProcessItem[]>([...items, exit()]).pipe(agentOutputToMessages(dialect), toArray()));
  return messages.flatMap((message) => (message.type === 'agent.warning' && message.message.includes('unknown type') ? [message.message] : []));
}

describe('the types each agent really sends are known', () => {
  it('reads recordings of every agent, runs and sessions', () => {
    expect(ALL.length).toBeGreaterThan(100);
    for (const folder of ['pi/', 'claude/', 'codex/', 'gemini/', 'qwen/', 'acp/', 'sessions/', 'codex-content/', 'demo/']) expect(ALL.some((path) => path.startsWith(folder))).toBe(true);
  });

  it.each(ALL)('%s: no unknown type', async (path) => {
    const reader = READERS.find(([pattern]) => pattern.test(path));
    // A new recording is read too: say which dialect reads it.
    expect(reader).toBeDefined();
    expect(await warningsOf((reader as [RegExp, () => Dialect])[1](), linesOf(path))).toEqual([]);
  });
});

const json = (value: unknown): ProcessItem => ({ kind: 'line', text: JSON.stringify(value) });
const rpc = (method: string, params: unknown, id?: number): ProcessItem => json({ jsonrpc: '2.0', method, params, ...(id === undefined ? {} : { id }) });

/** Each dialect, with events of types it does not know (each twice) and one it knows in between. */
const INJECTED: readonly { readonly name: string; readonly dialect: () => Dialect; readonly agent: string; readonly events: readonly ProcessItem[]; readonly types: readonly string[] }[] = [
  {
    name: 'pi (JSON and RPC modes)',
    dialect: () => AGENTS.pi.dialect(),
    agent: 'pi',
    events: [json({ type: 'agent_paused' }), json({ type: 'queue_update', steering: [], followUp: [] }), json({ type: 'agent_paused' })],
    types: ['agent_paused'],
  },
  {
    name: 'Claude Code',
    dialect: () => AGENTS.claude.dialect(),
    agent: 'Claude Code',
    events: [json({ type: 'hologram' }), json({ type: 'rate_limit_event', rate_limit_info: {} }), json({ type: 'hologram' })],
    types: ['hologram'],
  },
  {
    name: 'Codex exec (an event, an item type)',
    dialect: () => AGENTS.codex.dialect(),
    agent: 'Codex',
    events: [
      json({ type: 'turn.paused' }),
      json({ type: 'item.started', item: { id: 'item_0', type: 'hologram' } }),
      json({ type: 'turn.started' }),
      json({ type: 'item.completed', item: { id: 'item_0', type: 'hologram' } }),
      json({ type: 'turn.paused' }),
    ],
    types: ['turn.paused', 'item:hologram'],
  },
  {
    name: 'Codex app-server (a notification, an item type, a request)',
    dialect: () => codexAppServerDialect(),
    agent: 'Codex',
    events: [
      rpc('thread/hologram/updated', {}),
      rpc('item/started', { item: { id: 'i1', type: 'hologram' } }),
      rpc('account/rateLimits/updated', {}),
      rpc('item/hologram/requestApproval', {}, 7),
      rpc('item/completed', { item: { id: 'i1', type: 'hologram' } }),
      rpc('thread/hologram/updated', {}),
      rpc('item/hologram/requestApproval', {}, 8),
    ],
    types: ['thread/hologram/updated', 'item:hologram', 'item/hologram/requestApproval'],
  },
  {
    name: 'Gemini CLI (stream-json)',
    dialect: () => AGENTS.gemini.dialect(),
    agent: 'Gemini CLI',
    events: [json({ type: 'thought' }), json({ type: 'init', session_id: 'S1' }), json({ type: 'thought' })],
    types: ['thought'],
  },
  {
    name: 'Qwen Code (stream-json)',
    dialect: () => AGENTS.qwen.dialect(),
    agent: 'Qwen Code',
    events: [json({ type: 'goal' }), json({ type: 'control_response', response: {} }), json({ type: 'goal' })],
    types: ['goal'],
  },
  {
    name: 'Gemini CLI (ACP: an update kind, a request, a notification; an extension method is not checked)',
    dialect: () => session('gemini'),
    agent: 'Gemini CLI',
    events: [
      rpc('session/update', { sessionId: 'S1', update: { sessionUpdate: 'hologram' } }),
      rpc('hologram/show', {}, 3),
      rpc('session/update', { sessionId: 'S1', update: { sessionUpdate: 'plan', entries: [] } }),
      rpc('_vendor/ping', {}, 4),
      rpc('session/updated', {}),
      rpc('session/update', { sessionId: 'S1', update: { sessionUpdate: 'hologram' } }),
      rpc('hologram/show', {}, 5),
    ],
    types: ['session/update:hologram', 'hologram/show', 'session/updated'],
  },
  {
    name: "Qwen Code (ACP: its own methods are known, another is not)",
    dialect: () => session('qwen'),
    agent: 'Qwen Code',
    events: [rpc('craft/drainMidTurnQueue', { sessionId: 'S1' }, 0), rpc('qwen/notify/session/title-update', {}), rpc('craft/hologram', {}, 1), rpc('craft/hologram', {}, 2)],
    types: ['craft/hologram'],
  },
];

describe('an event of a type the dialect does not know', () => {
  it.each(INJECTED)('$name: one agent.warning per type, naming the agent and the type', async ({ dialect, agent, events, types }) => {
    expect(await warningsOf(dialect(), events)).toEqual(types.map((type) => `${agent} sent an event of unknown type ${JSON.stringify(type)}; it was ignored`));
  });

  it('comes before what the event stands for, in the run where it came (marbles)', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const items = { u: json({ type: 'hologram' }), i: json({ type: 'init', session_id: 'S1', model: 'm' }), x: exit() };
      const run = cold<ProcessItem>('-u-i-u-x|', items).pipe(agentOutputToMessages(AGENTS.gemini.dialect()));
      expectObservable(run).toBe('-w-s---(t|)', {
        w: { type: 'agent.warning', message: 'Gemini CLI sent an event of unknown type "hologram"; it was ignored' },
        s: { type: 'session.started', sessionId: 'S1', model: 'm' },
        t: expect.objectContaining({ type: 'terminal.failed' }) as unknown as CliMessage,
      });
    });
  });
});
