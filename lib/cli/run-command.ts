import { readFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Observable } from 'rxjs';
import { agentByName, AGENT_NAMES, isAgentName, type AgentName } from '../agent-table.js';
import type { CliMessage, JsonSchemaObject, PromptPart } from '../messages.js';
import { agentOutputToMessages } from '../operators/agent-output-to-messages.js';
import { outputContract, type OutputContract } from '../operators/output-schema.js';
import { fileBlock, promptContent } from '../operators/prompt-parts.js';
import { checkRunOutputWith } from '../operators/turn-output.js';
import { fileReader } from '../sources/prompt-files.js';
import type { SpecPrompt } from '../agents/shared/option-schemas.js';
import { runAgent, runInvocation } from '../sources/run-agent.js';
import { checkRunSpec, type RunSpec } from '../fleet/run-spec.js';
import { redisUrlProblem } from '../fleet/connection.js';
import { executableHelp } from './agent-help.js';
import { agentFlagHelp, agentFlagOptions, agentFlagValues } from './agent-flags.js';
import { directoryProblem } from './checks.js';
import { errorText } from './error-text.js';
import { parseDuration } from './duration.js';
import { fleetRun } from './fleet-run.js';
import { detectRecordingAgent, replayFile } from './replay.js';
import { parseArgsProblem } from './usage.js';
import { APPROVE_HELP, approvePolicy } from './approve.js';
import { MCP_CONFIG_HELP, readMcpConfig } from './mcp-config.js';
import type { PermissionCallback } from '../operators/permission-policy.js';

export const RUN_USAGE = `usage: agent-rx run [options] <prompt>
       agent-rx run [options] -        the prompt read from stdin (read too when no prompt is
                                       given and stdin is not a terminal)

Runs a coding agent and shows its messages as they stream. Exit code: 0 when the run
completed, 1 when it failed (a time limit that ran out included), 2 on a usage error. Ctrl-C
(SIGINT), SIGTERM or SIGHUP stops the agent and its tool processes first, then exits with 130,
143 or 129; a second signal ends at once.

options:
  --agent <${AGENT_NAMES.join('|')}>
                          which agent CLI (default pi; for --replay, the agent whose output the
                          recording's first lines are, else pi)
  --model <id>            the model
  --image <path>          an image for the agent (PNG, JPEG, GIF or WebP, at most 5 MB), after the
                          prompt; repeatable. Refused (exit 2) for an agent that cannot take one
  --file <path>           a text file for the agent (at most 1 MB), given with its path and content
                          after the prompt; repeatable
  --output-schema <file.json>
                          the answer must be JSON satisfying this JSON Schema: the run shows on
                          stderr, and at the end stdout gets the validated answer as JSON; an answer
                          that does not satisfy it fails the run (output-schema, its issues shown)
${MCP_CONFIG_HELP}${agentFlagHelp('run')}  --cwd <dir>             where the agent works (default: here)
${executableHelp()}  --no-agent-retry        switch off the agent's own retries
  --timeout <duration>    stop the agent when the whole run takes longer (the run fails: timeout)
  --idle-timeout <duration>
                          stop the agent when it prints nothing for this long (the run fails: timeout)
  --grace <duration>      how long the agent may take to stop before it is killed (default 2s)
${APPROVE_HELP}  --json                  one message per line (NDJSON), for jq and logs
  --replay <file>         replay a recorded stdout file of the agent through the same pipeline
                          (offline; no agent runs; the prompt is optional, and stdin is read
                          only for a prompt of -)
  --fleet <redis-url>     dispatch the run to the fleet's workers (agent-rx worker) instead of
                          running it here; the agent's executable and settings are the worker's;
                          --approve is applied on the worker (ask: the question comes here)
  --mcp-server <name>     with --fleet: an MCP server of the worker's (agent-rx worker
                          --mcp-config) for the run; repeatable
  --no-color              no colours (also: NO_COLOR, or when stdout is not a terminal)
  -h, --help              this text

Paths of --image, --file and --output-schema are taken from here (not --cwd); images and files
follow the prompt in the order given. With --json, stdout stays one message per line and the last
one (terminal.completed) holds the answer as \`output\`. With --fleet, images and files are read
here and sent with the run. With --replay, --output-schema checks the recorded answer.

durations: a number of ms (1500), or a number with a unit ms, s, m or h (500ms, 90s, 10m, 2h)
`;

/** An image or a file given on the command line, after the prompt: its part, and how it was given (`--image shot.png`). */
export interface Attachment {
  readonly part: Extract<PromptPart, { readonly path: string }>;
  readonly flag: string;
}

/** `--output-schema`: the file it was read from and the schema. */
export interface OutputSchemaFile {
  readonly path: string;
  readonly schema: JsonSchemaObject;
}

/** What the command line asked for, or why it cannot be done. */
export type RunRequest =
  | {
      readonly kind: 'run';
      readonly agent: AgentName;
      readonly prompt: string;
      readonly json: boolean;
      readonly color: boolean | undefined;
      readonly replay: string | undefined;
      /** The time options given to the run (only those on the command line). */
      readonly limits: RunLimits;
      readonly source: () => Observable<CliMessage>;
      /** The Redis URL of a fleet run. */
      readonly fleet?: string;
      /** A fleet run's spec, as dispatched. */
      readonly spec?: RunSpec;
      /** On a signal, besides `stopAllRuns()`: ends a fleet run in-band (cancelled, `stopped`). */
      readonly stop?: () => Promise<void>;
      /** What the user should know before the run starts (on stderr): a replay's agent was not recognised. */
      readonly notice?: string;
      /** `--image` and `--file`, in the order given. */
      readonly attachments: readonly Attachment[];
      /** `--output-schema`: stdout is for the validated answer (the run shows on stderr, unless `--json`). */
      readonly outputSchema?: OutputSchemaFile;
    }
  | { readonly kind: 'help' }
  | { readonly kind: 'usage-error'; readonly message: string }
  /** The prompt is stdin's: read it to its end, then parse again with it (`RunInput.stdin`). */
  | { readonly kind: 'read-stdin' };

/** What the command line's arguments may need besides themselves: stdin, for the prompt. */
export interface RunInput {
  /** Whether stdin is a terminal (default `true`: a prompt is never read from it unless it is `-`). */
  readonly stdinIsTerminal?: boolean;
  /** All of stdin, once read. */
  readonly stdin?: string;
  /** How `--approve ask` asks (on the terminal); without it, `ask` is a usage error. */
  readonly ask?: PermissionCallback;
}

/** `--grace`, `--timeout` and `--idle-timeout` as run options, in ms. */
export interface RunLimits {
  readonly gracePeriodMs?: number;
  readonly timeoutMs?: number;
  readonly idleTimeoutMs?: number;
}

/** The longest time limit a timer can hold (2^31 - 1 ms, about 24.8 days). */
const MAX_LIMIT_MS = 2 ** 31 - 1;
const DURATION_OPTIONS: ReadonlySet<string> = new Set(['--grace', '--timeout', '--idle-timeout']);
const DURATION_HINT = 'such as 5000 (ms), 90s, 10m or 2h';

/** The options `run` and `chat` share, as node:util's parseArgs declares them. */
export const AGENT_OPTIONS = {
  agent: { type: 'string', default: 'pi' },
  model: { type: 'string' },
  cwd: { type: 'string' },
  executable: { type: 'string' },
  'no-agent-retry': { type: 'boolean', default: false },
  grace: { type: 'string' },
  'idle-timeout': { type: 'string' },
  approve: { type: 'string' },
  'mcp-config': { type: 'string' },
  'no-color': { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

// Parses `run`'s arguments with node:util's parseArgs; never throws on bad input.
export function parseRunArgs(argv: readonly string[], input: RunInput = {}): RunRequest {
  let parsed;
  try {
    parsed = parseArgs({
      args: joinNegativeDurations(argv),
      allowPositionals: true,
      options: {
        ...AGENT_OPTIONS,
        ...agentFlagOptions('run'),
        // No default: a replay without --agent is of the agent its recording shows.
        agent: { type: 'string' },
        timeout: { type: 'string' },
        json: { type: 'boolean', default: false },
        replay: { type: 'string' },
        fleet: { type: 'string' },
        image: { type: 'string', multiple: true },
        file: { type: 'string', multiple: true },
        'output-schema': { type: 'string' },
        'mcp-server': { type: 'string', multiple: true },
      },
      tokens: true,
    });
  } catch (error) {
    return { kind: 'usage-error', message: parseArgsProblem(error) };
  }
  const { values, positionals, tokens } = parsed;
  if (values.help) return { kind: 'help' };
  const named = values.agent ?? 'pi';
  if (!isAgentName(named)) return { kind: 'usage-error', message: `--agent must be one of ${AGENT_NAMES.join(', ')}; got ${named}` };
  let agent: AgentName = named;
  const replay = values.replay;
  // `-` reads the prompt from stdin; so does a missing prompt when stdin is piped (not for a replay).
  const fromStdin = (positionals.length === 1 && positionals[0] === '-') || (positionals.length === 0 && replay === undefined && input.stdinIsTerminal === false);
  if (fromStdin && input.stdin === undefined) return { kind: 'read-stdin' };
  const prompt = fromStdin ? (input.stdin ?? '').trim() : positionals.join(' ').trim();
  if (fromStdin && prompt === '') return { kind: 'usage-error', message: 'the prompt read from stdin is empty' };
  if (prompt === '' && replay === undefined) return { kind: 'usage-error', message: 'a prompt is needed: as an argument, or - to read it from stdin' };
  const limits = parseLimits(values);
  if (typeof limits === 'string') return { kind: 'usage-error', message: limits };
  const permission = approvePolicy(values.approve, input.ask);
  if (typeof permission === 'object') return { kind: 'usage-error', message: permission.problem };
  const attachments = attachmentsOf(tokens);
  const attachmentProblem = attachments.find(({ part }) => part.path === '');
  if (attachmentProblem !== undefined) return { kind: 'usage-error', message: `${attachmentProblem.flag.trim()} needs a path` };
  let outputSchema: OutputSchemaFile | undefined;
  let contract: OutputContract | undefined;
  if (values['output-schema'] !== undefined) {
    const read = readOutputSchema(values['output-schema']);
    if (typeof read === 'string') return { kind: 'usage-error', message: read };
    ({ file: outputSchema, contract } = read);
  }
  const given = { attachments, ...(outputSchema === undefined ? {} : { outputSchema }) };
  let source: () => Observable<CliMessage>;
  let stop: (() => Promise<void>) | undefined;
  const fleet = values.fleet;
  if (fleet !== undefined) {
    const problem = redisUrlProblem(fleet);
    if (problem !== null) return { kind: 'usage-error', message: `--fleet ${problem}` };
    // What runs the agent is the worker's: flags that would choose it here are refused.
    for (const flag of ['executable', 'grace', 'replay'] as const) {
      if (values[flag] !== undefined) return { kind: 'usage-error', message: `--${flag} cannot be given with --fleet: it is the worker's to choose` };
    }
    if (values['mcp-config'] !== undefined) return { kind: 'usage-error', message: "--mcp-config cannot be given with --fleet: a fleet run's MCP servers are the worker's (serveRuns({ mcpServers }))" };
    const own = agentFlagValues(agent, values, 'run');
    if (typeof own === 'string') return { kind: 'usage-error', message: own };
    const { gracePeriodMs: _grace, ...times } = limits;
    // The worker cannot read the files named here: images go as their bytes, files as text.
    let specPrompt: SpecPrompt;
    try {
      specPrompt = fleetPrompt(prompt, attachments);
    } catch (error) {
      return { kind: 'usage-error', message: inFlags(errorText(error), attachments) };
    }
    const named = values['mcp-server'] === undefined ? {} : { mcpServers: values['mcp-server'] };
    const options = { prompt: specPrompt, ...flagged(values), ...times, ...own, ...named, ...(outputSchema === undefined ? {} : { outputSchema: outputSchema.schema }) };
    // A preset is the worker's to apply; `ask` makes the worker ask here, through the run's stream.
    const ask = typeof permission === 'function' ? permission : undefined;
    let spec: RunSpec;
    try {
      spec = checkRunSpec({ agent, options, ...(permission === undefined ? {} : { permission: ask === undefined ? permission : 'ask' }) });
    } catch (error) {
      return { kind: 'usage-error', message: errorText(error) };
    }
    const run = fleetRun(fleet, spec, ask);
    source = run.source;
    stop = run.stop;
    return { kind: 'run', agent, prompt, json: values.json, color: values['no-color'] ? false : undefined, replay, limits, source, fleet, spec, stop, ...given };
  }
  if (values['mcp-server'] !== undefined) return { kind: 'usage-error', message: "--mcp-server names a fleet worker's MCP server: it needs --fleet (here, give servers with --mcp-config)" };
  let notice: string | undefined;
  if (replay !== undefined) {
    const attached = attachments[0];
    if (attached !== undefined) return { kind: 'usage-error', message: `${attached.flag.split(' ')[0] ?? ''} cannot be given with --replay: a recording was prompted already` };
    // Checked before anything runs: a recording that cannot be read is a usage error.
    let detected;
    try {
      detected = detectRecordingAgent(replay);
    } catch (error) {
      return { kind: 'usage-error', message: `--replay ${replay} cannot be read: ${error instanceof Error ? error.message : String(error)}` };
    }
    if (values.agent === undefined) {
      agent = detected ?? 'pi';
      if (detected === null) notice = `no agent's output recognised in the first lines of ${replay}; replaying it as pi's (choose the agent with --agent)`;
    }
  } else if (values.cwd !== undefined && directoryProblem('--cwd', values.cwd) !== undefined) {
    return { kind: 'usage-error', message: directoryProblem('--cwd', values.cwd) ?? '' };
  }
  const own = agentFlagValues(agent, values, 'run');
  if (typeof own === 'string') return { kind: 'usage-error', message: own };
  // A replay runs nothing: no server is started.
  const mcpServers = values['mcp-config'] === undefined || replay !== undefined ? undefined : readMcpConfig(values['mcp-config']);
  if (typeof mcpServers === 'string') return { kind: 'usage-error', message: mcpServers };
  const definition = agentByName(agent);
  // A replay needs no prompt; the sources still require one.
  const options = {
    prompt: prompt === '' ? '(replay)' : attachments.length === 0 ? prompt : [prompt, ...attachments.map(({ part }) => part)],
    ...(outputSchema === undefined || replay !== undefined ? {} : { outputSchema: outputSchema.schema }),
    ...flagged(values),
    ...(mcpServers === undefined ? {} : { mcpServers }),
    ...(values.executable === undefined ? {} : { executable: values.executable }),
    ...limits,
    ...own,
    // A replay reads what was recorded: nobody is asked.
    ...(permission === undefined || replay !== undefined ? {} : { permission }),
  };
  // Checked now (the images and files read, each part checked for the agent), so that invalid
  // options are reported as usage errors, not at subscribe time. The run is cold: nothing starts yet.
  try {
    if (replay !== undefined) {
      const invocation = runInvocation(definition, options);
      const toMessages = agentOutputToMessages(definition.dialect({ resuming: 'resuming' in invocation && invocation.resuming }));
      // The recorded answer is checked as a run's would be.
      source = contract === undefined ? () => replayFile(replay).pipe(toMessages) : () => replayFile(replay).pipe(toMessages, checkRunOutputWith(contract));
    } else {
      const run$ = runAgent(definition, options);
      source = () => run$;
    }
  } catch (error) {
    return { kind: 'usage-error', message: inFlags(errorText(error), attachments) };
  }
  const run = { kind: 'run', agent, prompt, json: values.json, color: values['no-color'] ? false : undefined, replay, limits, source, ...given } as const;
  return notice === undefined ? run : { ...run, notice };
}

/** `--image` and `--file` in the order given, their paths made absolute here (they are not --cwd's). */
function attachmentsOf(tokens: readonly { readonly kind: string; readonly name?: string; readonly value?: string | undefined }[]): Attachment[] {
  return tokens.flatMap((token) => {
    if (token.kind !== 'option' || (token.name !== 'image' && token.name !== 'file')) return [];
    const given = token.value ?? '';
    const path = given === '' ? '' : resolve(given);
    return [{ part: { type: token.name, path }, flag: `--${token.name} ${given}` }];
  });
}

/**
 * A library message about the prompt's parts in the command line's words: `prompt[1]` (the part
 * after the prompt's text) is the flag that gave it (`--image shot.png`).
 */
function inFlags(message: string, attachments: readonly Attachment[]): string {
  return message.replace(/\bprompt\[(\d+)\]/g, (said, index: string) => attachments[Number(index) - 1]?.flag ?? said).replace("give it as { type: 'image', path }", 'give it with --image');
}

/** `--output-schema`'s file read as a JSON Schema zod can read, or what is wrong with it. */
function readOutputSchema(path: string): { readonly file: OutputSchemaFile; readonly contract: OutputContract } | string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return `--output-schema ${path} cannot be read${typeof code === 'string' ? ` (${code})` : ''}`;
  }
  let schema: unknown;
  try {
    schema = JSON.parse(text);
  } catch (error) {
    return `--output-schema ${path} is not JSON: ${error instanceof Error ? error.message : String(error)}`;
  }
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return `--output-schema ${path} must hold a JSON Schema object`;
  try {
    return { file: { path, schema: schema as JsonSchemaObject }, contract: outputContract(schema, `--output-schema ${path}`) };
  } catch (error) {
    return errorText(error);
  }
}

/** A fleet run's prompt: the text, then each image as its bytes (base64) and each file as a `<file>` text, read here. */
function fleetPrompt(prompt: string, attachments: readonly Attachment[]): SpecPrompt {
  if (attachments.length === 0) return prompt;
  const content = promptContent([prompt, ...attachments.map(({ part }) => part)], fileReader(undefined));
  return content.map((part) => (part.type === 'image' ? { type: 'image' as const, data: part.data, mimeType: part.mimeType } : part.type === 'file' ? fileBlock(part.path, part.text) : part.text));
}

/** The options every agent takes from the shared flags, a fleet caller's included: `--model`, `--cwd`, `--no-agent-retry`. */
function flagged(values: { readonly model?: string | undefined; readonly cwd?: string | undefined; readonly 'no-agent-retry'?: boolean | undefined }): Readonly<Record<string, unknown>> {
  return {
    ...(values.model === undefined ? {} : { model: values.model }),
    ...(values.cwd === undefined ? {} : { cwd: values.cwd }),
    ...(values['no-agent-retry'] === true ? { agentRetry: false } : {}),
  };
}

/** `--grace`, `--timeout` and `--idle-timeout` as run options in ms, or what is wrong with one. */
export function parseLimits(values: { readonly grace?: string | undefined; readonly timeout?: string | undefined; readonly 'idle-timeout'?: string | undefined }): RunLimits | string {
  const limits: Partial<Record<keyof RunLimits, number>> = {};
  for (const [flag, key, zeroAllowed] of [
    ['grace', 'gracePeriodMs', true],
    ['timeout', 'timeoutMs', false],
    ['idle-timeout', 'idleTimeoutMs', false],
  ] as const) {
    const text = values[flag];
    if (text === undefined) continue;
    const ms = parseDuration(text);
    if (ms === null || (!zeroAllowed && ms === 0)) {
      const what = zeroAllowed ? 'a duration' : 'a duration > 0';
      return `--${flag} must be ${what} ${DURATION_HINT}; got '${text}'`;
    }
    if (ms > MAX_LIMIT_MS) return `--${flag} must be at most ${MAX_LIMIT_MS} ms (about 24 days); got '${text}'`;
    limits[key] = ms;
  }
  return limits;
}

// parseArgs refuses `--grace -5` as ambiguous (the value looks like an option): hand such a value
// over as `--grace=-5`, so that the validator says what is wrong with it.
export function joinNegativeDurations(argv: readonly string[]): string[] {
  return joinDashValues(argv, DURATION_OPTIONS);
}

/**
 * Hands the value after one of `flags` over as `--flag=value` when it starts with a single dash
 * (`-5`, `-1s`, `-x`), which parseArgs would refuse as ambiguous, so that the flag's own check says
 * what is wrong with it. A value starting with `--` stays an option; after `--` nothing changes.
 */
export function joinDashValues(argv: readonly string[], flags: ReadonlySet<string>): string[] {
  const args: string[] = [];
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i] ?? '';
    const next = argv[i + 1];
    if (arg === '--') {
      args.push(...argv.slice(i));
      break;
    }
    if (flags.has(arg) && next !== undefined && /^-(?!-)./.test(next)) {
      args.push(`${arg}=${next}`);
      i += 1;
    } else {
      args.push(arg);
    }
  }
  return args;
}


/** What the first line says runs: `pi (anthropic/claude)` or `replay of run.jsonl (pi)`. */
export function describeRun(request: Extract<RunRequest, { kind: 'run' }>): string {
  if (request.fleet !== undefined) return `${request.agent} on the fleet`;
  return request.replay === undefined ? request.agent : `replay of ${basename(request.replay)} (${request.agent})`;
}
