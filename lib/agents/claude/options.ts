import type { OutputSchema, Prompt } from '../../messages.js';
import * as z from 'zod';
import type { ProcessOptions } from '../../process/options.js';
import type { ConversationOptions } from '../../sessions/conversation-snapshot.js';
import type { ToolOptions } from '../../tools/with-host-tools.js';
import type { Holds, SameOptions } from '../../same-type.js';
import type { PermissionOptions, RunPermissionOptions } from '../../operators/permission-policy.js';
import { CALLER_PROCESS_OPTIONS, flag, HOST_PROCESS_OPTIONS, integer, PROMPT, OUTPUT_OPTIONS, SPEC_PROMPT, SPEC_OUTPUT_OPTIONS, SPEC_TOOL_OPTIONS, type SpecPromptOptions, RUN_PERMISSION_OPTIONS, SESSION_PERMISSION_OPTIONS, SESSION_CONVERSATION_OPTIONS, text, texts, TOOL_OPTIONS } from '../shared/option-schemas.js';
import { WATCH_OPTIONS, type WatchOptions } from '../shared/watch-options.js';

/**
 * Which session a Claude Code run uses: `'new'` (default), `'continue'` (the latest session of
 * `cwd`, `--continue`) or `{ resume: id }` (`--resume <id>`).
 */
export type ClaudeSessionChoice = 'new' | 'continue' | { readonly resume: string };

/**
 * Options of `runClaudeCode`. Process options (`cwd`, `env`, `gracePeriodMs`, ...) are passed through.
 *
 * `mcpServers` and host `tools` go in an MCP config file of the run's own (`--mcp-config`, with
 * `--strict-mcp-config`: the user's configured servers are left out); the prompt then goes on
 * stdin. Without `permission`, a server with `trust: true` (host tools' server then) is allowed
 * without asking (`--allowedTools mcp__<name>`), another server's tools are refused unless
 * `allowedTools` names them (`mcp__orders`, `mcp__orders__lookup`); with `permission`, every call
 * of an MCP tool asks (`mcp__<server>__<tool>`).
 */
export interface RunClaudeCodeOptions<Output = unknown> extends Omit<ProcessOptions, 'stdin'>, ClaudeOwnOptions, RunPermissionOptions, ToolOptions, WatchOptions {
  /**
   * The prompt: a string, or parts in order (text, images, files: {@link Prompt}). Images and
   * files are read when the run is made (a `TypeError` names a part that cannot be read or is too
   * big), so every subscription sends the same bytes. Files go into the prompt as `<file>` blocks;
   * a prompt with an image makes the run a one-prompt session, where the image is a base64 image
   * block of the user line.
   */
  readonly prompt: Prompt;
  /**
   * The schema the answer must satisfy (a zod schema types `terminal.completed.output`): the run
   * completes with the parsed, validated answer in `output`, or fails with `output-schema`. Given
   * natively (`--json-schema`: the model answers through Claude Code's `StructuredOutput` tool,
   * which Claude Code checks and retries); told in the prompt when the run is a one-prompt session
   * (an image, a `permission`).
   */
  readonly outputSchema?: OutputSchema<Output> | undefined;
}

/**
 * Options of `claudeCodeSession`: `runClaudeCode`'s without the prompt (prompts are commands), and
 * who answers Claude Code's permission prompts. Commands take images (base64 image blocks) and files
 * (text); a command's `outputSchema` is told in its prompt (Claude Code's own schema is one per
 * process) and the turn's answer checked. In a session, `idleTimeoutMs` counts only while a
 * turn runs and aborts that turn; `gracePeriodMs` also bounds how long an abort, and the exit after
 * the last turn, may take.
 *
 * With `permission`, Claude Code asks the session before each tool its own rules do not settle
 * (`--permission-prompt-tool stdio`): `allowedTools`, `disallowedTools` and `permissionMode` still
 * apply first (an allowed tool runs without asking, a disallowed one is not offered), and each
 * remaining call is a `permission.requested` that the policy, the callback or a `permission`
 * command decides. `allow-always` (offered when Claude Code suggests a rule for the call, e.g.
 * `Bash(touch x.txt)`) allows the same again for the rest of the session; nothing is written to
 * the project's settings. A denied tool does not run: the model is told `denied by the host` and
 * the turn goes on. With `permissionMode` `bypassPermissions` or `dontAsk` nothing would ask, so
 * giving `permission` too throws a `TypeError`. Without `permission`, Claude Code decides alone: in
 * this headless mode what its rules do not allow is refused.
 *
 * `mcpServers` and host `tools` go as for a run (`--mcp-config <own file> --strict-mcp-config`).
 * With `permission`, every MCP tool call is a `permission.requested` for `mcp__<server>__<tool>`
 * (unless `allowedTools` allows it); without it, a server with `trust: true` (host tools' server
 * then) is allowed as a whole, and another server's tools are refused unless `allowedTools` names
 * them.
 */
export interface ClaudeCodeSessionOptions extends Omit<ProcessOptions, 'stdin'>, ClaudeOwnOptions, PermissionOptions, ConversationOptions, ToolOptions, WatchOptions {}

/** Claude Code's own options, besides the process options. */
export interface ClaudeOwnOptions {
  /**
   * The Claude Code executable. Default: the native binary of the `@anthropic-ai/claude-code`
   * package (its platform package), else `claude` on PATH (see `findClaudeExecutable`).
   */
  readonly executable?: string;
  /** Arguments placed before Claude Code's own. */
  readonly executableArgs?: readonly string[];
  /** The model (`--model`). Default: Claude Code's. */
  readonly model?: string;
  /** Which session the run uses (see {@link ClaudeSessionChoice}); resuming gives `session.resumed`. Default `'new'`. */
  readonly session?: ClaudeSessionChoice;
  /**
   * `--permission-mode`, e.g. `acceptEdits` or `plan` (`bypassPermissions` and `dontAsk` never ask:
   * a session's `permission` cannot go with them).
   */
  readonly permissionMode?: string;
  /** Tools allowed without asking (`--allowedTools`), e.g. `['Bash', 'Read']` or `['Bash(git:*)']`. */
  readonly allowedTools?: readonly string[];
  /** Tools refused (`--disallowedTools`). */
  readonly disallowedTools?: readonly string[];
  /** `--max-turns`. */
  readonly maxTurns?: number;
  /**
   * `--max-budget-usd`: Claude Code ends the run itself once it has spent this much (its
   * `error_max_budget_usd`, a `terminal.failed` with reason `budget`). A `budget` with `costUsd`
   * sets it too.
   */
  readonly maxBudgetUsd?: number;
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

/** What a caller may choose of a Claude Code run (the fleet's run spec). */
const CALLER = {
  model: text().optional(),
  session: z.union([z.enum(['new', 'continue']), z.strictObject({ resume: text() })], { error: "must be 'new', 'continue' or { resume }" }).optional(),
  permissionMode: text().optional(),
  allowedTools: texts().optional(),
  disallowedTools: texts().optional(),
  maxTurns: integer(1).optional(),
  maxBudgetUsd: z.number({ error: 'must be a number of USD > 0' }).positive({ error: 'must be a number of USD > 0' }).optional(),
  includePartialMessages: flag().optional(),
  agentRetry: flag().optional(),
};

/** What only the host chooses: the program and what is passed to it besides. */
const HOST = {
  executable: text().optional(),
  executableArgs: texts().optional(),
  extraArgs: texts().optional(),
};

const _OWN = z.strictObject({ ...CALLER, ...HOST });
const PROCESS = { ...CALLER_PROCESS_OPTIONS, ...HOST_PROCESS_OPTIONS, stderrLines: z.unknown().optional() };

/** The schemas of Claude Code's options: a run's, a session's, and a fleet run spec's. */
export const CLAUDE_OPTIONS = {
  run: z.strictObject({ ...TOOL_OPTIONS, ...WATCH_OPTIONS, ...CALLER, ...HOST, ...PROCESS, ...RUN_PERMISSION_OPTIONS, ...OUTPUT_OPTIONS, prompt: PROMPT }),
  session: z.strictObject({ ...TOOL_OPTIONS, ...WATCH_OPTIONS, ...CALLER, ...HOST, ...PROCESS, ...SESSION_PERMISSION_OPTIONS, ...SESSION_CONVERSATION_OPTIONS }),
  spec: z.strictObject({ prompt: SPEC_PROMPT, ...SPEC_OUTPUT_OPTIONS, ...SPEC_TOOL_OPTIONS, ...CALLER_PROCESS_OPTIONS, ...CALLER }),
};

/** What a fleet caller may choose of a Claude Code run: a run spec's options (`{ agent: 'claude', options }`). */
export type ClaudeCodeRunSpecOptions = SpecPromptOptions & Pick<RunClaudeCodeOptions, 'cwd' | 'timeoutMs' | 'idleTimeoutMs' | 'model' | 'session' | 'permissionMode' | 'allowedTools' | 'disallowedTools' | 'maxTurns' | 'maxBudgetUsd' | 'includePartialMessages' | 'agentRetry'>;

// A run spec's options are exactly what its schema checks.
type _ClaudeCodeRunSpecMatchesItsSchema = Holds<SameOptions<ClaudeCodeRunSpecOptions, z.input<typeof CLAUDE_OPTIONS.spec>>>;

// The declared options are exactly what the schema checks (see `SameOptions`): change both together.
type _ClaudeOptionsMatchTheirSchema = Holds<SameOptions<ClaudeOwnOptions, z.input<typeof _OWN>>>;
