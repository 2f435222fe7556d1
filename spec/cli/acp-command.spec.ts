import { describe, expect, it, jest } from '@jest/globals';
import { AGENT_NAMES, agentByName } from '../../lib/agent-table.js';
import { ACP_USAGE, parseAcpArgs } from '../../lib/cli/acp-command.js';
import { sessionInvocation } from '../../lib/sessions/agent-session.js';

// `agent-rx acp`'s arguments; the command itself is driven over stdio in spec/conformance/acp-bridge.spec.ts.

describe('agent-rx acp: arguments', () => {
  it('serves pi by default, and any agent of the table by --agent, with its options', () => {
    expect(parseAcpArgs([])).toMatchObject({ kind: 'acp', agent: 'pi', options: {} });
    expect(parseAcpArgs(['--agent', 'claude', '--allowed-tools', 'Bash,Read', '--grace', '500ms'])).toMatchObject({
      kind: 'acp',
      agent: 'claude',
      options: { allowedTools: ['Bash', 'Read'], gracePeriodMs: 500 },
    });
    expect(parseAcpArgs(['--agent', 'gemini', '--approval-mode', 'yolo'])).toMatchObject({ kind: 'acp', agent: 'gemini', options: { approvalMode: 'yolo' } });
  });

  it('forwards permission requests to the editor by default (permission ask), where the agent\'s sessions take a policy; --approve sets a preset instead', () => {
    for (const agent of ['pi', 'claude', 'gemini', 'qwen']) {
      expect(parseAcpArgs(['--agent', agent])).toMatchObject({ kind: 'acp', agent, options: { permission: 'ask' } });
      expect(parseAcpArgs(['--agent', agent, '--approve', 'ask'])).toMatchObject({ kind: 'acp', agent, options: { permission: 'ask' } });
    }
    expect(parseAcpArgs(['--approve', 'all'])).toMatchObject({ kind: 'acp', options: { permission: 'allow-all' } });
    expect(parseAcpArgs(['--agent', 'claude', '--approve', 'reads'])).toMatchObject({ kind: 'acp', options: { permission: 'allow-reads' } });
    expect(parseAcpArgs(['--agent', 'gemini', '--approve', 'none'])).toMatchObject({ kind: 'acp', options: { permission: 'deny-all' } });
    expect(ACP_USAGE).toContain('--approve <all|reads|none|ask>');
  });

  it('forwards Codex\'s approval requests too: its sessions take a policy', () => {
    expect(parseAcpArgs(['--agent', 'codex'])).toMatchObject({ kind: 'acp', agent: 'codex', options: { permission: 'ask' } });
    expect(parseAcpArgs(['--agent', 'codex', '--approve', 'all'])).toMatchObject({ kind: 'acp', agent: 'codex', options: { permission: 'allow-all' } });
  });

  it.each<[string, readonly string[], string]>([
    ['an unknown --approve', ['--approve', 'maybe'], '--approve must be one of all, reads, none, ask; got maybe'],
    ['an unknown agent', ['--agent', 'gpt'], `--agent must be one of ${AGENT_NAMES.join(', ')}; got gpt`],
    ['a flag of another agent', ['--agent', 'pi', '--allowed-tools', 'Bash'], '--allowed-tools is not an option of pi'],
    ['a bad duration', ['--grace', '-5'], "--grace must be a duration such as 5000 (ms), 90s, 10m or 2h; got '-5'"],
    ['an invalid option of the agent', ['--agent', 'gemini', '--approval-mode', 'reckless'], '--approval-mode must be one of'],
    ['a positional argument', ['hello'], 'unexpected argument hello: this command takes options only'],
  ])('reports %s as a usage error', (_name, argv, message) => {
    const request = parseAcpArgs(argv);
    expect(request.kind).toBe('usage-error');
    expect(request.kind === 'usage-error' ? request.message : '').toContain(message);
  });

  it("gives the session's refusal as its message, without the library's own 'agent-rx: ' (the command's line names it)", () => {
    expect(parseAcpArgs(['--model', ''])).toEqual({ kind: 'usage-error', message: 'model must be a non-empty string; got ""' });
  });

  it.each(AGENT_NAMES)("tells the editor %s's sessions take images exactly where its session protocol says so (prompts.image)", (agent) => {
    const request = parseAcpArgs(['--agent', agent]);
    if (request.kind !== 'acp') throw new Error(`not served: ${JSON.stringify(request)}`);
    const protocol = sessionInvocation(agentByName(agent), { ...request.options, cwd: process.cwd() }).protocol;
    expect(request.images).toBe(protocol.prompts?.image === true);
  });

  it.each(AGENT_NAMES)("gives %s's sessions the editor's MCP servers where they take them (and says mcpCapabilities.http); else leaves them out, saying so on stderr", (agent) => {
    const request = parseAcpArgs(['--agent', agent]);
    if (request.kind !== 'acp') throw new Error(`not served: ${JSON.stringify(request)}`);
    const takes = agentByName(agent).mcp?.sessions === true;
    expect(request.mcpHttp).toBe(takes);
    const servers = { files: { command: 'files-mcp', args: ['--root', '/srv'] } };
    const written: string[] = [];
    const write = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    try {
      const options = request.optionsFor({ cwd: '/srv', mcpServers: servers, acpMcpServers: [], skippedMcpServers: ['old'], permission: 'ask' });
      expect(options['cwd']).toBe('/srv');
      if (takes) expect(options['mcpServers']).toEqual(servers);
      else expect(options).not.toHaveProperty('mcpServers');
      const none = request.optionsFor({ cwd: '/srv', mcpServers: {}, acpMcpServers: [], skippedMcpServers: [], permission: 'ask' });
      expect(none).not.toHaveProperty('mcpServers');
    } finally {
      write.mockRestore();
    }
    expect(written).toContain("agent-rx acp: the editor's MCP servers over SSE are not supported: left out: old\n");
    expect(written.some((line) => line.includes('take no MCP servers here'))).toBe(!takes);
  });

  it('answers --help with the usage, which names the extension methods', () => {
    expect(parseAcpArgs(['--help'])).toEqual({ kind: 'help' });
    expect(ACP_USAGE).toContain('_agent-rx/steer and _agent-rx/follow-up');
    expect(ACP_USAGE).toContain('embedded\nresources, given to the agent as <file path="…"> text');
  });
});
