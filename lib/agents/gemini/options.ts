import type { OutputSchema, Prompt } from '../../messages.js';
import * as z from 'zod';
import type { ProcessOptions } from '../../process/options.js';
import type { ConversationOptions } from '../../sessions/conversation-snapshot.js';
import type { ToolOptions } from '../../tools/with-host-tools.js';
import type { Holds, SameOptions } from '../../same-type.js';
import type { AcpClientHandlers } from '../acp/client.js';
import type { PermissionOptions, RunPermissionOptions } from '../../operators/permission-policy.js';
import { RUN_PERMISSION_OPTIONS, SESSION_PERMISSION_OPTIONS, SESSION_CONVERSATION_OPTIONS, CALLER_PROCESS_OPTIONS, flag, HOST_PROCESS_OPTIONS, oneOf, PROMPT, OUTPUT_OPTIONS, SPEC_PROMPT, SPEC_OUTPUT_OPTIONS, SPEC_TOOL_OPTIONS, type SpecPromptOptions, text, texts, TOOL_OPTIONS } from '../shared/option-schemas.js';
import { WATCH_OPTIONS, type WatchOptions } from '../shared/watch-options.js';

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
export type GeminiSessionChoice = 'new' | 'latest' | { readonly id: string } | { readonly resume: string };

/**
 * Options of `runGemini`. Process options (`cwd`, `env`, `gracePeriodMs`, ...) are passed through.
 * `mcpServers` and host `tools` go into the run's own home's settings (the user's servers left
 * out): a trusted server's tools run without asking, an untrusted one's are offered to the model
 * only with `approvalMode: 'yolo'` (a run with `permission` is an ACP session that asks for each
 * call). Their calls are named `mcp__<server>__<tool>`.
 */
export interface RunGeminiOptions<Output = unknown> extends Omit<ProcessOptions, 'stdin' | 'stderrLines'>, GeminiOwnOptions, RunPermissionOptions, ToolOptions, WatchOptions {
  /**
   * The prompt: a string, or parts in order (text, images, files: {@link Prompt}). Images and
   * files are read when the run is made (a `TypeError` names a part that cannot be read or is too
   * big), so every subscription sends the same bytes. Files go into the text on stdin (`<file>`
   * blocks); a run with an image is a one-prompt ACP session (`gemini --acp`, image blocks), so
   * `session` must be `'new'`.
   */
  readonly prompt: Prompt;
  /**
   * The schema the answer must satisfy (a zod schema types `terminal.completed.output`): the run
   * completes with the parsed, validated answer in `output`, or fails with `output-schema`.
   * Emulated: Gemini CLI is told the schema after the prompt, and its final text is validated.
   */
  readonly outputSchema?: OutputSchema<Output> | undefined;
  /** Which session the run uses (see {@link GeminiSessionChoice}); resuming gives `session.resumed`. Default `'new'`. */
  readonly session?: GeminiSessionChoice;
}

/**
 * Options of `geminiSession` (`gemini --acp`): `runGemini`'s without the prompt and the session
 * (an ACP session is a new one), and what an ACP client decides: the agent's permission requests,
 * the client's file system. MCP servers (`mcpServers`, and the server of host `tools`) go at
 * `session/new`; a trusted one's calls are allowed by policy when there is no `permission`.
 */
export interface GeminiSessionOptions extends Omit<ProcessOptions, 'stdin' | 'stderrLines'>, GeminiOwnOptions, PermissionOptions, ConversationOptions, ToolOptions, WatchOptions {
  /** `fs/read_text_file` and `fs/write_text_file` for the agent; without them it has no client file system. */
  readonly handlers?: AcpClientHandlers;
}

/** Gemini CLI's own options, besides the process options and the session. */
export interface GeminiOwnOptions {
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

/** What a caller may choose of a Gemini CLI run, the session aside (the fleet's run spec). */
const CALLER = {
  model: text().optional(),
  approvalMode: oneOf(GEMINI_APPROVAL_MODES).optional(),
  agentRetry: flag().optional(),
};

/** What only the host chooses: the program and what is passed to it besides. */
const HOST = {
  executable: text().optional(),
  executableArgs: texts().optional(),
  skipTrust: flag().optional(),
  // Gemini CLI splits the flag's values at commas.
  includeDirectories: z.array(text().refine((dir) => !dir.includes(','), { error: 'cannot hold a path with a comma (Gemini CLI splits it there)' }), { error: 'must be an array of strings' }).optional(),
  extraArgs: texts().optional(),
};

const RUN_SESSION = z
  .union([z.enum(['new', 'latest']), z.strictObject({ id: text() }), z.strictObject({ resume: text() })], { error: "must be 'new', 'latest', { id } or { resume }" })
  .optional();
const _OWN = z.strictObject({ ...CALLER, ...HOST });
const PROCESS = { ...CALLER_PROCESS_OPTIONS, ...HOST_PROCESS_OPTIONS };

/** The schemas of Gemini CLI's options: a run's, a session's, and a fleet run spec's. */
export const GEMINI_OPTIONS = {
  run: z.strictObject({ ...TOOL_OPTIONS, ...WATCH_OPTIONS, ...CALLER, ...HOST, ...PROCESS, ...RUN_PERMISSION_OPTIONS, ...OUTPUT_OPTIONS, prompt: PROMPT, session: RUN_SESSION }),
  session: z.strictObject({ ...TOOL_OPTIONS, ...WATCH_OPTIONS, ...CALLER, ...HOST, ...PROCESS, ...SESSION_PERMISSION_OPTIONS, ...SESSION_CONVERSATION_OPTIONS, handlers: z.unknown().optional() }),
  spec: z.strictObject({ prompt: SPEC_PROMPT, ...SPEC_OUTPUT_OPTIONS, ...SPEC_TOOL_OPTIONS, ...CALLER_PROCESS_OPTIONS, ...CALLER, session: RUN_SESSION }),
};

/** What a fleet caller may choose of a Gemini CLI run: a run spec's options (`{ agent: 'gemini', options }`). */
export type GeminiRunSpecOptions = SpecPromptOptions & Pick<RunGeminiOptions, 'cwd' | 'timeoutMs' | 'idleTimeoutMs' | 'model' | 'approvalMode' | 'agentRetry' | 'session'>;

// A run spec's options are exactly what its schema checks.
type _GeminiRunSpecMatchesItsSchema = Holds<SameOptions<GeminiRunSpecOptions, z.input<typeof GEMINI_OPTIONS.spec>>>;

// The declared options are exactly what the schema checks (see `SameOptions`): change both together.
type _GeminiOptionsMatchTheirSchema = Holds<SameOptions<GeminiOwnOptions, z.input<typeof _OWN>>>;
