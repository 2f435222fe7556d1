import type { AgentDefinition } from '../definition.js';
import { geminiRunInvocation, geminiSessionInvocation, type GeminiSetup } from './args.js';
import { geminiDialect } from './dialect.js';
import { GEMINI_APPROVAL_MODES, GEMINI_OPTIONS, type GeminiSessionOptions, type RunGeminiOptions } from './options.js';
import { recognizesGeminiOutput } from './recognize.js';
import { removingResumeLeftovers } from './setup/resume-leftovers.js';
import { geminiHome, geminiNoRetryOverlay } from './setup/settings-overlay.js';
import { choiceFlag, sessionFlag } from '../shared/flags.js';

/**
 * Gemini CLI (`@google/gemini-cli`): `gemini --output-format stream-json` for runs, `gemini --acp`
 * for sessions. `agentRetry: false` gives a run a home whose settings allow one attempt; a run that
 * resumes a session removes the empty recording Gemini CLI 0.61 leaves beside it, which its own
 * session cleanup would take for a broken session and delete with the session.
 */
export const geminiAgent = {
  name: 'gemini',
  displayName: 'Gemini CLI',
  executable: { names: ['gemini'] },
  options: GEMINI_OPTIONS,
  run: geminiRunInvocation,
  session: geminiSessionInvocation,
  dialect: geminiDialect,
  flags: [
    choiceFlag('approval-mode', 'approvalMode', GEMINI_APPROVAL_MODES, '<mode>', `gemini: ${GEMINI_APPROVAL_MODES.join(', ')} (without yolo it has no shell tool)`),
    sessionFlag(['new', 'latest'], 'resume', 'gemini: new, latest or a session id (or index) to resume'),
  ],
  recognizesOutput: recognizesGeminiOutput,
  setup: {
    overlay: (setup) => (setup.noRetries ? geminiNoRetryOverlay() : undefined),
    messages: (setup, env) => (setup.resumed ? removingResumeLeftovers(() => geminiHome(env)) : undefined),
  },
} satisfies AgentDefinition<'gemini', RunGeminiOptions, GeminiSessionOptions, GeminiSetup>;
