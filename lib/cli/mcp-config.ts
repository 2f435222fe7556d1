// `--mcp-config <file.json>`: MCP servers for the agent, in the form Claude Code reads
// (`{ "mcpServers": { "<name>": { … } } }`), given as the run's or session's `mcpServers`.
import { readFileSync } from 'node:fs';
import { describeIssue } from '../agents/shared/option-schemas.js';
import { MCP_SERVER_NAME, McpServersSchema, type McpServers } from '../tools/mcp-servers.js';

/** What `--mcp-config` says in a help text (its description column is the 27th). */
export const MCP_CONFIG_HELP = `  --mcp-config <file.json>
                          MCP servers for the agent, as Claude Code's file gives them:
                          { "mcpServers": { "<name>": { "command", "args", "env" } or
                          { "type": "http", "url", "headers" } } }; "trust": true lets the
                          agent use a server's tools without asking (when --approve is not
                          given). Their tools are named mcp__<name>__<tool>
`;

/** The servers of an `--mcp-config` file, or what is wrong with it (in the flag's words). */
export function readMcpConfig(path: string, read: (path: string) => string = (file) => readFileSync(file, 'utf8')): McpServers | string {
  const flag = `--mcp-config ${path}`;
  let text: string;
  try {
    text = read(path);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return `${flag} cannot be read${typeof code === 'string' ? ` (${code})` : ''}`;
  }
  let config: unknown;
  try {
    config = JSON.parse(text);
  } catch (error) {
    return `${flag} is not JSON: ${error instanceof Error ? error.message : String(error)}`;
  }
  const servers = typeof config === 'object' && config !== null && !Array.isArray(config) ? (config as { readonly mcpServers?: unknown }).mcpServers : undefined;
  if (typeof servers !== 'object' || servers === null || Array.isArray(servers)) return `${flag} must hold { "mcpServers": { "<name>": { "command": … } } }`;
  for (const [name, server] of Object.entries(servers)) {
    if (!MCP_SERVER_NAME.test(name)) return `${flag}: the name ${JSON.stringify(name)} must start with a letter and hold only letters, digits, _ and - (at most 32)`;
    const type = (server as { readonly type?: unknown } | null)?.type;
    if (type === 'sse') return `${flag}: mcpServers.${name} is an SSE server, which is not supported: give it as { "type": "http", "url" } (streamable HTTP) or as a stdio server`;
  }
  const parsed = McpServersSchema.safeParse(servers, { reportInput: true });
  if (!parsed.success) return `${flag}: mcpServers${pathOf(parsed.error.issues[0]?.path)} ${describeIssue({ ...parsed.error.issues[0], path: [] } as never)}`;
  return servers as McpServers;
}

function pathOf(path: readonly PropertyKey[] | undefined): string {
  return path === undefined || path.length === 0 ? '' : `.${path.map(String).join('.')}`;
}
