import { describeIssue } from '../agents/shared/option-schemas.js';
import { McpServersSchema, type McpServers } from '../tools/mcp-servers.js';

/**
 * A worker's catalog of MCP servers (`serveRuns({ mcpServers })`), checked: a `TypeError` that
 * names what is wrong.
 */
export function checkMcpCatalog(catalog: unknown): McpServers {
  if (catalog === undefined) return {};
  const parsed = McpServersSchema.safeParse(catalog, { reportInput: true });
  if (parsed.success) return catalog as McpServers;
  throw new TypeError(`agent-rx: mcpServers ${describeIssue(parsed.error.issues[0], 'mcpServers')}`);
}

/**
 * The servers a spec names (`options.mcpServers`), from the worker's catalog; throws (the worker
 * refuses the run, as it refuses a folder it does not allow) when it names one the worker does not offer.
 */
export function offeredMcpServers(catalog: McpServers, names: readonly string[] | undefined): McpServers {
  const servers: Record<string, McpServers[string]> = {};
  for (const name of names ?? []) {
    const server = catalog[name];
    if (server === undefined || !Object.hasOwn(catalog, name)) {
      const offered = Object.keys(catalog);
      throw new Error(`the MCP server ${name} is not one this worker offers (${offered.length === 0 ? 'it offers none' : `it offers ${offered.join(', ')}`})`);
    }
    servers[name] = server;
  }
  return servers;
}
