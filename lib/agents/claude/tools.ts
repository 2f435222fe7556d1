import { toolVocabulary } from '../shared/tools.js';

/** Claude Code's built-in tools: what kind each is, and which field of its input says what a call does. */
export const claudeTools = toolVocabulary({
  Bash: { kind: 'execute', says: 'command' },
  BashOutput: { kind: 'execute' },
  KillShell: { kind: 'execute' },
  Read: { kind: 'read', says: 'path' },
  NotebookRead: { kind: 'read', says: 'path' },
  Write: { kind: 'edit', says: 'path' },
  Edit: { kind: 'edit', says: 'path' },
  MultiEdit: { kind: 'edit', says: 'path' },
  NotebookEdit: { kind: 'edit', says: 'path' },
  LS: { kind: 'search', says: 'path' },
  Grep: { kind: 'search', says: 'pattern' },
  Glob: { kind: 'search', says: 'pattern' },
  ToolSearch: { kind: 'search', says: ['query'] },
  WebFetch: { kind: 'fetch', says: ['url'] },
  WebSearch: { kind: 'fetch', says: ['query'] },
  Task: { kind: 'think', says: ['description', 'prompt'] },
  TodoWrite: { kind: 'think' },
  ExitPlanMode: { kind: 'think' },
});
