import type { ProcessOptions } from '../../process/options.js';

/**
 * What Gemini CLI may do without asking (`--approval-mode`). A headless run cannot ask: in
 * `default` mode the shell tool is not even offered to the model; `yolo` allows every tool.
 */
export const GEMINI_APPROVAL_MODES = ['default', 'auto_edit', 'yolo', 'plan'] as const;
/** One of {@link GEMINI_APPROVAL_MODES}. */
export type GeminiApprovalMode = (typeof GEMINI_APPROVAL_MODES)[number];

/**
 * Which session a Gemini CLI run uses: `'new'` (default), `{ id }` (a new session with this UUID,
 * `--session-id`), `'latest'` (the latest session of `cwd`, `--resume latest`) or `{ resume }` (a
 * session of `cwd` by its id, or by the index `--list-sessions` shows, which changes as sessions
 * are made: `--resume <id>`).
 */
export type GeminiSession = 'new' | 'latest' | { readonly id: string } | { readonly resume: string };

/** Options of `runGemini`. Process options (`cwd`, `env`, `gracePeriodMs`, ...) are passed through. */
export interface RunGeminiOptions extends GeminiSessionOptions {
  /** The prompt. Sent on stdin, never as an argument, so it can never be read as a flag. */
  readonly prompt: string;
  /** Which session the run uses (see {@link GeminiSession}); resuming gives `session.resumed`. Default `'new'`. */
  readonly session?: GeminiSession;
}

/**
 * Options of `geminiSession` (`gemini --acp`): `runGemini`'s without the prompt and the session.
 * Permission requests and the client's file system are `acpSession`'s options.
 */
export interface GeminiSessionOptions extends Omit<ProcessOptions, 'stdin' | 'stderrLines'> {
  /** The Gemini CLI executable. Default `gemini` (found on PATH). */
  readonly executable?: string;
  /** Arguments placed before Gemini CLI's own, e.g. `executable: process.execPath, executableArgs: ['bundle/gemini.js']`. */
  readonly executableArgs?: readonly string[];
  /** `--model`. */
  readonly model?: string;
  /** `--approval-mode`. Default Gemini CLI's (`default`: no shell tool in a headless run). */
  readonly approvalMode?: GeminiApprovalMode;
  /**
   * Trust `cwd` for this run (`--skip-trust`): in a folder it does not trust, Gemini CLI exits 55
   * with nothing on stdout. Default true, because the caller chose the folder.
   */
  readonly skipTrust?: boolean;
  /** More folders of the workspace (`--include-directories`). */
  readonly includeDirectories?: readonly string[];
  /**
   * `false` switches off Gemini CLI's own retries of model requests (`general.maxAttempts: 1`; by
   * default it tries 10 times with back-off, minutes for a failing run). Default: its settings.
   */
  readonly agentRetry?: boolean;
  /** More arguments, placed after the ones built from these options. */
  readonly extraArgs?: readonly string[];
}
