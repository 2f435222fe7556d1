// MCP servers for a run or a session, said once for every agent and carried to each agent its own
// way (a config file, `-c` overrides, settings, ACP's `session/new`, an extension).
import type * as acp from '@agentclientprotocol/sdk';
import * as z from 'zod';

/** An MCP server the agent starts itself and talks to over its stdin and stdout. */
export interface McpStdioServer {
  readonly type?: 'stdio';
  /** The program. */
  readonly command: string;
  /** Its arguments. */
  readonly args?: readonly string[];
  /** Variables added to its environment. */
  readonly env?: Readonly<Record<string, string>>;
  /** The agent may call this server's tools without asking, when the run or session has no `permission` (see {@link McpServerConfig}). */
  readonly trust?: boolean;
}

/** An MCP server the agent reaches over HTTP (streamable HTTP). */
export interface McpHttpServer {
  readonly type: 'http';
  /** Its endpoint, e.g. `http://127.0.0.1:8931/mcp`. */
  readonly url: string;
  /** Headers sent with every request (an `Authorization` header, say). */
  readonly headers?: Readonly<Record<string, string>>;
  /** The agent may call this server's tools without asking, when the run or session has no `permission` (see {@link McpServerConfig}). */
  readonly trust?: boolean;
}

/**
 * One MCP server of a run or session: started by the agent (`stdio`, the default type) or reached
 * over HTTP. `trust: true` lets the agent call its tools without asking when the run or session has
 * no `permission` (each agent's own rules apply otherwise); with a `permission` policy, every call
 * of every server goes through it.
 */
export type McpServerConfig = McpStdioServer | McpHttpServer;

/** MCP servers by name (`{ orders: { command: 'node', args: ['orders-mcp.js'] } }`): the names the agent gives their tools (`mcp__orders__lookup`). */
export type McpServers = Readonly<Record<string, McpServerConfig>>;

/** The name of the server that carries a run's host tools (`tool(...)`): their calls are named `mcp__host__<name>`. */
export const HOST_TOOLS_SERVER = 'host';

/** What a server's name may be: every agent takes it in its tools' names. */
export const MCP_SERVER_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,31}$/;

const stringRecord = (what: string) => z.record(z.string(), z.string({ error: `${what} must be strings` }), { error: `must be an object of strings` });

const StdioServerSchema = z.strictObject({
  type: z.literal('stdio').optional(),
  command: z.string({ error: 'must be a non-empty string' }).min(1, { error: 'must be a non-empty string' }),
  args: z.array(z.string(), { error: 'must be an array of strings' }).optional(),
  env: stringRecord('its values').optional(),
  trust: z.boolean({ error: 'must be a boolean' }).optional(),
});

const HttpServerSchema = z.strictObject({
  type: z.literal('http'),
  url: z.url({ protocol: /^https?$/, error: 'must be an http or https URL' }),
  headers: stringRecord('header values').optional(),
  trust: z.boolean({ error: 'must be a boolean' }).optional(),
});

/** The schema of `mcpServers`: servers by name, each stdio or http. */
export const McpServersSchema = z
  .record(
    z.string().regex(MCP_SERVER_NAME, { error: 'names must start with a letter and hold only letters, digits, _ and - (at most 32)' }),
    z.union([HttpServerSchema, StdioServerSchema], { error: "must be { command, args?, env? } (stdio) or { type: 'http', url, headers? }" }),
    { error: 'must be an object of MCP servers by name' },
  );

/** The servers in ACP's form (`session/new`'s `mcpServers`): `trust` has no place there (ACP agents ask their client). */
export function acpMcpServers(servers: McpServers): acp.McpServer[] {
  return Object.entries(servers).map(([name, server]) =>
    server.type === 'http'
      ? { type: 'http' as const, name, url: server.url, headers: Object.entries(server.headers ?? {}).map(([key, value]) => ({ name: key, value })) }
      : { name, command: server.command, args: [...(server.args ?? [])], env: Object.entries(server.env ?? {}).map(([key, value]) => ({ name: key, value })) },
  );
}

/**
 * ACP's servers (an editor's `session/new`) by name: an SSE server, which no agent here takes from
 * this form, is left out and named in `skipped`; a second server of the same name gets a suffix.
 */
export function fromAcpMcpServers(servers: readonly acp.McpServer[]): { readonly servers: McpServers; readonly skipped: readonly string[] } {
  const byName: Record<string, McpServerConfig> = {};
  const skipped: string[] = [];
  for (const server of servers) {
    let name = server.name.replace(/[^A-Za-z0-9_-]/g, '_').replace(/^[^A-Za-z]+/, '').slice(0, 28) || 'server';
    for (let n = 2; name in byName; n += 1) name = `${name.replace(/_\d+$/, '')}_${n}`;
    if ('type' in server && server.type === 'sse') {
      skipped.push(server.name);
    } else if ('type' in server) {
      byName[name] = { type: 'http', url: server.url, headers: Object.fromEntries(server.headers.map((header) => [header.name, header.value])) };
    } else if ('command' in server) {
      byName[name] = { command: server.command, args: server.args, env: Object.fromEntries(server.env.map((variable) => [variable.name, variable.value])) };
    }
  }
  return { servers: byName, skipped };
}
