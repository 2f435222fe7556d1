// Codex's public face: its definition and its options.
export { codexAgent } from './definition.js';
export type { CodexSetup } from './args.js';
export {
  CODEX_SANDBOX_MODES,
  CODEX_APPROVAL_POLICIES,
  type RunCodexOptions,
  type CodexSessionOptions,
  type CodexSessionChoice,
  type CodexSandboxMode,
  type CodexApprovalPolicy,
  type TomlValue,
  type CodexRunSpecOptions,
} from './options.js';
