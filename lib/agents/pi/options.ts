import type { OutputSchema, Prompt } from '../../messages.js';
import * as z from 'zod';
import type { ProcessOptions } from '../../process/options.js';
import type { ConversationOptions } from '../../sessions/conversation-snapshot.js';
import type { ToolOptions } from '../../tools/with-host-tools.js';
import { isHostTool, type HostTool } from '../../tools/host-tool.js';
import type { Holds, SameOptions } from '../../same-type.js';
import type { PermissionOptions, RunPermissionOptions } from '../../operators/permission-policy.js';
import { CALLER_PROCESS_OPTIONS, flag, HOST_PROCESS_OPTIONS, oneOf, PROMPT, OUTPUT_OPTIONS, SPEC_PROMPT, SPEC_OUTPUT_OPTIONS, SPEC_TOOL_OPTIONS, type SpecPromptOptions, RUN_PERMISSION_OPTIONS, SESSION_PERMISSION_OPTIONS, SESSION_CONVERSATION_OPTIONS, text, texts, TOOL_OPTIONS } from '../shared/option-schemas.js';
import { WATCH_OPTIONS, type WatchOptions } from '../shared/watch-options.js';

/** The thinking levels pi accepts (`--thinking`), for `thinking` in {@link RunPiOptions}. */
export const PI_THINKING_LEVELS = ['off', 'minimal', 'low', 'medium', 'high', 'xhigh'] as const;
/** One of {@link PI_THINKING_LEVELS}. */
export type PiThinkingLevel = (typeof PI_THINKING_LEVELS)[number];

/**
 * Which session a pi run uses:
 * - `'new'` (default): a new session, saved by pi;
 * - `'none'`: a new session that is not saved (`--no-session`);
 * - `'continue'`: the latest session of `cwd` (`--continue`);
 * - `{ id }`: the session with that id or id prefix (`--session`).
 */
export type PiSessionChoice = 'new' | 'none' | 'continue' | { readonly id: string };

/** Options of `runPi`. Process options (`cwd`, `env`, `gracePeriodMs`, ...) are passed through. */
export interface RunPiOptions<Output = unknown> extends Omit<ProcessOptions, 'stdin'>, PiOwnOptions, RunPermissionOptions, Omit<ToolOptions, 'tools'>, WatchOptions {
  /**
   * The prompt: a string, or parts in order (text, images, files: {@link Prompt}). Images and
   * files are read when the run is made (a `TypeError` names a part that cannot be read or is too
   * big), so every subscription sends the same bytes. Text and files (each inlined as a
   * `<file path="…">` block) go on stdin; a prompt with an image runs as a one-prompt session
   * (`pi --mode rpc`) whose `prompt` command carries the images as bytes. pi gives images only to
   * a model its `models.json` declares with `input: ["text", "image"]`: a text-only model gets a
   * note from pi in place of each image, and no error.
   */
  readonly prompt: Prompt;
  /**
   * The schema the answer must satisfy (a zod schema types `terminal.completed.output`): the run
   * completes with the parsed, validated answer in `output`, or fails with `output-schema`. pi has
   * no structured output: the schema is an instruction appended to the prompt (emulated).
   */
  readonly outputSchema?: OutputSchema<Output> | undefined;
}

/**
 * Options of `piSession`: `runPi`'s without the prompt (prompts are commands), and who allows its
 * tool calls. In a session, `idleTimeoutMs` counts only while a turn runs and aborts that turn;
 * `gracePeriodMs` also bounds how long an abort, and the exit after the last turn, may take.
 *
 * **Permissions.** pi itself never asks before it uses a tool. Without `permission` a session runs
 * every tool call, as pi does. With `permission`, pi loads an extension shipped with agent-rx
 * (`--extension`) that stops each tool call before it runs and asks the host (an
 * `extension_ui_request` of pi's RPC mode): the request is `permission.requested` with pi's tool
 * call id (the `tool.call`'s), its tool name (`bash`, `read`, …), kind, summary and input, and
 * options `allow` and `deny` (pi has no "always": `allow-always` is taken as `allow`, `deny-always`
 * as `deny`). A deny blocks the call: the model gets an error result for it and the turn goes on.
 * Tools of pi's other extensions are asked about too, MCP tools among them (`mcp__<server>__<tool>`).
 *
 * **MCP servers and host tools.** pi has no MCP of its own: with `mcpServers` (or host `tools`,
 * served as the server `host`), pi loads agent-rx's MCP extension (`--extension`), which connects
 * to each server with the official MCP client before the first prompt is taken (stdio: it starts
 * the server with pi's environment and the server's `env`, and ends it when pi exits; http:
 * streamable HTTP with the `headers`), and gives each of its tools to the model as a pi tool named
 * `mcp__<server>__<tool>`: the calls are `tool.call` / `tool.completed` / `tool.failed` of that
 * name, kind `other`. The servers reach the extension in a file of the run's own (mode 0600, in
 * the host's temporary folder, removed with the run), never in pi's argv. A server that cannot be
 * reached within 30 s is left out, said on pi's stderr. A call has no time limit of its own; an
 * abort cancels it (the MCP client's `notifications/cancelled`). `trust` changes nothing for pi,
 * which never asks on its own: without `permission` every call runs; with it every call is asked
 * about, whatever the server's `trust`. Only these servers: pi has no MCP configuration of the
 * user's that could join them (MCP tools that another of the user's pi extensions adds stay).
 *
 * **Prompt parts.** A `prompt`, `follow-up` or `steer` with `parts` goes as one RPC `prompt`
 * command: its text and files (inlined as `<file path="…">` blocks) in `message`, its images as
 * bytes in `images` (only for a model declared with `input: ["text", "image"]`; pi replaces them
 * with a note for a text-only model). A turn's `outputSchema` is an instruction appended to the
 * prompt, and the answer is validated at `turn.completed`.
 */
export interface PiSessionOptions extends Omit<ProcessOptions, 'stdin'>, PiOwnOptions, PermissionOptions, ConversationOptions, Omit<ToolOptions, 'tools'>, WatchOptions {}

/** pi's own options, besides the process options. */
export interface PiOwnOptions {
  /** The pi executable. Default `pi` (found on PATH). */
  readonly executable?: string;
  /** Arguments placed before pi's own, e.g. `executable: process.execPath, executableArgs: ['cli.js']`. */
  readonly executableArgs?: readonly string[];
  /** The model provider (`--provider`). Default: pi's. */
  readonly provider?: string;
  /** The model (`--model`). Default: pi's. */
  readonly model?: string;
  /** How hard the model thinks (`--thinking`): one of {@link PI_THINKING_LEVELS}; anything else throws `TypeError`. Default: pi's. */
  readonly thinking?: PiThinkingLevel;
  /** Which session the run uses (see {@link PiSessionChoice}); continuing one gives `session.resumed`. Default `'new'`. */
  readonly session?: PiSessionChoice;
  /** Where pi keeps and looks up sessions (`--session-dir`). */
  readonly sessionDir?: string;
  /**
   * The tools pi has. Names of its own tools keep only those (`--tools a,b`); an empty array
   * disables every tool (`--no-tools`). Tools made with `tool(...)` are the host's, served to pi as
   * for every agent (`ToolOptions.tools`); with host tools only, pi keeps all its own. With MCP
   * servers (host tools among them) the MCP extension keeps the named tools and adds the servers'
   * (pi's `--tools` would hide those too), so an empty array leaves the MCP tools only.
   */
  readonly tools?: readonly (string | HostTool)[];
  /** Replaces pi's system prompt. */
  readonly systemPrompt?: string;
  /** Appended to the system prompt. */
  readonly appendSystemPrompt?: string;
  /**
   * `false` switches off pi's own retries for this run (its auto-retry and the HTTP SDK's
   * retries), so that a caller-side retry is the only one. pi has no flag for it: the run gets a
   * temporary configuration directory that links to the real one (`PI_CODING_AGENT_DIR` or
   * `~/.pi/agent`) with `retry` overridden in `settings.json`; it is removed when the run ends.
   * Project settings (`.pi/settings.json` in `cwd`) still win over it. Default: pi's settings.
   */
  readonly agentRetry?: boolean;
  /** More arguments for pi, placed after the ones built from these options. */
  readonly extraArgs?: readonly string[];
}

/** What a caller may choose of a pi run (the fleet's run spec). */
const CALLER = {
  provider: text().optional(),
  model: text().optional(),
  thinking: oneOf(PI_THINKING_LEVELS).optional(),
  session: z.union([z.enum(['new', 'none', 'continue']), z.strictObject({ id: text() })], { error: "must be 'new', 'none', 'continue' or { id }" }).optional(),
  tools: z
    .array(z.union([z.string(), z.custom<HostTool>(isHostTool)]), { error: "must be an array of pi's tool names and tools made with tool(...)" })
    .optional(),
  systemPrompt: text().optional(),
  appendSystemPrompt: text().optional(),
  agentRetry: flag().optional(),
};

/** What only the host chooses: the program and what is passed to it besides. */
const HOST = {
  executable: text().optional(),
  executableArgs: texts().optional(),
  sessionDir: text().optional(),
  extraArgs: texts().optional(),
};

const _OWN = z.strictObject({ ...CALLER, ...HOST });
const PROCESS = { ...CALLER_PROCESS_OPTIONS, ...HOST_PROCESS_OPTIONS, stderrLines: z.unknown().optional() };

/** The schemas of pi's options: a run's, a session's, and a fleet run spec's. */
export const PI_OPTIONS = {
  run: z.strictObject({ ...TOOL_OPTIONS, ...WATCH_OPTIONS, ...CALLER, ...HOST, ...PROCESS, ...RUN_PERMISSION_OPTIONS, ...OUTPUT_OPTIONS, prompt: PROMPT }),
  session: z.strictObject({ ...TOOL_OPTIONS, ...WATCH_OPTIONS, ...CALLER, ...HOST, ...PROCESS, ...SESSION_PERMISSION_OPTIONS, ...SESSION_CONVERSATION_OPTIONS }),
  spec: z.strictObject({ prompt: SPEC_PROMPT, ...SPEC_OUTPUT_OPTIONS, ...SPEC_TOOL_OPTIONS, ...CALLER_PROCESS_OPTIONS, ...CALLER, tools: texts().optional() }),
};

/** What a fleet caller may choose of a pi run: a run spec's options (`{ agent: 'pi', options }`). */
export type PiRunSpecOptions = SpecPromptOptions &
  Pick<RunPiOptions, 'cwd' | 'timeoutMs' | 'idleTimeoutMs' | 'provider' | 'model' | 'thinking' | 'session' | 'systemPrompt' | 'appendSystemPrompt' | 'agentRetry'> & {
    /** Only these of pi's tools (`--tools a,b`); an empty array disables every tool. */
    readonly tools?: readonly string[] | undefined;
  };

// A run spec's options are exactly what its schema checks.
type _PiRunSpecMatchesItsSchema = Holds<SameOptions<PiRunSpecOptions, z.input<typeof PI_OPTIONS.spec>>>;

// The declared options are exactly what the schema checks (see `SameOptions`): change both together.
type _PiOptionsMatchTheirSchema = Holds<SameOptions<PiOwnOptions, z.input<typeof _OWN>>>;
