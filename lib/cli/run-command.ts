import { basename } from 'node:path';
import { parseArgs } from 'node:util';
import type { Observable } from 'rxjs';
import { claudeOutputToMessages } from '../agents/claude/pipeline.js';
import { piOutputToMessages } from '../agents/pi/pipeline.js';
import { PI_THINKING_LEVELS, type PiSession, type PiThinkingLevel } from '../agents/pi/options.js';
import type { CliMessage } from '../messages.js';
import { runClaudeCode } from '../sources/run-claude-code.js';
import { runPi } from '../sources/run-pi.js';
import { replayFile } from './replay.js';

export const AGENTS = ['pi', 'claude'] as const;
export type AgentName = (typeof AGENTS)[number];

export const RUN_USAGE = `usage: agent-rx run [options] <prompt>

Runs a coding agent and shows its messages as they stream; exit code 0 when the run
completed, 1 when it failed, 130 when interrupted with Ctrl-C (the agent is stopped).

options:
  --agent <pi|claude>     which agent CLI (default pi)
  --provider <name>       pi's provider
  --model <id>            the model
  --thinking <level>      pi's thinking level: ${PI_THINKING_LEVELS.join(', ')}
  --session <s>           pi: new, none, continue or an id; claude: new, continue or an id to resume
  --cwd <dir>             where the agent works (default: here)
  --executable <path>     the agent executable (default: pi or claude on PATH)
  --allowed-tools <list>  claude: tools allowed without asking, comma-separated
  --no-agent-retry        switch off the agent's own retries
  --grace <ms>            how long the agent may take to stop before it is killed (default 2000)
  --json                  one message per line (NDJSON), for jq and logs
  --replay <file>         replay a recorded stdout file of the agent through the same pipeline
                          (offline; no agent runs; the prompt is optional)
  --no-color              no colours (also: NO_COLOR, or when stdout is not a terminal)
  -h, --help              this text
`;

/** What the command line asked for, or why it cannot be done. */
export type RunRequest =
  | {
      readonly kind: 'run';
      readonly agent: AgentName;
      readonly prompt: string;
      readonly json: boolean;
      readonly color: boolean | undefined;
      readonly replay: string | undefined;
      readonly source: () => Observable<CliMessage>;
    }
  | { readonly kind: 'help' }
  | { readonly kind: 'usage-error'; readonly message: string };

// Parses `run`'s arguments with node:util's parseArgs; never throws on bad input.
export function parseRunArgs(argv: readonly string[]): RunRequest {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        agent: { type: 'string', default: 'pi' },
        provider: { type: 'string' },
        model: { type: 'string' },
        thinking: { type: 'string' },
        session: { type: 'string' },
        cwd: { type: 'string' },
        executable: { type: 'string' },
        'allowed-tools': { type: 'string' },
        'no-agent-retry': { type: 'boolean', default: false },
        grace: { type: 'string' },
        json: { type: 'boolean', default: false },
        replay: { type: 'string' },
        'no-color': { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (error) {
    return { kind: 'usage-error', message: error instanceof Error ? error.message : String(error) };
  }
  const { values, positionals } = parsed;
  if (values.help) return { kind: 'help' };
  const agent = values.agent;
  if (!isAgent(agent)) return { kind: 'usage-error', message: `--agent must be one of ${AGENTS.join(', ')}; got ${agent}` };
  const prompt = positionals.join(' ').trim();
  const replay = values.replay;
  if (prompt === '' && replay === undefined) return { kind: 'usage-error', message: 'a prompt is needed' };
  if (values.thinking !== undefined && !(PI_THINKING_LEVELS as readonly string[]).includes(values.thinking)) {
    return { kind: 'usage-error', message: `--thinking must be one of ${PI_THINKING_LEVELS.join(', ')}` };
  }
  const grace = values.grace === undefined ? undefined : Number(values.grace);
  if (grace !== undefined && (!Number.isFinite(grace) || grace < 0)) return { kind: 'usage-error', message: '--grace must be a number of ms' };
  const common = {
    // A replay needs no prompt; the sources still require one.
    prompt: prompt === '' ? '(replay)' : prompt,
    ...(values.executable === undefined ? {} : { executable: values.executable }),
    ...(values.model === undefined ? {} : { model: values.model }),
    ...(values.cwd === undefined ? {} : { cwd: values.cwd }),
    ...(grace === undefined ? {} : { gracePeriodMs: grace }),
    ...(values['no-agent-retry'] ? { agentRetry: false } : {}),
  };
  const session = values.session;
  const resuming = session !== undefined && session !== 'new' && session !== 'none';
  let source: () => Observable<CliMessage>;
  if (replay !== undefined) {
    const toMessages = agent === 'pi' ? piOutputToMessages({ resuming }) : claudeOutputToMessages({ resuming });
    source = () => replayFile(replay).pipe(toMessages);
  } else if (agent === 'pi') {
    const options = {
      ...common,
      ...(values.provider === undefined ? {} : { provider: values.provider }),
      ...(values.thinking === undefined ? {} : { thinking: values.thinking as PiThinkingLevel }),
      ...(session === undefined ? {} : { session: piSession(session) }),
    };
    source = () => runPi(options);
  } else {
    const tools = values['allowed-tools']?.split(',').map((tool) => tool.trim()).filter((tool) => tool !== '');
    const options = {
      ...common,
      ...(tools === undefined ? {} : { allowedTools: tools }),
      ...(session === undefined || session === 'new' ? {} : { session: session === 'continue' ? ('continue' as const) : { resume: session } }),
    };
    source = () => runClaudeCode(options);
  }
  // Build once now, so that invalid options are reported as usage errors, not at subscribe time.
  try {
    source();
  } catch (error) {
    return { kind: 'usage-error', message: error instanceof Error ? error.message : String(error) };
  }
  return { kind: 'run', agent, prompt, json: values.json, color: values['no-color'] ? false : undefined, replay, source };
}

function isAgent(value: string): value is AgentName {
  return (AGENTS as readonly string[]).includes(value);
}

function piSession(value: string): PiSession {
  if (value === 'new' || value === 'none' || value === 'continue') return value;
  return { id: value };
}

/** What the first line says runs: `pi (anthropic/claude)` or `replay of run.jsonl (pi)`. */
export function describeRun(request: Extract<RunRequest, { kind: 'run' }>): string {
  return request.replay === undefined ? request.agent : `replay of ${basename(request.replay)} (${request.agent})`;
}
