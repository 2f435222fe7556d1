import type { OutputSchema, Prompt } from '../../messages.js';
import * as z from 'zod';
import type { PermissionOptions, RunPermissionOptions } from '../../operators/permission-policy.js';
import type { ProcessOptions } from '../../process/options.js';
import type { ConversationOptions } from '../../sessions/conversation-snapshot.js';
import type { ToolOptions } from '../../tools/with-host-tools.js';
import type { Holds, SameOptions } from '../../same-type.js';
import { CALLER_PROCESS_OPTIONS, flag, HOST_PROCESS_OPTIONS, oneOf, PROMPT, OUTPUT_OPTIONS, SPEC_PROMPT, SPEC_OUTPUT_OPTIONS, SPEC_TOOL_OPTIONS, type SpecPromptOptions, RUN_PERMISSION_OPTIONS, SESSION_PERMISSION_OPTIONS, SESSION_CONVERSATION_OPTIONS, text, texts, TOOL_OPTIONS } from '../shared/option-schemas.js';
import { WATCH_OPTIONS, type WatchOptions } from '../shared/watch-options.js';

/** Where Codex may write when it runs commands (`--sandbox`). */
export const CODEX_SANDBOX_MODES = ['read-only', 'workspace-write', 'danger-full-access'] as const;
/** One of {@link CODEX_SANDBOX_MODES}. */
export type CodexSandboxMode = (typeof CODEX_SANDBOX_MODES)[number];

/**
 * When Codex asks before running a command or changing files (`approval_policy`): `untrusted`
 * before every command it does not know to be read-only; `on-request` when the model asks to leave
 * the sandbox. A run cannot answer (it declines what is asked: use `never`); a session answers
 * through its `permission` option.
 */
export const CODEX_APPROVAL_POLICIES = ['never', 'on-request', 'on-failure', 'untrusted'] as const;
/** One of {@link CODEX_APPROVAL_POLICIES}. */
export type CodexApprovalPolicy = (typeof CODEX_APPROVAL_POLICIES)[number];

/**
 * Which thread a Codex run uses: `'new'` (default), `'last'` (the most recent recorded thread,
 * `resume --last`; when there is none, Codex starts a new thread, which the run still announces as
 * `session.resumed`) or `{ resume: id }` (`resume <id>`: a thread id or a thread name).
 */
export type CodexSessionChoice = 'new' | 'last' | { readonly resume: string };

/** A value of Codex's configuration, written as TOML on the command line. */
export type TomlValue = string | number | boolean | readonly TomlValue[] | { readonly [key: string]: TomlValue };

/** Options of `runCodex`. Process options (`cwd`, `env`, `gracePeriodMs`, ...) are passed through. */
export interface RunCodexOptions<Output = unknown> extends Omit<CodexSessionOptions, 'session' | keyof PermissionOptions | keyof ConversationOptions>, RunPermissionOptions, ToolOptions {
  /**
   * The prompt: a string, or parts in order (text, images, files: {@link Prompt}). Images and
   * files are read when the run is made (a `TypeError` names a part that cannot be read or is too
   * big), so every subscription sends the same bytes. A file goes in the prompt's text (a
   * `<file>` block); a run with an image goes over `app-server`, which takes its bytes.
   */
  readonly prompt: Prompt;
  /**
   * The schema the answer must satisfy (a zod schema types `terminal.completed.output`): the run
   * completes with the parsed, validated answer in `output`, or fails with `output-schema`. Codex
   * is given it natively (`exec --output-schema`, or `turn/start`'s `outputSchema`), and the model
   * as a strict `json_schema` format: OpenAI's models take it only when every object lists all its
   * properties in `required` and has `additionalProperties: false` (no `.optional()` fields in a
   * zod object; `.nullable()` instead), else the run fails with `agent-error`.
   */
  readonly outputSchema?: OutputSchema<Output> | undefined;
  /** Which thread the run uses (see {@link CodexSessionChoice}); resuming gives `session.resumed`. Default `'new'`. */
  readonly session?: CodexSessionChoice;
  /** More folders Codex may write to (`--add-dir`). */
  readonly additionalDirectories?: readonly string[];
  /**
   * Pass `--skip-git-repo-check`: without it Codex refuses to start outside a Git repository.
   * Default true, because the caller chose the folder; `false` keeps Codex's check.
   */
  readonly skipGitRepoCheck?: boolean;
  /**
   * How the run talks to Codex. `'exec'` (default): `codex exec --experimental-json`, which prints
   * whole messages. `'app-server'`: a one-prompt session over `codex app-server` (see
   * `codexSession`), whose text streams as deltas; `additionalDirectories`, `skipGitRepoCheck` and
   * a `session` of `'last'` are `exec`'s only. A run with `permission` or an image goes over
   * `app-server` (`exec` cannot ask, and takes images only as files): `'exec'` with either is a
   * `TypeError`.
   */
  readonly transport?: 'exec' | 'app-server';
}

/**
 * Options of `codexSession`: `runCodex`'s without the prompt, and who answers Codex's approval
 * requests. A session opens a new thread, or resumes one by id (`{ resume }`). In a session,
 * `idleTimeoutMs` counts only while a turn runs and aborts that turn; `gracePeriodMs` also bounds
 * how long an abort, and the exit after the last turn, may take.
 *
 * `permission` answers Codex's approval requests (a command, a file change, more sandbox
 * permissions) through the session's permission channel: `permission.requested` with tool
 * `command_execution` (kind `execute`) or `file_change` (kind `edit`), the `toolCallId` of the
 * item's `tool.call`. Codex asks only as its `approvalPolicy` says: with `permission` and no
 * `approvalPolicy`, the session's is `untrusted` (Codex asks before every command it does not
 * know to be read-only); `on-request` asks only when the model asks to leave the `sandbox`;
 * `never` never asks. Without `permission`, what Codex asks is denied (`deny-all`), and said in the
 * stream; Codex's configuration decides whether it asks. `allow-always` is Codex's `acceptForSession` where it offers it (else one
 * `accept`); a deny (`deny-always` too) is `decline`: Codex goes on with the turn.
 *
 * `mcpServers` and `tools` become Codex's `mcp_servers` settings (`-c`; header values in its
 * environment, never in its arguments; the user's own configured servers stay). With
 * `permission`, Codex asks before every MCP tool call, as tool `mcp__<server>__<tool>`
 * (`allow` or `deny`); without it, a `trust`ed server's tools (the host tools' among them) run
 * without asking, and other servers' as Codex's configuration says.
 */
export interface CodexSessionOptions extends Omit<ProcessOptions, 'stdin'>, CodexOwnOptions, PermissionOptions, ConversationOptions, ToolOptions, WatchOptions {
  /** The thread: a new one (default), or `{ resume: id }`. */
  readonly session?: 'new' | { readonly resume: string };
}

/** Codex's own options shared by runs and sessions, besides the process options and the session. */
export interface CodexOwnOptions {
  /**
   * The Codex executable. Default: the native binary of the `@openai/codex` package that this
   * library resolves (or the one behind the `codex` on PATH), else `codex` on PATH. The native
   * binary is run directly, not the package's Node launcher: on Node 20 the launcher is a second
   * process that forwards only some signals.
   */
  readonly executable?: string;
  /** Arguments placed before Codex's own. */
  readonly executableArgs?: readonly string[];
  /** `--model`. */
  readonly model?: string;
  /** The model provider's id in Codex's configuration (`model_provider`), e.g. a custom provider of `config.toml`. */
  readonly provider?: string;
  /** `--sandbox`. */
  readonly sandbox?: CodexSandboxMode;
  /** `approval_policy`. */
  readonly approvalPolicy?: CodexApprovalPolicy;
  /** `model_reasoning_effort`, e.g. `low`, `medium`, `high`. */
  readonly reasoningEffort?: string;
  /**
   * Configuration overrides, one `-c key=value` each, values written as TOML. Nested objects
   * become dotted keys: `{ model_providers: { proxy: { base_url: '…' } } }` is
   * `-c model_providers.proxy.base_url="…"`; a key may also be a dotted path itself.
   */
  readonly config?: { readonly [key: string]: TomlValue };
  /** Do not record the thread on disk (`--ephemeral`); it cannot be resumed then. */
  readonly ephemeral?: boolean;
  /**
   * `false` switches off Codex's own retries of model requests and streams (the provider's
   * `request_max_retries` and `stream_max_retries` set to 0). Codex allows that only for a custom
   * provider, so `provider` must name one; its built-in providers cannot be changed. Default:
   * Codex's settings. An unreachable endpoint is retried without end whatever this says: give the
   * run a `timeoutMs` or `idleTimeoutMs`.
   */
  readonly agentRetry?: boolean;
  /** More arguments for `codex exec`, placed after the ones built from these options. */
  readonly extraArgs?: readonly string[];
}

/** A value of Codex's configuration, as the schema checks it. */
const toml: z.ZodType<TomlValue, TomlValue> = z.lazy(() => z.union([z.string(), z.number(), z.boolean(), z.array(toml), z.record(z.string(), toml)], { error: 'must be TOML values (strings, numbers, booleans, arrays, objects)' }));

/** What a caller may choose of a Codex run or session, the session aside (the fleet's run spec). */
const CALLER = {
  model: text().optional(),
  provider: text().optional(),
  sandbox: oneOf(CODEX_SANDBOX_MODES).optional(),
  approvalPolicy: oneOf(CODEX_APPROVAL_POLICIES).optional(),
  reasoningEffort: text().optional(),
  ephemeral: flag().optional(),
  agentRetry: flag().optional(),
};

/** What only the host chooses: the program, its configuration, and what is passed to it besides. */
const HOST = {
  executable: text().optional(),
  executableArgs: texts().optional(),
  config: z.record(z.string(), toml, { error: 'must be an object of TOML values' }).optional(),
  extraArgs: texts().optional(),
};

const RUN_SESSION = z.union([z.enum(['new', 'last']), z.strictObject({ resume: text() })], { error: "must be 'new', 'last' or { resume }" });
const SESSION_SESSION = z.union([z.literal('new'), z.strictObject({ resume: text() })], { error: "must be 'new' or { resume } (a session cannot take the 'last' thread)" });
const _OWN = z.strictObject({ ...CALLER, ...HOST });
const PROCESS = { ...CALLER_PROCESS_OPTIONS, ...HOST_PROCESS_OPTIONS, stderrLines: z.unknown().optional() };

/** The schemas of Codex's options: a run's, a session's, and a fleet run spec's. */
export const CODEX_OPTIONS = {
  run: z.strictObject({ ...TOOL_OPTIONS, ...WATCH_OPTIONS,
    ...CALLER,
    ...HOST,
    ...PROCESS,
    ...RUN_PERMISSION_OPTIONS,
    ...OUTPUT_OPTIONS,
    prompt: PROMPT,
    session: RUN_SESSION.optional(),
    additionalDirectories: texts().optional(),
    skipGitRepoCheck: flag().optional(),
    transport: z.enum(['exec', 'app-server'], { error: "must be 'exec' or 'app-server'" }).optional(),
  }),
  session: z.strictObject({ ...TOOL_OPTIONS, ...WATCH_OPTIONS, ...CALLER, ...HOST, ...PROCESS, ...SESSION_PERMISSION_OPTIONS, ...SESSION_CONVERSATION_OPTIONS, session: SESSION_SESSION.optional() }),
  spec: z.strictObject({ prompt: SPEC_PROMPT, ...SPEC_OUTPUT_OPTIONS, ...SPEC_TOOL_OPTIONS, ...CALLER_PROCESS_OPTIONS, ...CALLER, session: RUN_SESSION.optional() }),
};

/** What a fleet caller may choose of a Codex run: a run spec's options (`{ agent: 'codex', options }`). */
export type CodexRunSpecOptions = SpecPromptOptions & Pick<RunCodexOptions, 'cwd' | 'timeoutMs' | 'idleTimeoutMs' | 'model' | 'provider' | 'sandbox' | 'approvalPolicy' | 'reasoningEffort' | 'ephemeral' | 'agentRetry' | 'session'>;

// A run spec's options are exactly what its schema checks.
type _CodexRunSpecMatchesItsSchema = Holds<SameOptions<CodexRunSpecOptions, z.input<typeof CODEX_OPTIONS.spec>>>;

// The declared options are exactly what the schema checks (see `SameOptions`): change both together.
type _CodexOptionsMatchTheirSchema = Holds<SameOptions<CodexOwnOptions, z.input<typeof _OWN>>>;
