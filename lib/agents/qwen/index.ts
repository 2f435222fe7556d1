// Qwen Code's public face: its definition and its options.
export { qwenAgent } from './definition.js';
export type { QwenSetup } from './args.js';
export { QWEN_APPROVAL_MODES, QWEN_MAX_PROMPT_BYTES, type RunQwenOptions, type QwenSessionOptions, type QwenSessionChoice, type QwenSessionResume, type QwenApprovalMode, type QwenRunSpecOptions } from './options.js';
