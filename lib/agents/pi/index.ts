// pi's public face: its definition and its options.
export { piAgent } from './definition.js';
export type { PiSetup, PiMcpSetup } from './args.js';
export { PI_THINKING_LEVELS, type RunPiOptions, type PiSessionOptions, type PiSessionChoice, type PiThinkingLevel, type PiRunSpecOptions } from './options.js';
