import type { RunOverlay, SettingsOverlay } from '../process/overlay.js';
import type * as z from 'zod';
import type { MonoTypeOperatorFunction } from 'rxjs';
import type { CliMessage } from '../messages.js';
import type { Dialect } from '../operators/dialect.js';
import type { ProcessOptions } from '../process/options.js';
import type { SessionProtocol } from '../operators/session-protocol.js';
import type { PermissionPolicy } from '../operators/permission-policy.js';
import type { RunPrompt } from '../operators/prompt-parts.js';
import type { AgentBudget, AgentTelemetry } from './shared/watch-options.js';

export type { RunOverlay, SettingsOverlay };

/**
 * One agent CLI, as everything above the agents' folders sees it: a plain object made of data and
 * pure functions (its setup, which touches the file system, is the one field that is not pure).
 * `runAgent(definition, options)` and `agentSession(definition, options)` run any agent from it;
 * the command line, the fleet, the ACP server and the examples read the list of definitions
 * (`AGENTS`) and have no per-agent code of their own.
 *
 * - `options`: one zod schema per entry point, from which the call-time checks (a `TypeError`
 *   naming the option) and the fleet's run spec (the caller's part, strict) derive;
 * - `run` / `session`: the invocation, from checked options (argv, process options, what setup is
 *   needed), pure;
 * - `executable`: how its program is found when the caller names none (data for one shared lookup);
 * - `setup`: what a run or session needs made before it starts and removed after (a settings
 *   overlay, a home), and what it cleans up after the agent;
 * - `dialect` (with its tools' kinds and summaries) and `recognizesOutput`: how its output reads.
 *
 * @example
 * runAgent(AGENTS.pi, { prompt: 'Fix the failing test' }).subscribe(render); // what runPi does
 */
export interface AgentDefinition<Name extends string = string, RunOptions = never, SessionOptions = never, Setup = undefined, SpecOptions = Readonly<Record<string, unknown>>> {
  /** The name to choose it by (`--agent pi`, a run spec's `agent`). */
  readonly name: Name;
  /** The name people know it by, for messages. */
  readonly displayName: string;
  /** How its program is found when the options name none. */
  readonly executable: ExecutableLookup;
  /** Its options' schemas: a run's, a session's, and a run spec's (what a fleet caller may choose). */
  readonly options: AgentOptionSchemas<SpecOptions>;
  /**
   * A run's invocation, from options the run schema accepted and the prompt made ready from them
   * (`prompt`: its parts read and checked, its `outputSchema` made ready; `options.prompt` and
   * `options.outputSchema` are not to be read). It gives the prompt to its agent as text
   * (`runPromptText`, the schema's instruction appended unless the agent takes the schema
   * natively), or makes the run a one-prompt session (an image, or a permission). May throw
   * `TypeError` for a rule across options, or for a part it cannot take.
   */
  run(options: RunOptions, prompt: RunPrompt): RunInvocation<Setup, SessionOptions>;
  /** A session's invocation, from options the session schema accepted. */
  session(options: SessionOptions): SessionInvocation<Setup>;
  /** Its dialect: how its output becomes messages (`resuming`: the run continues a session). */
  dialect(options?: { readonly resuming?: boolean }): Dialect;
  /** Whether a line of stdout is one only this agent prints (its header, mostly): how a recording's agent is told. */
  recognizesOutput(line: string): boolean;
  /**
   * The options of a run that resumes the agent's session `sessionId` (a `session.started` id of an
   * earlier run): `session: { resume }`, pi's `session: { id }`. Absent: its runs cannot resume one.
   */
  resumeRun?(options: RunOptions, sessionId: string): RunOptions;
  /**
   * The options of a run whose system prompt has `text` appended, where its CLI takes such text
   * (pi's `appendSystemPrompt`). Absent: a caller that has system text puts it in the prompt.
   */
  appendSystemPrompt?(options: RunOptions, text: string): RunOptions;
  /** Its own flags on the command line (`agent-rx run`, `chat`, `acp`, `worker`), besides the ones every agent takes. */
  readonly flags: readonly AgentFlag[];
  /** What its runs and sessions need made before they start (`Setup` from the invocation). */
  readonly setup?: AgentSetup<Setup>;
  /**
   * Whether its runs and its sessions give the agent the MCP servers of their options
   * (`mcpServers`, with the server of host `tools` among them): where not, options that name any
   * are refused with a `TypeError`, never dropped.
   */
  readonly mcp?: { readonly runs: boolean; readonly sessions: boolean };
  /**
   * Where its CLI keeps a session's conversation, and how a new process resumes it: what a
   * session's `idleMs` needs (the conversation saved, the process ended, resumed by a later one,
   * in this host or another). Absent: its sessions cannot be put to sleep, and `idleMs` is refused
   * with a `TypeError`.
   */
  readonly conversation?: ConversationKeeping<SessionOptions>;
  /**
   * What it says and caps of its own spending: whether its usage carries what it cost in USD (a
   * `budget`'s `costUsd` then needs no `price`), and the options by which its CLI caps a run
   * itself, from a budget (Claude Code's `maxBudgetUsd`): a second line behind the library's.
   */
  readonly spending?: AgentSpending;
  /**
   * How its CLI is made to export its own OpenTelemetry to an OTLP/HTTP endpoint: the variables
   * and options that do it, given the run's or session's options. Absent: it exports none, and the
   * `telemetry` option is refused with a `TypeError`.
   */
  telemetry?(telemetry: AgentTelemetry, options: Readonly<Record<string, unknown>>): TelemetrySettings;
}

/** See {@link AgentDefinition.spending}. */
export interface AgentSpending {
  /** Its usage carries its cost, in USD. */
  readonly reportsCost: boolean;
  /** Its own options that cap what `budget` limits (set unless the caller set them). */
  caps?(budget: AgentBudget): Readonly<Record<string, unknown>>;
}

/** What turns an agent CLI's own telemetry on: variables for its environment, and options of its own (merged over the caller's). */
export interface TelemetrySettings {
  readonly env?: Readonly<Record<string, string>>;
  readonly options?: Readonly<Record<string, unknown>>;
}

/**
 * Where an agent CLI keeps a conversation, as data and pure functions: the folder of a session's
 * conversations, which of its files make up one conversation, and the options that resume it.
 * The files are read and written by the library (`takeSnapshot`, `restoreSnapshot`); a snapshot
 * restored under another working folder has that folder's path written in place of the old one.
 */
export interface ConversationKeeping<SessionOptions> {
  /**
   * The folder holding the conversations of a session with these options, whose process has the
   * environment `env` (the whole of it, `HOME` always set) and works in `cwd` (absolute); or why such a session keeps no
   * conversation (`{ refused }`: pi's `session: 'none'`), which refuses `idleMs`.
   */
  folder(options: SessionOptions, env: Readonly<Record<string, string | undefined>>, cwd: string): string | { readonly refused: string };
  /** Whether a file of that folder (its path from the folder, `/` between names) is part of the conversation `sessionId`. */
  holds(path: string, sessionId: string): boolean;
  /** The options of a session that resumes the conversation `sessionId` (pi `--session`, Claude Code `--resume`). */
  resume(options: SessionOptions, sessionId: string): SessionOptions;
}

/**
 * A flag of one agent on the command line (`--thinking high`): the options it sets. The command
 * line knows every agent's flags from their definitions; a flag given to an agent that has not got
 * it is a usage error.
 */
export interface AgentFlag {
  /** The flag's name, without its dashes (`thinking`). */
  readonly name: string;
  /** Its value in the help (`<level>`). */
  readonly value: string;
  /** What it does for this agent, for the help (`its thinking level: off, minimal, …`). */
  readonly help: string;
  /** `run`: runs only (`--session`); `both`: runs and sessions. */
  readonly takes: 'run' | 'both';
  /** The options its value sets (`{ thinking: 'high' }`), or what is wrong with the value. */
  options(value: string): Readonly<Record<string, unknown>> | string;
}

/** The schemas of an agent's options. */
export interface AgentOptionSchemas<SpecOptions = Readonly<Record<string, unknown>>> {
  /** A run's options (`runPi`'s), strict: an unknown option is refused. */
  readonly run: z.ZodType;
  /** A session's options (`piSession`'s), strict. */
  readonly session: z.ZodType;
  /**
   * What a caller may choose of a run dispatched to a fleet worker (the prompt, the model, the
   * session, tool lists, `cwd` as a request, time limits): a strict object, so that what runs the
   * agent (executable, arguments, environment) cannot be named.
   */
  readonly spec: z.ZodType<{ [K in keyof SpecOptions]: SpecOptions[K] | undefined }>;
}

/**
 * How a run starts: a process ({@link ProcessRunInvocation}), or a one-prompt session
 * ({@link SessionRunInvocation}: Codex's app-server transport).
 */
export type RunInvocation<Setup = never, SessionOptions = never> = ProcessRunInvocation<Setup> | SessionRunInvocation<SessionOptions>;

/** A run that is one process: its program, arguments and process options, and what must be made first. */
export interface ProcessRunInvocation<Setup = never> {
  /** The program the caller named; `undefined`: found with the definition's {@link ExecutableLookup} at each subscription. */
  readonly executable: string | undefined;
  /** Its arguments (`executableArgs` first). */
  readonly args: readonly string[];
  /** Its process options (the prompt on stdin where it goes there). */
  readonly processOptions: ProcessOptions;
  /** The run continues an earlier session (it is announced with `session.resumed`). */
  readonly resuming: boolean;
  /** What the agent's {@link AgentSetup} must make before the process starts. */
  readonly setup?: Setup;
}

/** A run that is a one-prompt session of the same agent: the session's options and the prompt. */
export interface SessionRunInvocation<SessionOptions> {
  readonly asSession: { readonly options: SessionOptions; readonly prompt: RunPrompt };
}

/** How a session starts: as a run does, plus the protocol that drives its turns. */
export interface SessionInvocation<Setup = never> {
  /** The program the caller named; `undefined`: found at each subscription. */
  readonly executable: string | undefined;
  /** Its arguments (`executableArgs` first; the protocol's own follow them). */
  readonly args: readonly string[];
  /** Its process options (stdin stays the session's). */
  readonly processOptions: Omit<ProcessOptions, 'stdin'>;
  /** The session continues an earlier one. */
  readonly resuming: boolean;
  /** How its interactive mode is driven. */
  readonly protocol: SessionProtocol<unknown>;
  /** The dialect that maps its content, when it is not the agent's run dialect (an ACP agent's). */
  readonly dialect?: Dialect;
  /** How its permission requests are answered (default `deny-all`), and how long a callback or `ask` may take. */
  readonly permission?: PermissionPolicy;
  readonly permissionTimeoutMs?: number;
  /** What the agent's {@link AgentSetup} must make before the process starts. */
  readonly setup?: Setup;
}

/**
 * Where an agent's program is when the caller names none: a native binary an npm package ships
 * (tried first), else a name on PATH, else the bare name (so that starting it fails with ENOENT and
 * the run says how to install it). Data for one shared lookup (`findExecutable`).
 */
export interface ExecutableLookup {
  /** The program's names on PATH, in order (on Windows `.exe` and `.cmd` are tried too). */
  readonly names: readonly string[];
  /** A native binary in an npm package this library can resolve, or behind a launcher on PATH. */
  readonly native?: NativeBinary;
  /**
   * A JavaScript entry an npm package ships, run by this process's Node (`node <entry>`) rather than
   * through the package's launcher, which may add a process that does not pass signals on: from the
   * package this library resolves, or from the package whose launcher is found on PATH.
   */
  readonly script?: PackageScript;
}

/** A JavaScript file of an npm package: the package's name and the file's path inside it. */
export interface PackageScript {
  /** The package (`@qwen-code/qwen-code`). */
  readonly packageName: string;
  /** The file, relative to the package's folder (`cli.js`). */
  readonly entry: string;
}

/** The platform a native binary is for. */
export interface Platform {
  /** `process.platform`. */
  readonly os: string;
  /** `process.arch`. */
  readonly arch: string;
  /** Linux with musl rather than glibc. */
  readonly musl: boolean;
}

/** A native binary shipped in npm packages (Claude Code's, Codex's): where to look for it. */
export interface NativeBinary {
  /** The package that carries it (or whose platform package does). */
  readonly packageName: string;
  /** The platform package for a platform (e.g. `@openai/codex-linux-x64`), or `undefined` for none. */
  platformPackage(platform: Platform): string | undefined;
  /** Where the binary may be inside a package's folder (the platform package's, then the main one's), in order. */
  candidates(packageDir: string, platform: Platform): readonly string[];
  /** Only a native executable counts (an install stub that is a script does not). */
  readonly nativeOnly?: boolean;
  /** A folder of programs shipped beside the binary, put first on PATH (Codex's `rg`). */
  pathDir?(binary: string): string;
  /** Whether a program found on PATH (its real path) is the package's launcher, whose binary runs instead. */
  isLauncher(realPath: string): boolean;
}

/**
 * What an agent's runs and sessions need made before their process starts, or done after, from the
 * invocation's `setup` data. Each hook touches the file system: this is the one impure part of a
 * definition, kept in the agent's `setup/` folder.
 */
export interface AgentSetup<Setup> {
  /**
   * A configuration overlay the process is pointed at (a settings file changed for this run), or
   * `undefined` for none: made at each subscription in the host's temporary folder, removed once
   * the run's processes are gone (and with that folder when the host exits).
   */
  overlay?(setup: Setup): RunOverlay | undefined;
  /** Applied to a run's messages (a clean-up after the agent that reads them), or `undefined`. `env` is the run's environment. */
  messages?(setup: Setup, env: Readonly<Record<string, string | undefined>>): MonoTypeOperatorFunction<CliMessage> | undefined;
}

