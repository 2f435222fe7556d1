import { parseArgs } from 'node:util';
import { AGENT_NAMES, AGENTS, isAgentName, type AgentName, type RunClaudeCodeOptions, type RunCodexOptions, type RunGeminiOptions, type RunPiOptions } from '../lib/index.js';

export type DemoAgent = AgentName;

/** The replay shown when no --transcript is given: a tool call between two bits of text. */
export const DEFAULT_TRANSCRIPTS: Readonly<Record<DemoAgent, string>> = {
  pi: 'tool_call_then_text',
  claude: 'claude-tool-partial',
  codex: 'codex-tool',
  gemini: 'gemini-tool',
};

export const DEFAULT_PROMPT = 'Run `echo hello` with bash, then tell me what it printed.';

export const USAGE = `usage: npm start -- [options] [prompt]

Runs a coding agent through agent-rx and shows its messages as they stream.
By default a bundled replay of a recorded run (offline, no API key, no agent needed).

  --agent <pi|claude|codex|gemini>
                        which agent (default pi)
  --transcript <name>   which recorded run to replay (examples/replay-agent/transcripts/<name>.jsonl)
  --real                run the real agent instead (\`pi\` or \`claude\` on PATH, Codex's
                        native binary; also: AGENT_RX_DEMO_REAL=1)
  --provider <name>     passed to pi
  --model <id>          passed to the agent (for the replay: same as --transcript)
  -h, --help            this text
`;

/** What the demo was asked to do. */
export type DemoRequest =
  | {
      readonly kind: 'run';
      readonly agent: DemoAgent;
      readonly real: boolean;
      readonly prompt: string;
      readonly provider?: string;
      readonly model?: string;
    }
  | { readonly kind: 'help' }
  | { readonly kind: 'usage-error'; readonly message: string };

export type DemoRun = Extract<DemoRequest, { kind: 'run' }>;

// Reads the command line and the environment; never throws on bad input.
export function parseDemoArgs(argv: readonly string[], env: NodeJS.ProcessEnv): DemoRequest {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        agent: { type: 'string', default: 'pi' },
        real: { type: 'boolean' },
        transcript: { type: 'string' },
        provider: { type: 'string' },
        model: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    return { kind: 'usage-error', message: error instanceof Error ? error.message : String(error) };
  }
  const { values, positionals } = parsed;
  if (values.help === true) return { kind: 'help' };
  const agent = values.agent;
  if (!isAgentName(agent)) return { kind: 'usage-error', message: `--agent must be one of ${AGENT_NAMES.join(', ')}; got ${agent}` };
  const real = values.real === true || env['AGENT_RX_DEMO_REAL'] === '1';
  if (real && values.transcript !== undefined) {
    return { kind: 'usage-error', message: '--transcript picks a replay; it does not go with --real' };
  }
  const prompt = positionals.join(' ').trim();
  const model = values.transcript ?? values.model ?? (real ? undefined : DEFAULT_TRANSCRIPTS[agent]);
  return {
    kind: 'run',
    agent,
    real,
    prompt: prompt === '' ? DEFAULT_PROMPT : prompt,
    ...(values.provider === undefined ? {} : { provider: values.provider }),
    ...(model === undefined ? {} : { model }),
  };
}

// The runPi options for a pi request: the real `pi`, or Node running the bundled replay script.
export function piOptionsFor(request: DemoRun, replayScript: string): RunPiOptions {
  const passed = {
    prompt: request.prompt,
    ...(request.provider === undefined ? {} : { provider: request.provider }),
    ...(request.model === undefined ? {} : { model: request.model }),
  };
  return request.real ? passed : { ...passed, executable: process.execPath, executableArgs: [replayScript] };
}

// The runClaudeCode options for a claude request: the real `claude`, or the bundled replay script.
export function claudeOptionsFor(request: DemoRun, replayScript: string): RunClaudeCodeOptions {
  const passed = { prompt: request.prompt, ...(request.model === undefined ? {} : { model: request.model }) };
  return request.real ? passed : { ...passed, executable: process.execPath, executableArgs: [replayScript] };
}

// The runCodex options for a codex request: the real Codex, or the bundled replay script.
export function codexOptionsFor(request: DemoRun, replayScript: string): RunCodexOptions {
  const passed = {
    prompt: request.prompt,
    ...(request.provider === undefined ? {} : { provider: request.provider }),
    ...(request.model === undefined ? {} : { model: request.model }),
  };
  return request.real ? passed : { ...passed, executable: process.execPath, executableArgs: [replayScript] };
}

// The runGemini options for a gemini request: the real `gemini`, or the bundled replay script. The
// real one may run commands (yolo): a headless run cannot ask, and without it has no shell tool.
export function geminiOptionsFor(request: DemoRun, replayScript: string): RunGeminiOptions {
  const passed = { prompt: request.prompt, approvalMode: 'yolo' as const, ...(request.model === undefined ? {} : { model: request.model }) };
  return request.real ? passed : { ...passed, executable: process.execPath, executableArgs: [replayScript] };
}

// One line saying what runs, for the top of the output.
export function describeAgent(request: DemoRun): string {
  const name = AGENTS[request.agent].displayName;
  if (request.real) {
    const model = [request.provider, request.model].filter((part) => part !== undefined).join('/');
    return `${name}${model === '' ? '' : ` (${model})`}`;
  }
  return `replay of a recorded ${name} run: ${request.model ?? DEFAULT_TRANSCRIPTS[request.agent]} (offline; --real runs ${request.agent})`;
}
