import { join } from 'node:path';
import type { RunOverlay } from '../../definition.js';
import { fileFolder } from '../../shared/setup/file-folder.js';
import type { McpServers } from '../../../tools/mcp-servers.js';

/** The file's name inside the overlay folder. */
export const MCP_CONFIG_FILE = 'mcp.json';

/**
 * Claude Code's form of the servers (`--mcp-config`'s file): `{ mcpServers: { name: { type: 'stdio',
 * command, args, env } | { type: 'http', url, headers } } }`. `trust` has no place there: it is
 * carried as an `--allowedTools` rule (`mcp__<name>`).
 */
export function claudeMcpConfig(servers: McpServers): { readonly mcpServers: Readonly<Record<string, unknown>> } {
  const entries = Object.entries(servers).map(([name, server]) => [
    name,
    server.type === 'http'
      ? { type: 'http', url: server.url, ...(server.headers === undefined ? {} : { headers: { ...server.headers } }) }
      : { type: 'stdio', command: server.command, args: [...(server.args ?? [])], ...(server.env === undefined ? {} : { env: { ...server.env } }) },
  ]);
  return { mcpServers: Object.fromEntries(entries) as Readonly<Record<string, unknown>> };
}

/**
 * The overlay a Claude Code run or session with `mcpServers` gets: a folder of its own in the host's
 * temporary folder (mode 0700) holding `mcp.json` (mode 0600: it may hold a server's token, which
 * is never in the arguments), named by `--mcp-config` and made the only servers by
 * `--strict-mcp-config` (the user's own servers, from `~/.claude.json` or the project's `.mcp.json`,
 * are left out); removed once the run's processes are gone.
 */
export function claudeMcpOverlay(servers: McpServers): RunOverlay {
  return {
    create: (_env, parent) => fileFolder(parent, 'agent-rx-claude-mcp-', MCP_CONFIG_FILE, `${JSON.stringify(claudeMcpConfig(servers))}\n`),
    args: (dir) => ['--mcp-config', join(dir, MCP_CONFIG_FILE), '--strict-mcp-config'],
    what: "Claude Code's MCP config file",
  };
}
