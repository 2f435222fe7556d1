// MCP servers in the settings.json form Gemini CLI and Qwen Code share (Qwen Code is a fork of
// Gemini CLI): `mcpServers` by name, and the flags that keep every other server out.
import type { McpServers } from '../../tools/mcp-servers.js';

/** How the servers are written. */
export interface McpSettingsOptions {
  /** The run or session has a `permission` policy: no server is trusted (every call goes through it). */
  readonly permission: boolean;
  /** Qwen Code's `alwaysLoadTools: true`: the tools are declared to the model, not hidden behind its tool search. */
  readonly alwaysLoadTools?: boolean;
}

/**
 * `servers` as settings.json's `mcpServers`: stdio `{ command, args, env }`, http `{ httpUrl,
 * headers }`; `trust: true` (no confirmation of its tools) for a trusted server when there is no
 * `permission`.
 */
export function settingsMcpServers(servers: McpServers, options: McpSettingsOptions): Record<string, Record<string, unknown>> {
  return Object.fromEntries(
    Object.entries(servers).map(([name, server]) => {
      const common = {
        ...(server.trust === true && !options.permission ? { trust: true } : {}),
        ...(options.alwaysLoadTools === true ? { alwaysLoadTools: true } : {}),
      };
      const entry =
        server.type === 'http'
          ? { httpUrl: server.url, ...(server.headers === undefined ? {} : { headers: { ...server.headers } }), ...common }
          : { command: server.command, ...(server.args === undefined ? {} : { args: [...server.args] }), ...(server.env === undefined ? {} : { env: { ...server.env } }), ...common };
      return [name, entry];
    }),
  );
}

/**
 * The user's settings with `mcpServers` replaced by `servers` (the user's own left out), and no
 * allow or exclude list of `mcp`'s that could leave these out (Gemini CLI allows the tools of an
 * allowed server without asking: no list is written).
 */
export function withMcpServers(settings: Record<string, unknown>, servers: Record<string, Record<string, unknown>>): Record<string, unknown> {
  const own = settings['mcp'];
  const { allowed: _allowed, excluded: _excluded, ...mcp } = typeof own === 'object' && own !== null && !Array.isArray(own) ? (own as Record<string, unknown>) : {};
  return { ...settings, mcpServers: servers, mcp };
}

/**
 * `--allowed-mcp-server-names` once per server: both CLIs then connect to these servers alone
 * (the user's settings, a workspace's and an extension's servers are left out), whatever the
 * settings' own allow and exclude lists say. None for no server. Gemini CLI also allows every tool
 * of an allowed server without asking, as if it were trusted.
 */
export function allowedMcpServerArgs(servers: McpServers | undefined): readonly string[] {
  return Object.keys(servers ?? {}).map((name) => `--allowed-mcp-server-names=${name}`);
}
