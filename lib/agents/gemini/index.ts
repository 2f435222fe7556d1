// Gemini CLI's public face: its definition and its options.
export { geminiAgent } from './definition.js';
export type { GeminiSetup } from './args.js';
export { GEMINI_APPROVAL_MODES, type RunGeminiOptions, type GeminiSessionOptions, type GeminiSessionChoice, type GeminiApprovalMode, type GeminiRunSpecOptions } from './options.js';
