import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AGENT_NAMES, agentByName } from '../../lib/agent-table.js';
import { CHAT_USAGE, parseChatArgs } from '../../lib/cli/chat-command.js';
import { ACP_USAGE, parseAcpArgs } from '../../lib/cli/acp-command.js';
import { readMcpConfig } from '../../lib/cli/mcp-config.js';
import { parseRunArgs, RUN_USAGE } from '../../lib/cli/run-command.js';

// `--mcp-config <file.json>` of run, chat and acp: Claude Code's file form, read and checked, given
// to the agent as `mcpServers`.

const folder = mkdtempSync(join(tmpdir(), 'agent-rx-mcp-config-'));
afterAll(() => {
  rmSync(folder, { recursive: true, force: true });
});

function file(name: string, content: unknown): string {
  const path = join(folder, name);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

const SERVERS = {
  files: { type: 'stdio', command: 'files-mcp', args: ['--root', '/srv'], env: { ROOT: '/srv' }, trust: true },
  docs: { type: 'http', url: 'http://127.0.0.1:8931/mcp', headers: { Authorization: 'Bearer t' } },
};
const CONFIG = file('mcp.json', { mcpServers: SERVERS });

describe('--mcp-config', () => {
  it("reads Claude Code's form: { mcpServers: { name: config } }", () => {
    expect(readMcpConfig(CONFIG)).toEqual(SERVERS);
    expect(readMcpConfig(file('empty.json', { mcpServers: {} }))).toEqual({});
  });

  it.each<[string, string, string | RegExp]>([
    ['a file that is not there', join(folder, 'missing.json'), `--mcp-config ${join(folder, 'missing.json')} cannot be read (ENOENT)`],
    ['a file that is not JSON', file('bad.json', '{ mcpServers'), /is not JSON: /],
    ['no mcpServers', file('none.json', { servers: {} }), /must hold \{ "mcpServers": \{ "<name>": \{ "command": … \} \} \}$/],
    ['an SSE server', file('sse.json', { mcpServers: { old: { type: 'sse', url: 'http://127.0.0.1:1/sse' } } }), /mcpServers\.old is an SSE server, which is not supported/],
    ['a server without a command', file('nocommand.json', { mcpServers: { x: { args: [] } } }), /--mcp-config .*: mcpServers\.x must be \{ command, args\?, env\? \} \(stdio\) or/],
    ['a bad name', file('name.json', { mcpServers: { 'a b': { command: 'x' } } }), /the name "a b" must start with a letter/],
  ])('refuses %s, saying what is wrong', (_name, path, message) => {
    const read = readMcpConfig(path);
    expect(typeof read).toBe('string');
    expect(read).toMatch(message);
  });

  it('is in the help of run, chat and acp', () => {
    for (const usage of [RUN_USAGE, CHAT_USAGE, ACP_USAGE]) expect(usage).toContain('--mcp-config <file.json>');
  });

  it.each(AGENT_NAMES)("gives %s's runs the servers as mcpServers where they take them (else the agent's refusal, a usage error)", (agent) => {
    const request = parseRunArgs(['--agent', agent, '--mcp-config', CONFIG, 'hello']);
    if (agentByName(agent).mcp?.runs === true) expect(request.kind).toBe('run');
    else expect(request).toEqual({ kind: 'usage-error', message: `${agentByName(agent).displayName} runs cannot take MCP servers (mcpServers)` });
  });

  it.each(AGENT_NAMES)("gives %s's chat sessions the servers as mcpServers where they take them (else the agent's refusal, a usage error)", (agent) => {
    const request = parseChatArgs(['--agent', agent, '--mcp-config', CONFIG]);
    if (agentByName(agent).mcp?.sessions === true) expect(request).toMatchObject({ kind: 'chat', options: { mcpServers: SERVERS } });
    else expect(request).toEqual({ kind: 'usage-error', message: `${agentByName(agent).displayName} sessions cannot take MCP servers (mcpServers)` });
  });

  it("acp: the file's servers and the editor's both reach the session (the editor's win a name they share)", () => {
    const agent = AGENT_NAMES.find((name) => agentByName(name).mcp?.sessions === true);
    if (agent === undefined) return;
    const request = parseAcpArgs(['--agent', agent, '--mcp-config', CONFIG]);
    if (request.kind !== 'acp') throw new Error(`not served: ${JSON.stringify(request)}`);
    const editors = { docs: { command: 'docs-mcp' } };
    expect(request.optionsFor({ cwd: '/srv', mcpServers: editors, acpMcpServers: [], skippedMcpServers: [], permission: 'ask' })['mcpServers']).toEqual({ files: SERVERS.files, docs: editors.docs });
    expect(request.optionsFor({ cwd: '/srv', mcpServers: {}, acpMcpServers: [], skippedMcpServers: [], permission: 'ask' })['mcpServers']).toEqual(SERVERS);
  });

  it('is refused with --fleet (the worker has the servers: --mcp-server names them), and not read for a replay', () => {
    expect(parseRunArgs(['--fleet', 'redis://127.0.0.1:6379', '--mcp-config', CONFIG, 'hi'])).toEqual({
      kind: 'usage-error',
      message: "--mcp-config cannot be given with --fleet: a fleet run's MCP servers are the worker's (serveRuns({ mcpServers }))",
    });
    // With --fleet, the run names the worker's servers (--mcp-server); without, that flag is refused.
    const fleet = parseRunArgs(['--fleet', 'redis://127.0.0.1:6379', '--mcp-server', 'docs', '--mcp-server', 'wiki', 'hi']);
    expect(fleet).toMatchObject({ kind: 'run', spec: { agent: 'pi', options: { prompt: 'hi', mcpServers: ['docs', 'wiki'] } } });
    if (fleet.kind === 'run') void fleet.stop?.();
    expect(parseRunArgs(['--fleet', 'redis://127.0.0.1:6379', '--mcp-server', 'a b', 'hi'])).toMatchObject({ kind: 'usage-error', message: expect.stringMatching(/options\.mcpServers\.0 names must start with a letter/) });
    expect(parseRunArgs(['--mcp-server', 'docs', 'hi'])).toEqual({ kind: 'usage-error', message: "--mcp-server names a fleet worker's MCP server: it needs --fleet (here, give servers with --mcp-config)" });
    const recording = file('replay.jsonl', '');
    expect(parseRunArgs(['--replay', recording, '--mcp-config', join(folder, 'missing.json')]).kind).toBe('run');
  });
});
