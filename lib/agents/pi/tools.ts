import { toolVocabulary } from '../shared/tools.js';

/** pi's built-in tools (`--tools`): what kind each is, and which field of its input says what a call does. */
export const piTools = toolVocabulary({
  bash: { kind: 'execute', says: 'command' },
  read: { kind: 'read', says: 'path' },
  write: { kind: 'edit', says: 'path' },
  edit: { kind: 'edit', says: 'path' },
  ls: { kind: 'search', says: 'path' },
  grep: { kind: 'search', says: 'pattern' },
  find: { kind: 'search', says: 'pattern' },
});
