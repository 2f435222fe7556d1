// Claude Code's public face: its definition and its options.
export { claudeAgent } from './definition.js';
export type { RunClaudeCodeOptions, ClaudeCodeSessionOptions, ClaudeSessionChoice, ClaudeCodeRunSpecOptions } from './options.js';
export type { ClaudeSetup } from './args.js';
