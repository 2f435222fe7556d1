// A pi extension, not a module of agent-rx: pi loads this folder itself (`pi --extension <folder>`
// finds `index.ts` in the sources, `index.js` in `dist/`) into its own process. Its one import is
// the official MCP client, found from this file's place (agent-rx's own dependency); pi's types
// are written out.
//
// pi has no MCP of its own. This extension reads a run's MCP servers from a file (its path in the
// `--agent-rx-mcp` flag; the file is the run's own, mode 0600, so headers such as a token never
// appear in pi's argv), connects to each (stdio: it starts the server, http: streamable HTTP with
// the headers), lists their tools and registers each as a pi tool named `mcp__<server>__<tool>`.
// A call is the MCP `tools/call`, with pi's abort signal: an aborted turn cancels the call (the
// client sends `notifications/cancelled`). A result marked `isError` is thrown, so pi reports the
// tool as failed. The servers are closed at `session_shutdown` (stdio servers are ended).
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { readFileSync } from 'node:fs';

/** The flag that names the servers' file. */
const FLAG = 'agent-rx-mcp'; // `PI_MCP_FLAG` of `../extensions.ts`, without its dashes

/** How long a server may take to connect and list its tools before pi starts without it. */
const CONNECT_TIMEOUT_MS = 30_000;

/** A tool call's bound: none of the MCP client's (60 s); the run's own limits and pi's abort end a call. */
const CALL_TIMEOUT_MS = 2_147_483_647;

/** One server, as the file says it (agent-rx's `McpServerConfig`). */
type ServerConfig =
  | { readonly type?: 'stdio'; readonly command: string; readonly args?: readonly string[]; readonly env?: Readonly<Record<string, string>> }
  | { readonly type: 'http'; readonly url: string; readonly headers?: Readonly<Record<string, string>> };

/** The file: the servers by name, and pi's own tools to keep active (absent: pi's default). */
interface McpFile {
  readonly servers: Readonly<Record<string, ServerConfig>>;
  readonly tools?: readonly string[];
}

/** A content block of a pi tool result. */
type PiContent = { readonly type: 'text'; readonly text: string } | { readonly type: 'image'; readonly data: string; readonly mimeType: string };

/** What of pi's `ToolDefinition` this uses. */
interface PiTool {
  readonly name: string;
  readonly label: string;
  readonly description: string;
  readonly parameters: Record<string, unknown>;
  execute(toolCallId: string, params: unknown, signal: AbortSignal | undefined): Promise<{ readonly content: readonly PiContent[]; readonly details: unknown }>;
}

/** What of pi's `ExtensionAPI` this uses. */
interface ExtensionApi {
  registerFlag(name: string, options: { readonly description: string; readonly type: 'string' }): void;
  getFlag(name: string): unknown;
  registerTool(tool: PiTool): void;
  getActiveTools(): readonly string[];
  setActiveTools(names: readonly string[]): void;
  on(event: 'session_start' | 'session_shutdown', handler: () => void | Promise<void>): void;
  on(event: 'tool_execution_start' | 'tool_execution_end', handler: (event: ToolExecutionEvent) => void): void;
}

/** pi's `tool_execution_start` and `tool_execution_end` events: `args` are the model's, before pi's checks. */
interface ToolExecutionEvent {
  readonly toolCallId: string;
  readonly toolName: string;
  readonly args?: unknown;
}

/** What of an MCP tool this uses. */
interface McpTool {
  readonly name: string;
  readonly title?: string | undefined;
  readonly description?: string | undefined;
  readonly inputSchema: Record<string, unknown>;
}

/**
 * Connects to the servers, registers their tools, and closes them when pi's session ends. pi sets
 * an extension's flags after loading it: the file is read at `session_start`, which pi awaits
 * before it takes a prompt.
 */
export default function agentRxMcp(pi: ExtensionApi): void {
  pi.registerFlag(FLAG, { description: "agent-rx: the file of the run's MCP servers", type: 'string' });
  const clients: Client[] = [];
  // pi converts a call's arguments to the tool's schema before it checks them (17 for a string
  // becomes "17"): the server gets the model's own arguments, and checks them itself.
  const given = new Map<string, unknown>();
  pi.on('tool_execution_start', (event) => {
    if (event.toolName.startsWith('mcp__')) given.set(event.toolCallId, event.args);
  });
  pi.on('tool_execution_end', (event) => {
    given.delete(event.toolCallId);
  });
  const argumentsOf = (toolCallId: string, params: unknown): unknown => (given.has(toolCallId) ? given.get(toolCallId) : params);
  pi.on('session_start', async () => {
    const path = pi.getFlag(FLAG);
    if (typeof path !== 'string' || path === '') return;
    const file = JSON.parse(readFileSync(path, 'utf8')) as McpFile;
    const names: string[] = [];
    const connected = await Promise.all(Object.entries(file.servers).map(async ([server, config]) => connect(server, config)));
    for (const one of connected) {
      if (one === undefined) continue;
      clients.push(one.client);
      for (const tool of one.tools) {
        const name = piToolName(one.server, tool.name);
        names.push(name);
        pi.registerTool(piTool(one.client, name, tool, argumentsOf));
      }
    }
    // pi's own tools the run keeps (`--tools` would hide these tools too), and every MCP tool.
    const own = file.tools ?? pi.getActiveTools().filter((name) => !names.includes(name));
    pi.setActiveTools([...new Set([...own, ...names])]);
  });
  pi.on('session_shutdown', async () => {
    await Promise.all(clients.splice(0).map(async (client) => client.close().catch(() => undefined)));
  });
}

/** A server's client and tools, or `undefined` (said on stderr) when it cannot be reached in time. */
async function connect(server: string, config: ServerConfig): Promise<{ readonly server: string; readonly client: Client; readonly tools: readonly McpTool[] } | undefined> {
  const client = new Client({ name: 'agent-rx-pi', version: '1' });
  try {
    const transport =
      config.type === 'http'
        ? new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers: { ...config.headers } } })
        : new StdioClientTransport({
            command: config.command,
            args: [...(config.args ?? [])],
            // The server gets pi's environment, as an agent's MCP servers usually do, with its own variables.
            env: { ...inherited(), ...config.env },
            stderr: 'inherit',
          });
    await client.connect(transport, { timeout: CONNECT_TIMEOUT_MS });
    const tools: McpTool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout: CONNECT_TIMEOUT_MS });
      tools.push(...(page.tools as readonly McpTool[]));
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return { server, client, tools };
  } catch (error) {
    process.stderr.write(`agent-rx: the MCP server ${server} is left out: ${error instanceof Error ? error.message : String(error)}\n`);
    await client.close().catch(() => undefined);
    return undefined;
  }
}

/** pi's environment without unset variables. */
function inherited(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
  return env;
}

/** `mcp__<server>__<tool>`, with what a model's tool name cannot hold made `_`, at most 64 characters. */
function piToolName(server: string, tool: string): string {
  return `mcp__${server}__${tool.replace(/[^A-Za-z0-9_-]/g, '_')}`.slice(0, 64);
}

/** The pi tool that calls an MCP tool. */
function piTool(client: Client, name: string, tool: McpTool, argumentsOf: (toolCallId: string, params: unknown) => unknown): PiTool {
  // The input schema is JSON Schema, which pi takes as its parameters; `$schema` is no concern of its.
  const { $schema: _schema, ...parameters } = tool.inputSchema;
  return {
    name,
    label: tool.title ?? tool.name,
    description: tool.description ?? tool.title ?? tool.name,
    parameters: { ...parameters, type: 'object' },
    execute: async (toolCallId, params, signal) => {
      const result = await client.callTool(
        { name: tool.name, arguments: (argumentsOf(toolCallId, params) ?? {}) as Record<string, unknown> },
        { timeout: CALL_TIMEOUT_MS, ...(signal === undefined ? {} : { signal }) },
      );
      const content = piContent(result);
      // pi marks a tool failed only when `execute` throws.
      if (result.isError === true) throw new Error(content.map((part) => (part.type === 'text' ? part.text : '')).join('\n') || `${name} failed`);
      return { content, details: { server: name.split('__')[1], tool: tool.name } };
    },
  };
}

/** An MCP result's content as pi's: text and images as they are, anything else as JSON text. */
function piContent(result: { readonly content?: readonly unknown[]; readonly structuredContent?: unknown }): PiContent[] {
  const content: PiContent[] = [];
  for (const block of result.content ?? []) {
    const part = block as { readonly type?: string; readonly text?: string; readonly data?: string; readonly mimeType?: string; readonly resource?: { readonly text?: string } };
    if (part.type === 'text' && typeof part.text === 'string') content.push({ type: 'text', text: part.text });
    else if (part.type === 'image' && typeof part.data === 'string' && typeof part.mimeType === 'string') content.push({ type: 'image', data: part.data, mimeType: part.mimeType });
    else if (part.type === 'resource' && typeof part.resource?.text === 'string') content.push({ type: 'text', text: part.resource.text });
    else content.push({ type: 'text', text: JSON.stringify(block) });
  }
  if (content.length === 0 && result.structuredContent !== undefined) content.push({ type: 'text', text: JSON.stringify(result.structuredContent) });
  return content;
}
