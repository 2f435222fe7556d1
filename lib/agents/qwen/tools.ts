import { toolVocabulary } from '../shared/tools.js';

/** Qwen Code's built-in tools: what kind each is, and which field of its input says what a call does. */
export const qwenTools = toolVocabulary({
  run_shell_command: { kind: 'execute', says: 'command' },
  monitor: { kind: 'execute', says: 'command' },
  task_stop: { kind: 'execute' },
  read_file: { kind: 'read', says: 'path' },
  read_many_files: { kind: 'read', says: ['paths', 'include'] },
  read_mcp_resource: { kind: 'read', says: ['uri'] },
  zoom_image: { kind: 'read', says: 'path' },
  write_file: { kind: 'edit', says: 'path' },
  edit: { kind: 'edit', says: 'path' },
  notebook_edit: { kind: 'edit', says: 'path' },
  list_directory: { kind: 'search', says: 'path' },
  glob: { kind: 'search', says: 'pattern' },
  grep_search: { kind: 'search', says: 'pattern' },
  tool_search: { kind: 'search', says: ['query'] },
  web_fetch: { kind: 'fetch', says: ['url', 'prompt'] },
  web_search: { kind: 'fetch', says: ['query'] },
  agent: { kind: 'think', says: ['description', 'prompt'] },
  todo_write: { kind: 'think' },
  save_memory: { kind: 'think', says: ['fact'] },
  get_goal: { kind: 'think' },
  update_goal: { kind: 'think' },
});
