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
 * What Qwen Code may do without asking (`--approval-mode`). A headless run cannot ask: without
 * `yolo` its shell and file-writing tools are not even offered to the model; `auto` (its default)
 * asks the model to classify each risky call, `plan` only reads.
 */
export const QWEN_APPROVAL_MODES = ['plan', 'default', 'auto-edit', 'auto', 'yolo'] as const;
/** One of {@link QWEN_APPROVAL_MODES}. */
export type QwenApprovalMode = (typeof QWEN_APPROVAL_MODES)[number];

/**
 * Which session a Qwen Code run uses: `'new'` (default), `{ id }` (a new session with this UUID,
 * `--session-id`), `'latest'` (the latest session of `cwd`, `--continue`) or `{ resume }` (a
 * session of `cwd` by its id, `--resume`). Sessions are kept per working folder: resume from the
 * same `cwd`.
 */
export type QwenSessionChoice = 'new' | 'latest' | { readonly id: string } | { readonly resume: string };

/**
 * The longest prompt a run takes, in bytes: it goes to Qwen Code as one argument
 * (`--prompt=<text>`), and Linux refuses a longer one (`MAX_ARG_STRLEN`, 128 KiB).
 */
export const QWEN_MAX_PROMPT_BYTES = 128 * 1024 - '--prompt='.length - 1;

/**
 * Options of `runQwen`. Process options (`cwd`, `env`, `gracePeriodMs`, ...) are passed through.
 * `mcpServers` and host `tools` go into the run's own settings (the user's servers left out): a
 * trusted server's tools run without asking, an untrusted one's calls are declined unless
 * `approvalMode: 'yolo'` (a run with `permission` is an ACP session that asks for each call).
 * Their calls are named `mcp__<server>__<tool>`.
 */
export interface RunQwenOptions<Output = unknown> extends Omit<ProcessOptions, 'stdin' | 'stderrLines'>, QwenOwnOptions, RunPermissionOptions, ToolOptions, WatchOptions {
  /**
   * The prompt: a string, or parts in order (text, images, files: {@link Prompt}). Images and
   * files are read when the run is made (a `TypeError` names a part that cannot be read or is too
   * big), so every subscription sends the same bytes. Files go into the `--prompt=` argument
   * (`<file>` blocks; at most 128 KiB in all); a run with an image is a one-prompt ACP session
   * (`qwen --acp`, image blocks, its model said to take images), so `session` must be `'new'`.
   */
  readonly prompt: Prompt;
  /**
   * The schema the answer must satisfy (a zod schema types `terminal.completed.output`): the run
   * completes with the parsed, validated answer in `output`, or fails with `output-schema`.
   * Native (`--json-schema`): the model answers through Qwen Code's `structured_output` tool, whose
   * arguments are validated once more; prose is `output-schema`. Its root must accept an object (a
   * `TypeError` otherwise). A run over ACP (`permission`, an image) is told it in the prompt.
   */
  readonly outputSchema?: OutputSchema<Output> | undefined;
  /** Which session the run uses (see {@link QwenSessionChoice}); resuming gives `session.resumed`. Default `'new'`. */
  readonly session?: QwenSessionChoice;
}

/**
 * Options of `qwenSession` (`qwen --acp`): `runQwen`'s without the prompt (the session: a new one,
 * or one it keeps, loaded), and what an ACP client decides: the agent's permission requests, the
 * client's file system. MCP servers (`mcpServers`, and the server of host `tools`) go into the
 * session's settings, as for a run; a trusted one's tools run without asking when there is no
 * `permission`, and with one every call is asked.
 */
export interface QwenSessionOptions extends Omit<ProcessOptions, 'stdin' | 'stderrLines'>, QwenOwnOptions, PermissionOptions, ConversationOptions, ToolOptions, WatchOptions {
  /** `fs/read_text_file` and `fs/write_text_file` for the agent; without them it has no client file system. */
  readonly handlers?: AcpClientHandlers;
  /**
   * `{ resume }`: the session of `cwd` with this id, loaded (ACP `session/load`: Qwen Code keeps its
   * sessions per working folder) and announced with `session.resumed`; its history is not said
   * again. Default: a new session.
   */
  readonly session?: QwenSessionResume;
}

/** Which session a Qwen Code session loads: `{ resume }`, a session of `cwd` by its id. */
export interface QwenSessionResume {
  readonly resume: string;
}

/** Qwen Code's own options, besides the process options and the session. */
export interface QwenOwnOptions {
  /** The Qwen Code executable. Default `qwen` (found on PATH). */
  readonly executable?: string;
  /**
   * Arguments placed before Qwen Code's own, e.g. `executable: process.execPath, executableArgs:
   * [<@qwen-code/qwen-code>/cli.js]` (one process: the `qwen` launcher starts the CLI as a second one).
   */
  readonly executableArgs?: readonly string[];
  /** `--model`: the model id, sent to the provider as it is. */
  readonly model?: string;
  /** `--approval-mode`. Default Qwen Code's (`auto`: no shell tool in a headless run). */
  readonly approvalMode?: QwenApprovalMode;
  /**
   * `false` makes Qwen Code retry a failing model request as little as it allows (its HTTP
   * client's retries off, `model.generationConfig.maxRetries: 0`); it still tries a request 7
   * times over about 70 s (a setting for that is not offered): bound such runs with `timeoutMs`.
   * Default: its settings.
   */
  readonly agentRetry?: boolean;
  /** More arguments, placed after the ones built from these options (e.g. `--auth-type`, `--max-wall-time`). */
  readonly extraArgs?: readonly string[];
}

/** What a caller may choose of a Qwen Code run, the session aside (the fleet's run spec). */
const CALLER = {
  model: text().optional(),
  approvalMode: oneOf(QWEN_APPROVAL_MODES).optional(),
  agentRetry: flag().optional(),
};

/** What only the host chooses: the program and what is passed to it besides. */
const HOST = {
  executable: text().optional(),
  executableArgs: texts().optional(),
  extraArgs: texts().optional(),
};

const RUN_PROMPT = PROMPT.refine((prompt) => typeof prompt !== 'string' || Buffer.byteLength(prompt) <= QWEN_MAX_PROMPT_BYTES, {
  error: `must be at most ${String(QWEN_MAX_PROMPT_BYTES)} bytes (it is one argument of Qwen Code's)`,
});
const RUN_SESSION = z
  .union([z.enum(['new', 'latest']), z.strictObject({ id: text() }), z.strictObject({ resume: text() })], { error: "must be 'new', 'latest', { id } or { resume }" })
  .optional();
const _OWN = z.strictObject({ ...CALLER, ...HOST });
const PROCESS = { ...CALLER_PROCESS_OPTIONS, ...HOST_PROCESS_OPTIONS };

/** The schemas of Qwen Code's options: a run's, a session's, and a fleet run spec's. */
export const QWEN_OPTIONS = {
  run: z.strictObject({ ...TOOL_OPTIONS, ...WATCH_OPTIONS, ...CALLER, ...HOST, ...PROCESS, ...RUN_PERMISSION_OPTIONS, ...OUTPUT_OPTIONS, prompt: RUN_PROMPT, session: RUN_SESSION }),
  session: z.strictObject({
    ...TOOL_OPTIONS, ...WATCH_OPTIONS,
    ...CALLER,
    ...HOST,
    ...PROCESS,
    ...SESSION_PERMISSION_OPTIONS,
    ...SESSION_CONVERSATION_OPTIONS,
    handlers: z.unknown().optional(),
    session: z.strictObject({ resume: text() }, { error: 'must be { resume }' }).optional(),
  }),
  spec: z.strictObject({ prompt: SPEC_PROMPT, ...SPEC_OUTPUT_OPTIONS, ...SPEC_TOOL_OPTIONS, ...CALLER_PROCESS_OPTIONS, ...CALLER, session: RUN_SESSION }),
};

/** What a fleet caller may choose of a Qwen Code run: a run spec's options (`{ agent: 'qwen', options }`). */
export type QwenRunSpecOptions = SpecPromptOptions & Pick<RunQwenOptions, 'cwd' | 'timeoutMs' | 'idleTimeoutMs' | 'model' | 'approvalMode' | 'agentRetry' | 'session'>;

// A run spec's options are exactly what its schema checks.
type _QwenRunSpecMatchesItsSchema = Holds<SameOptions<QwenRunSpecOptions, z.input<typeof QWEN_OPTIONS.spec>>>;

// The declared options are exactly what the schema checks (see `SameOptions`): change both together.
type _QwenOptionsMatchTheirSchema = Holds<SameOptions<QwenOwnOptions, z.input<typeof _OWN>>>;
