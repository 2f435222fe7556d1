import { describe, expect, it } from '@jest/globals';
import { AGENTS, TOOL_KINDS, type AgentName } from '../../lib/index.js';

// What the README says of each agent's tool kinds: a shell command is execute, reading a file read,
// writing or editing one edit, listing/grep/glob search, web fetch and search fetch, plans and
// to-do lists think, any other tool other.
const SAID: Record<string, Record<string, string>> = {
  pi: { bash: 'execute', read: 'read', write: 'edit', edit: 'edit', ls: 'search', grep: 'search', find: 'search' },
  claude: { Bash: 'execute', Read: 'read', Write: 'edit', Edit: 'edit', LS: 'search', Grep: 'search', Glob: 'search', WebFetch: 'fetch', WebSearch: 'fetch', TodoWrite: 'think', Task: 'think' },
  codex: { command_execution: 'execute', file_change: 'edit', web_search: 'fetch', todo_list: 'think' },
  gemini: { run_shell_command: 'execute', read_file: 'read', write_file: 'edit', replace: 'edit', list_directory: 'search', glob: 'search', web_fetch: 'fetch', google_web_search: 'fetch', write_todos: 'think' },
  qwen: { run_shell_command: 'execute', read_file: 'read', write_file: 'edit', edit: 'edit', list_directory: 'search', glob: 'search', grep_search: 'search', web_fetch: 'fetch', todo_write: 'think', agent: 'think' },
};

describe.each(Object.keys(AGENTS) as AgentName[])("%s's tools", (agent) => {
  const tools = AGENTS[agent].dialect().tools;

  it('have a kind of ACP’s set, and any tool it does not know is other', () => {
    expect(tools).toBeDefined();
    expect(tools?.kind('mcp__orders__lookup')).toBe('other');
    for (const [name, kind] of Object.entries(SAID[agent] ?? {})) {
      expect(TOOL_KINDS).toContain(kind);
      expect([name, tools?.kind(name)]).toEqual([name, kind]);
    }
  });
});
