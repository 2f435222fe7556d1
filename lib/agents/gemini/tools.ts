import { toolVocabulary } from '../shared/tools.js';

/** Gemini CLI's built-in tools: what kind each is, and which field of its input says what a call does. */
export const geminiTools = toolVocabulary({
  run_shell_command: { kind: 'execute', says: 'command' },
  read_file: { kind: 'read', says: 'path' },
  read_many_files: { kind: 'read', says: ['paths', 'include'] },
  write_file: { kind: 'edit', says: 'path' },
  replace: { kind: 'edit', says: 'path' },
  list_directory: { kind: 'search', says: 'path' },
  glob: { kind: 'search', says: 'pattern' },
  search_file_content: { kind: 'search', says: 'pattern' },
  grep_search: { kind: 'search', says: 'pattern' },
  web_fetch: { kind: 'fetch', says: ['prompt', 'url'] },
  google_web_search: { kind: 'fetch', says: ['query'] },
  save_memory: { kind: 'think', says: ['fact'] },
  write_todos: { kind: 'think' },
});

/**
 * Gemini CLI's name of a tool as the messages say it: an MCP server's tool, which Gemini CLI names
 * `mcp_<server>_<tool>`, is `mcp__<server>__<tool>` as for every agent; any other name is kept.
 * The server is the longest of `servers` the name begins with, else the name up to its first `_`
 * after `mcp_` (as Gemini CLI's own policies read it: a server named with `_` is then misread).
 *
 * @example
 * geminiToolName('mcp_host_lookup'); // 'mcp__host__lookup'
 * geminiToolName('mcp_my_db_query', ['my_db']); // 'mcp__my_db__query'
 */
export function geminiToolName(name: string, servers: readonly string[] = []): string {
  if (!name.startsWith('mcp_') || name.startsWith('mcp__')) return name;
  const known = [...servers].sort((a, b) => b.length - a.length).find((server) => name.startsWith(`mcp_${server}_`) && name.length > server.length + 5);
  if (known !== undefined) return `mcp__${known}__${name.slice(known.length + 5)}`;
  const match = /^mcp_([^_]+)_(.+)$/.exec(name);
  return match === null ? name : `mcp__${match[1]}__${match[2]}`;
}

/**
 * The tool a Gemini CLI call's id names (its ACP updates say none): ids are
 * `<tool>__<tool>_<time>_<n>` (`mcp_host_lookup__mcp_host_lookup_1796328959513_0`), the tool as
 * {@link geminiToolName} says it.
 */
export function geminiToolNameOfCall(toolCallId: string, servers: readonly string[] = []): string | undefined {
  for (let at = toolCallId.indexOf('__'); at > 0; at = toolCallId.indexOf('__', at + 1)) {
    const tool = toolCallId.slice(0, at);
    if (toolCallId.startsWith(`${tool}_`, at + 2)) return geminiToolName(tool, servers);
  }
  const tool = /^(.+?)__/.exec(toolCallId)?.[1];
  return tool === undefined ? undefined : geminiToolName(tool, servers);
}
