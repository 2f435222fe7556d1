import { toolVocabulary } from '../shared/tools.js';

/** Codex's items that are tools (as `runCodex` names them): what kind each is, and what says what a call does. */
export const codexTools = toolVocabulary({
  command_execution: { kind: 'execute', says: 'command' },
  file_change: { kind: 'edit' },
  web_search: { kind: 'fetch', says: ['query'] },
  todo_list: { kind: 'think' },
  view_image: { kind: 'read', says: 'path' },
  image_generation: { kind: 'other' },
});
