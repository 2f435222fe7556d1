import type { McpServers } from '../../tools/mcp-servers.js';
import { configFlag } from './toml.js';

/** The variable that carries the value of header `header` of the `server`-th MCP server: `AGENT_RX_CODEX_MCP_<server>_<header>`. */
export function mcpHeaderVariable(server: number, header: number): string {
  return `AGENT_RX_CODEX_MCP_${String(server)}_${String(header)}`;
}

/** How a run's or session's MCP servers reach Codex: `-c` settings, and the variables they name. */
export interface CodexMcpConfig {
  /** `-c mcp_servers.<name>.<key>=<value>` arguments; no header value among them. */
  readonly args: readonly string[];
  /** Variables added to Codex's environment: the header values (`env_http_headers` names them). */
  readonly env: Readonly<Record<string, string>>;
}

/**
 * `servers` as Codex's configuration (`mcp_servers.<name>` in config.toml), set with `-c`:
 * `command`, `args`, `env` for a stdio server; `url` and `env_http_headers` for an HTTP one, each
 * header's value in a variable of Codex's environment (never in its arguments, which any process
 * may read). `ask`: every tool call asks first (`default_tools_approval_mode = "prompt"`, the
 * session answers through its permission channel); else a `trust`ed server's calls are approved
 * without asking (`"approve"`), and the others' as Codex's configuration says.
 */
export function codexMcpConfig(servers: McpServers | undefined, ask: boolean): CodexMcpConfig {
  const args: string[] = [];
  const env: Record<string, string> = {};
  for (const [index, [name, server]] of Object.entries(servers ?? {}).entries()) {
    const key = `mcp_servers.${name}`;
    if (server.type === 'http') {
      args.push(...configFlag(`${key}.url`, server.url));
      const headers = Object.entries(server.headers ?? {});
      if (headers.length > 0) {
        const named: Record<string, string> = {};
        for (const [i, [header, value]] of headers.entries()) {
          const variable = mcpHeaderVariable(index, i);
          named[header] = variable;
          env[variable] = value;
        }
        args.push(...configFlag(`${key}.env_http_headers`, named));
      }
    } else {
      args.push(...configFlag(`${key}.command`, server.command));
      if (server.args !== undefined) args.push(...configFlag(`${key}.args`, server.args));
      if (server.env !== undefined && Object.keys(server.env).length > 0) args.push(...configFlag(`${key}.env`, server.env));
    }
    const mode = ask ? 'prompt' : server.trust === true ? 'approve' : undefined;
    if (mode !== undefined) args.push(...configFlag(`${key}.default_tools_approval_mode`, mode));
  }
  return { args, env };
}
