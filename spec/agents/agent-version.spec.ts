import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { from, lastValueFrom, toArray } from 'rxjs';
import { AGENTS } from '../../lib/agent-table.js';
import { claudeSessionProtocol } from '../../lib/agents/claude/session.js';
import { codexAppServerProtocol, codexVersion } from '../../lib/agents/codex/app-server/session.js';
import { agentOutputToMessages, SessionStartedSchema, type CliMessage, type Dialect, type ProcessItem } from '../../lib/index.js';
import type { ProtocolFact, ProtocolReaction } from '../../lib/operators/session-protocol.js';
import { exit } from '../helpers/items.js';
import { fixture } from '../helpers/processes.js';
import { acpByHand } from '../helpers/acp-by-hand.js';

// The agent CLI's version in `session.started`, where the CLI says it in its own output: read from
// recorded lines (runs) and recorded answers (sessions); absent where the CLI says none.

const lines = (path: string): ProcessItem[] =>
  readFileSync(fixture(path), 'utf8')
    .split('\n')
    .filter((text) => text !== '')
    .map((text) => ({ kind: 'line', text }));

/** The first line of a recorded session whose JSON-RPC id is `id` (an answer of the agent), as the pipeline types it. */
function recordedAnswer(path: string, id: number): Record<string, unknown> {
  const answer = lines(path)
    .map((item) => JSON.parse((item as { text: string }).text) as Record<string, unknown>)
    .find((message) => message['id'] === id && !('method' in message));
  if (answer === undefined) throw new Error(`${path}: no answer ${String(id)}`);
  return answer;
}

async function headerOf(dialect: Dialect, path: string): Promise<CliMessage | undefined> {
  const messages = await lastValueFrom(from<ProcessItem[]>([...lines(path), exit()]).pipe(agentOutputToMessages(dialect), toArray()));
  return messages.find((message) => message.type === 'session.started' || message.type === 'session.resumed');
}

const headers = (reactions: readonly ProtocolReaction[]): CliMessage[] =>
  reactions
    .flatMap((reaction) => reaction.facts ?? [])
    .flatMap((fact: ProtocolFact) => (fact.type === 'content' && (fact.message.type === 'session.started' || fact.message.type === 'session.resumed') ? [fact.message] : []));

describe('agentVersion and model in runs: from the CLI\'s first line where it says them', () => {
  it.each([
    ['Claude Code (system/init claude_code_version, model)', () => AGENTS.claude.dialect(), 'claude/text.jsonl', 'session.started', '2.1.332', 'claude-opus-5-5'],
    ['Claude Code 2.1.197', () => AGENTS.claude.dialect(), 'claude/2.1.197/structured-ok.jsonl', 'session.started', '2.1.197', 'claude-opus-4-8[1m]'],
    ['Claude Code resuming', () => AGENTS.claude.dialect({ resuming: true }), 'claude/resume-2.jsonl', 'session.resumed', '2.1.332', 'claude-opus-5-5'],
    ['Qwen Code (system/init qwen_code_version, model)', () => AGENTS.qwen.dialect(), 'qwen/text-partial.jsonl', 'session.started', '0.24.4', 'text'],
  ])('%s', async (_name, dialect, path, type, version, model) => {
    const header = await headerOf(dialect(), path);
    expect(header).toEqual({ type, sessionId: expect.any(String) as unknown, agentVersion: version, model });
  });

  it('Gemini CLI: the model of its init line, no version', async () => {
    const header = await headerOf(AGENTS.gemini.dialect(), 'gemini/text.jsonl');
    expect(header).toEqual({ type: 'session.started', sessionId: expect.any(String) as unknown, model: 'gemini-2.5-pro' });
  });

  it.each([
    ['pi (its model comes with each message, after the header)', () => AGENTS.pi.dialect(), 'pi/text.jsonl'],
    ['Codex exec (thread.started says the thread only)', () => AGENTS.codex.dialect(), 'codex/text.jsonl'],
  ])('%s: no model', async (_name, dialect, path) => {
    const header = await headerOf(dialect(), path);
    expect(header?.type).toBe('session.started');
    expect(header).not.toHaveProperty('model');
  });

  it.each([
    ['pi (its header says the session file format, not its version)', () => AGENTS.pi.dialect(), 'pi/text.jsonl'],
    ['Codex exec (thread.started says the thread only)', () => AGENTS.codex.dialect(), 'codex/text.jsonl'],
    ['Gemini CLI stream-json (init says the session and the model)', () => AGENTS.gemini.dialect(), 'gemini/text.jsonl'],
  ])('%s: none', async (_name, dialect, path) => {
    const header = await headerOf(dialect(), path);
    expect(header?.type).toBe('session.started');
    expect(header).not.toHaveProperty('agentVersion');
  });

  it('is optional in the message contract, and a string when present', () => {
    expect(SessionStartedSchema.safeParse({ type: 'session.started', sessionId: 'S1' }).success).toBe(true);
    expect(SessionStartedSchema.safeParse({ type: 'session.started', sessionId: 'S1', agentVersion: '2.1.197' }).success).toBe(true);
    expect(SessionStartedSchema.safeParse({ type: 'session.started', sessionId: 'S1', agentVersion: 2 }).success).toBe(false);
  });
});

describe('agentVersion in sessions: from the answers before the first prompt', () => {
  it("Codex app-server: the userAgent of its initialize answer (recorded), with the thread's id", () => {
    const protocol = codexAppServerProtocol({ thread: { start: { cwd: '/w' } } });
    const state = protocol.createState();
    const recorded = recordedAnswer('sessions/codex-app-server.jsonl', 1);
    const reactions = [
      protocol.read(state, { ...recorded, type: 'response', id: 'agent-rx-init' }),
      protocol.read(state, { type: 'response', id: 'agent-rx-thread', result: { thread: { id: 'T1' } } }),
    ];
    expect(headers(reactions)).toEqual([{ type: 'session.started', sessionId: 'T1', agentVersion: '0.171.0' }]);
  });

  it('Codex app-server: a userAgent it cannot read gives no version', () => {
    expect(codexVersion('agent-rx/0.171.0 (Debian 12.0.0; x86_64) unknown (agent-rx; 0.1.0)')).toBe('0.171.0');
    expect(codexVersion('codex_cli_rs/0.200.1-alpha.2 (Mac OS 15.1.0; arm64) iTerm.app/3.5')).toBe('0.200.1-alpha.2');
    expect(codexVersion('something else')).toBeUndefined();
    expect(codexVersion(undefined)).toBeUndefined();
    const protocol = codexAppServerProtocol({ thread: { resume: 'T0' } });
    const state = protocol.createState();
    const reactions = [
      protocol.read(state, { type: 'response', id: 'agent-rx-init', result: {} }),
      protocol.read(state, { type: 'response', id: 'agent-rx-thread', result: { thread: { id: 'T0' } } }),
    ];
    expect(headers(reactions)).toEqual([{ type: 'session.resumed', sessionId: 'T0' }]);
  });

  it('Claude Code: asks get_binary_version before initialize, and announces the session with the version at the initialize answer', () => {
    const protocol = claudeSessionProtocol();
    const state = protocol.createState();
    const outputs = protocol.open(state, { write: () => undefined, react: () => undefined });
    expect(outputs.map((output) => (output.type === 'write' ? (output.line as { request: { subtype: string } }).request.subtype : output.type))).toEqual(['get_binary_version', 'initialize']);
    const reactions = [
      protocol.read(state, { type: 'control_response', response: { subtype: 'success', request_id: 'agent-rx-version', response: { version: '2.1.197', buildTime: '2026-06-29T19:08:42Z' } } }),
      protocol.read(state, { type: 'control_response', response: { subtype: 'success', request_id: 'agent-rx-initialize', response: { commands: [] } } }),
    ];
    expect(reactions[0]).toEqual({});
    expect(headers(reactions)).toEqual([{ type: 'session.started', sessionId: state.sessionId, agentVersion: '2.1.197' }]);
    expect(reactions[1]?.facts?.at(-1)).toEqual({ type: 'opened' });
  });

  it('Claude Code: a CLI that refuses get_binary_version, or answers it late, is announced without a version, and not held', () => {
    const protocol = claudeSessionProtocol({ newSession: false, resume: 'S0' });
    const refused = protocol.createState();
    protocol.read(refused, { type: 'control_response', response: { subtype: 'error', request_id: 'agent-rx-version', error: 'Unsupported control request subtype: get_binary_version' } });
    expect(headers([protocol.read(refused, { type: 'control_response', response: { subtype: 'success', request_id: 'agent-rx-initialize', response: {} } })])).toEqual([
      { type: 'session.resumed', sessionId: 'S0' },
    ]);
    const late = protocol.createState();
    const opened = protocol.read(late, { type: 'control_response', response: { subtype: 'success', request_id: 'agent-rx-initialize', response: {} } });
    expect(headers([opened])).toEqual([{ type: 'session.resumed', sessionId: 'S0' }]);
    expect(opened.facts?.at(-1)).toEqual({ type: 'opened' });
  });

  it("ACP (Gemini CLI, Qwen Code): initialize's agentInfo.version (Gemini CLI's recorded answer), with session/new's id", async () => {
    const recorded = recordedAnswer('sessions/gemini-acp-text.jsonl', 1);
    expect(await acpHeader(recorded['result'])).toEqual({ type: 'session.started', sessionId: 'S1', agentVersion: '0.61.0' });
    expect(await acpHeader({ protocolVersion: 1 })).toEqual({ type: 'session.started', sessionId: 'S1' });
  });
});

/** The session header an ACP client announces when the agent answers `initialize` with `result`. */
async function acpHeader(result: unknown): Promise<CliMessage | undefined> {
  const { protocol, state, reactions, answer } = acpByHand();
  await answer('initialize', result);
  await answer('session/new', { sessionId: 'S1' });
  protocol.close?.(state);
  return headers(reactions)[0];
}
