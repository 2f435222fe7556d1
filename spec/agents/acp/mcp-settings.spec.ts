import { describe, expect, it } from '@jest/globals';
import { allowedMcpServerArgs, settingsMcpServers, withMcpServers } from '../../../lib/agents/acp/mcp-settings.js';
import { geminiAgent } from '../../../lib/agents/gemini/definition.js';
import { geminiToolName, geminiToolNameOfCall } from '../../../lib/agents/gemini/tools.js';
import { qwenAgent } from '../../../lib/agents/qwen/definition.js';
import type { McpServers } from '../../../lib/index.js';
import { processInvocation } from '../../helpers/invocation.js';

const SERVERS: McpServers = {
  notes: { command: 'node', args: ['notes.mjs'], env: { LOG: '/tmp/x' }, trust: true },
  orders: { type: 'http', url: 'http://127.0.0.1:9/mcp', headers: { Authorization: 'Bearer t0k3n' } },
};

describe("MCP servers in Gemini CLI's and Qwen Code's settings", () => {
  it('writes stdio and http servers in settings.json form, trust only without a permission, alwaysLoadTools when asked', () => {
    expect(settingsMcpServers(SERVERS, { permission: false })).toEqual({
      notes: { command: 'node', args: ['notes.mjs'], env: { LOG: '/tmp/x' }, trust: true },
      orders: { httpUrl: 'http://127.0.0.1:9/mcp', headers: { Authorization: 'Bearer t0k3n' } },
    });
    expect(settingsMcpServers(SERVERS, { permission: true, alwaysLoadTools: true })).toEqual({
      notes: { command: 'node', args: ['notes.mjs'], env: { LOG: '/tmp/x' }, alwaysLoadTools: true },
      orders: { httpUrl: 'http://127.0.0.1:9/mcp', headers: { Authorization: 'Bearer t0k3n' }, alwaysLoadTools: true },
    });
  });

  it("replaces the user's servers and drops the allow and exclude lists", () => {
    const user = { mcpServers: { mine: { command: 'x' } }, mcp: { allowed: ['mine'], excluded: ['notes'], serverCommand: 'y' }, other: 1 };
    expect(withMcpServers(user, { notes: { command: 'node' } })).toEqual({ mcpServers: { notes: { command: 'node' } }, mcp: { serverCommand: 'y' }, other: 1 });
    expect(allowedMcpServerArgs(SERVERS)).toEqual(['--allowed-mcp-server-names=notes', '--allowed-mcp-server-names=orders']);
  });

  it('a Gemini CLI run puts them in its overlay (never a header in argv); the allow flag only when every server is trusted', () => {
    const run = processInvocation(geminiAgent, { prompt: 'p', mcpServers: SERVERS });
    expect(run.args.join(' ')).not.toContain('t0k3n');
    expect(run.args.some((arg) => arg.startsWith('--allowed-mcp-server-names'))).toBe(false);
    expect(run.setup).toMatchObject({ mcpServers: settingsMcpServers(SERVERS, { permission: false }) });
    const trusted = processInvocation(geminiAgent, { prompt: 'p', mcpServers: { notes: { command: 'node', trust: true } } });
    expect(trusted.args).toContain('--allowed-mcp-server-names=notes');
    expect(geminiAgent.mcp).toEqual({ runs: true, sessions: true });
  });

  it('a Qwen Code run puts them in its overlay with alwaysLoadTools, names them in --allowed-mcp-server-names and waits for them', () => {
    const run = processInvocation(qwenAgent, { prompt: 'p', mcpServers: SERVERS });
    expect(run.args.join(' ')).not.toContain('t0k3n');
    expect(run.args).toEqual(expect.arrayContaining(['--allowed-mcp-server-names=notes', '--allowed-mcp-server-names=orders']));
    expect(run.setup).toMatchObject({ mcpServers: settingsMcpServers(SERVERS, { permission: false, alwaysLoadTools: true }) });
    expect(run.processOptions.env).toMatchObject({ QWEN_CODE_LEGACY_MCP_BLOCKING: '1' });
    const session = qwenAgent.session({ mcpServers: SERVERS, permission: 'deny-all' });
    expect(session.setup).toMatchObject({ mcpServers: settingsMcpServers(SERVERS, { permission: true, alwaysLoadTools: true }) });
    expect(qwenAgent.mcp).toEqual({ runs: true, sessions: true });
  });

  it("Gemini CLI's MCP tool names become mcp__<server>__<tool>, from a name or a call's id", () => {
    expect(geminiToolName('mcp_host_lookup')).toBe('mcp__host__lookup');
    expect(geminiToolName('mcp_my_db_query', ['my_db'])).toBe('mcp__my_db__query');
    expect(geminiToolName('run_shell_command')).toBe('run_shell_command');
    expect(geminiToolNameOfCall('mcp_host_lookup_order__mcp_host_lookup_order_1796328959513_0', ['host'])).toBe('mcp__host__lookup_order');
    expect(geminiToolNameOfCall('run_shell_command__run_shell_command_1796016401103_0')).toBe('run_shell_command');
    expect(geminiToolNameOfCall('0c1d-uuid')).toBeUndefined();
  });
});
