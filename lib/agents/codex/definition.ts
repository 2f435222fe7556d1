import type { AgentDefinition } from '../definition.js';
import { codexRunInvocation, codexSessionInvocation } from './args.js';
import { codexDialect } from './dialect.js';
import { codexExecutable } from './executable.js';
import { CODEX_OPTIONS, CODEX_SANDBOX_MODES, type CodexSessionOptions, type RunCodexOptions } from './options.js';
import { recognizesCodexOutput } from './recognize.js';
import { choiceFlag, sessionFlag, textFlag } from '../shared/flags.js';

/**
 * Codex (`@openai/codex`): `codex exec --experimental-json` for runs, `codex app-server` for
 * sessions; without an `executable`, the native binary of its platform package (see
 * {@link codexExecutable}).
 */
export const codexAgent = {
  name: 'codex',
  displayName: 'Codex',
  executable: codexExecutable,
  options: CODEX_OPTIONS,
  run: codexRunInvocation,
  session: codexSessionInvocation,
  dialect: codexDialect,
  flags: [
    textFlag('provider', 'provider', '<name>', "codex: the model provider's id in its configuration"),
    choiceFlag('sandbox', 'sandbox', CODEX_SANDBOX_MODES, '<mode>', `codex: ${CODEX_SANDBOX_MODES.join(', ')}`),
    sessionFlag(['new', 'last'], 'resume', 'codex: new, last or a thread id to resume'),
  ],
  recognizesOutput: recognizesCodexOutput,
} satisfies AgentDefinition<'codex', RunCodexOptions, CodexSessionOptions>;
