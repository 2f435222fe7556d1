import type { AgentDefinition } from '../definition.js';
import { claudeRunInvocation, claudeSessionInvocation } from './args.js';
import { claudeDialect } from './dialect.js';
import { claudeExecutable } from './executable.js';
import { CLAUDE_OPTIONS, type ClaudeCodeSessionOptions, type RunClaudeCodeOptions } from './options.js';
import { recognizesClaudeOutput } from './recognize.js';
import { listFlag, sessionFlag } from '../shared/flags.js';

/**
 * Claude Code (`@anthropic-ai/claude-code`): `claude -p --output-format stream-json` for runs,
 * stream-json in and out for sessions; without an `executable`, the native binary of its platform
 * package (see {@link claudeExecutable}).
 */
export const claudeAgent = {
  name: 'claude',
  displayName: 'Claude Code',
  executable: claudeExecutable,
  options: CLAUDE_OPTIONS,
  run: claudeRunInvocation,
  session: claudeSessionInvocation,
  dialect: claudeDialect,
  flags: [
    listFlag('allowed-tools', 'allowedTools', '<list>', 'claude: tools allowed without asking, comma-separated'),
    sessionFlag(['new', 'continue'], 'resume', 'claude: new, continue or an id to resume'),
  ],
  recognizesOutput: recognizesClaudeOutput,
} satisfies AgentDefinition<'claude', RunClaudeCodeOptions, ClaudeCodeSessionOptions>;
