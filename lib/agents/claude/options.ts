import type { ProcessOptions } from '../../process/options.js';

/**
 * Which session a Claude Code run uses: `'new'` (default), `'continue'` (the latest session of
 * `cwd`, `--continue`) or `{ resume: id }` (`--resume <id>`).
 */
export type ClaudeSession = 'new' | 'continue' | { readonly resume: string };

/** Options of `runClaudeCode`. Process options (`cwd`, `env`, `gracePeriodMs`, ...) are passed through. */
export interface RunClaudeCodeOptions extends ClaudeCodeSessionOptions {
  /** The prompt, passed after `--` so that it can never be read as a flag. */
  readonly prompt: string;
}

/**
 * Options of `claudeCodeSession`: `runClaudeCode`'s without the prompt (prompts are commands). In
 * a session, `idleTimeoutMs` counts only while a turn runs and aborts that turn; `gracePeriodMs`
 * also bounds how long an abort, and the exit after the last turn, may take.
 */
export interface ClaudeCodeSessionOptions extends Omit<ProcessOptions, 'stdin'> {
  /**
   * The Claude Code executable. Default: the native binary of the `@anthropic-ai/claude-code`
   * package (its platform package), else `claude` on PATH (see `findClaudeExecutable`).
   */
  readonly executable?: string;
  /** Arguments placed before Claude Code's own. */
  readonly executableArgs?: readonly string[];
  /** The model (`--model`). Default: Claude Code's. */
  readonly model?: string;
  /** Which session the run uses (see {@link ClaudeSession}); resuming gives `session.resumed`. Default `'new'`. */
  readonly session?: ClaudeSession;
  /** `--permission-mode`, e.g. `acceptEdits` or `plan`. */
  readonly permissionMode?: string;
  /** Tools allowed without asking (`--allowedTools`), e.g. `['Bash', 'Read']` or `['Bash(git:*)']`. */
  readonly allowedTools?: readonly string[];
  /** Tools refused (`--disallowedTools`). */
  readonly disallowedTools?: readonly string[];
  /** `--max-turns`. */
  readonly maxTurns?: number;
  /**
   * Stream text, thinking and tool input as they are generated (`--include-partial-messages`).
   * Default true; without it text arrives one whole block at a time.
   */
  readonly includePartialMessages?: boolean;
  /**
   * `false` switches off Claude Code's own API retries (`CLAUDE_CODE_MAX_RETRIES=0`; by default it
   * retries up to 10 times, about 3 minutes for a failing run). Default: Claude Code's setting.
   */
  readonly agentRetry?: boolean;
  /** More arguments, placed after the ones built from these options and before the prompt. */
  readonly extraArgs?: readonly string[];
}
