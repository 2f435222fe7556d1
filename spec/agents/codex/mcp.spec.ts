import { describe, expect, it } from '@jest/globals';
import { codexApproval } from '../../../lib/agents/codex/app-server/approvals.js';
import { codexRunInvocation, codexSessionInvocation } from '../../../lib/agents/codex/args.js';
import { codexMcpConfig } from '../../../lib/agents/codex/mcp.js';
import type { McpServers } from '../../../lib/tools/mcp-servers.js';

const SERVERS: McpServers = {
  notes: { command: 'node', args: ['notes.mjs'], env: { NOTES: '/tmp/n' } },
  host: { type: 'http', url: 'http://127.0.0.1:4000/mcp', headers: { Authorization: 'Bearer secret-token' }, trust: true },
};

describe('Codex MCP servers as mcp_servers settings', () => {
  it('a stdio server as command, args and env; an http one as url and env_http_headers, the value in the environment', () => {
    const config = codexMcpConfig(SERVERS, false);
    expect(config.args).toEqual([
      '-c', 'mcp_servers.notes.command="node"',
      '-c', 'mcp_servers.notes.args=["notes.mjs"]',
      '-c', 'mcp_servers.notes.env={NOTES = "/tmp/n"}',
      '-c', 'mcp_servers.host.url="http://127.0.0.1:4000/mcp"',
      '-c', 'mcp_servers.host.env_http_headers={Authorization = "AGENT_RX_CODEX_MCP_1_0"}',
      '-c', 'mcp_servers.host.default_tools_approval_mode="approve"',
    ]);
    expect(config.env).toEqual({ AGENT_RX_CODEX_MCP_1_0: 'Bearer secret-token' });
  });

  it('with permission, every server asks (prompt), trusted or not', () => {
    const args = codexMcpConfig(SERVERS, true).args;
    expect(args.filter((arg) => arg.includes('default_tools_approval_mode'))).toEqual([
      'mcp_servers.notes.default_tools_approval_mode="prompt"',
      'mcp_servers.host.default_tools_approval_mode="prompt"',
    ]);
  });

  it('runs and sessions carry them; the token is in the environment, never in the arguments', () => {
    const run = codexRunInvocation({ prompt: 'p', mcpServers: SERVERS, env: { A: '1' } }, { content: [{ type: 'text', text: 'p' }] });
    if (!('args' in run)) throw new Error('an exec run expected');
    expect(run.args).toContain('mcp_servers.host.url="http://127.0.0.1:4000/mcp"');
    expect(run.args.join(' ')).not.toContain('secret-token');
    expect(run.processOptions.env).toEqual({ A: '1', AGENT_RX_CODEX_MCP_1_0: 'Bearer secret-token' });
    const session = codexSessionInvocation({ mcpServers: SERVERS, permission: 'deny-all' });
    expect(session.args).toContain('mcp_servers.host.default_tools_approval_mode="prompt"');
    expect(session.args.join(' ')).not.toContain('secret-token');
    expect(session.processOptions.env).toEqual({ AGENT_RX_CODEX_MCP_1_0: 'Bearer secret-token' });
  });
});

describe("codexApproval: Codex's MCP tool approval (mcpServer/elicitation/request)", () => {
  const params = {
    threadId: 't',
    turnId: 'u',
    serverName: 'host',
    mode: 'form',
    _meta: { codex_approval_kind: 'mcp_tool_call', tool_name: 'lookup', tool_params: { key: 'k2' } },
    message: 'Allow the host MCP server to run tool "lookup"?',
    requestedSchema: { type: 'object', properties: {} },
  };

  it('asks as mcp__<server>__<tool> with the call arguments; allow accepts, a deny declines', () => {
    const approval = codexApproval('mcpServer/elicitation/request', params, new Map());
    expect(approval?.request).toEqual({ tool: 'mcp__host__lookup', kind: 'other', title: params.message, input: { key: 'k2' }, options: ['allow', 'deny'] });
    expect(approval?.result('allow')).toEqual({ action: 'accept', content: {}, _meta: null });
    expect(approval?.result('deny')).toEqual({ action: 'decline', content: null, _meta: null });
  });

  it("a server's own elicitation is no approval", () => {
    expect(codexApproval('mcpServer/elicitation/request', { ...params, _meta: null }, new Map())).toBeUndefined();
  });
});
