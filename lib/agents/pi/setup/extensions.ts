import { fileURLToPath } from 'node:url';

/**
 * The folder of agent-rx's permission extension for pi, for `pi --extension`: pi loads its
 * `index.ts` from the sources, its `index.js` from the built `dist/`, whichever this module is
 * part of.
 */
export const PI_PERMISSION_EXTENSION: string = fileURLToPath(new URL('./permission-extension', import.meta.url));

/**
 * The folder of agent-rx's MCP extension for pi (`pi --extension`), loaded when a run or session
 * has MCP servers: it connects to them with the official MCP client, which pi's loader finds from
 * the extension's own place (agent-rx's dependency), in the sources as in `dist/`.
 */
export const PI_MCP_EXTENSION: string = fileURLToPath(new URL('./mcp-extension', import.meta.url));

/** The extension's flag that names the servers' file. */
export const PI_MCP_FLAG = '--agent-rx-mcp';
