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
