import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync, statSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as z from 'zod';
import { claudeAgent } from '../../../lib/agents/claude/definition.js';
import type { ProcessRunInvocation } from '../../../lib/agents/definition.js';
import type { ClaudeSetup } from '../../../lib/agents/claude/args.js';
import { sessionInvocation } from '../../../lib/sessions/agent-session.js';
import { runInvocation } from '../../../lib/sources/run-agent.js';
import { tool, type McpServers } from '../../../lib/index.js';

const SERVERS: McpServers = {
  notes: { command: 'node', args: ['notes.mjs'], env: { NOTES: '1' }, trust: true },
  orders: { type: 'http', url: 'http://127.0.0.1:8931/mcp', headers: { Authorization: 'Bearer secret-token-1' } },
};

/** The overlay `setup` makes, in a folder of the test's: its arguments, the file's mode and text. */
function made(setup: ClaudeSetup | undefined): { readonly args: readonly string[]; readonly mode: number; readonly dirMode: number; readonly config: unknown; readonly removed: boolean } {
  const overlay = setup === undefined ? undefined : claudeAgent.setup?.overlay?.(setup);
  if (overlay === undefined) throw new Error('no overlay');
  const parent = mkdtempSync(join(tmpdir(), 'agent-rx-claude-mcp-spec-'));
  try {
    const created = overlay.create({}, parent);
    const dir = created.dir;
    const file = join(dir, 'mcp.json');
    const result = { args: overlay.args?.(dir) ?? [], mode: statSync(file).mode & 0o777, dirMode: statSync(dir).mode & 0o777, config: JSON.parse(readFileSync(file, 'utf8')) as unknown };
    expect(result.args).toEqual(['--mcp-config', file, '--strict-mcp-config']);
    created.remove();
    return { ...result, removed: !existsSync(dir) };
  } finally {
    rmSync(parent, { recursive: true, force: true });
  }
}

describe('Claude Code with mcpServers', () => {
  it('a run: the servers go in a 0600 mcp.json of its own (--mcp-config, --strict-mcp-config), the prompt on stdin; a trusted server is allowed', () => {
    const invocation = runInvocation(claudeAgent, { prompt: '-starts with a dash', mcpServers: SERVERS, allowedTools: ['Read'] }) as ProcessRunInvocation<ClaudeSetup>;
    expect(invocation.args).toEqual(['-p', '--output-format', 'stream-json', '--verbose', '--include-partial-messages', '--allowedTools=Read,mcp__notes']);
    expect(invocation.processOptions.stdin).toBe('-starts with a dash');
    expect(JSON.stringify(invocation.args)).not.toContain('secret-token-1');
    const overlay = made(invocation.setup);
    expect(overlay.mode).toBe(0o600);
    expect(overlay.dirMode).toBe(0o700);
    expect(overlay.removed).toBe(true);
    expect(overlay.config).toEqual({
      mcpServers: {
        notes: { type: 'stdio', command: 'node', args: ['notes.mjs'], env: { NOTES: '1' } },
        orders: { type: 'http', url: 'http://127.0.0.1:8931/mcp', headers: { Authorization: 'Bearer secret-token-1' } },
      },
    });
  });

  it('a run without mcpServers keeps its prompt after --, with no setup', () => {
    const invocation = runInvocation(claudeAgent, { prompt: 'p', tools: [] }) as ProcessRunInvocation<ClaudeSetup>;
    expect(invocation.args.slice(-2)).toEqual(['--', 'p']);
    expect(invocation.setup).toBeUndefined();
    expect(invocation.processOptions).not.toHaveProperty('tools');
  });

  it('host tools: their server is one more (host, trusted without a permission), its token only in the file', () => {
    const lookup = tool({ name: 'lookup', description: 'Looks up', input: z.object({ id: z.string() }), run: ({ id }) => id });
    const invocation = runInvocation(claudeAgent, { prompt: 'p', tools: [lookup] }) as ProcessRunInvocation<ClaudeSetup>;
    expect(invocation.args).toContain('--allowedTools=mcp__host');
    expect(JSON.stringify(invocation.args)).not.toContain('Bearer');
    expect(made(invocation.setup).config).toMatchObject({ mcpServers: { host: { type: 'http', headers: { Authorization: expect.stringMatching(/^Bearer /) as unknown } } } });
  });

  it('a session: the same file; with a permission no server is allowed in advance (every call asks, as mcp__<server>__<tool>)', () => {
    const trusting = sessionInvocation(claudeAgent, { mcpServers: SERVERS });
    expect(trusting.args).toContain('--allowedTools=mcp__notes');
    expect(made(trusting.setup).config).toMatchObject({ mcpServers: { notes: { command: 'node' } } });
    const asking = sessionInvocation(claudeAgent, { mcpServers: SERVERS, permission: 'allow-reads' });
    expect(asking.args.some((arg) => arg.startsWith('--allowedTools'))).toBe(false);
    expect(asking.args).toContain('--permission-prompt-tool');
    expect(asking.setup).toEqual({ mcpServers: SERVERS });
  });

  it('a run with a permission is a one-prompt session that keeps the servers', () => {
    expect(runInvocation(claudeAgent, { prompt: 'p', permission: 'deny-all', mcpServers: SERVERS })).toEqual({
      asSession: { options: { permission: 'deny-all', mcpServers: SERVERS }, prompt: { content: [{ type: 'text', text: 'p' }] } },
    });
  });
});
