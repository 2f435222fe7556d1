import { parseArgs } from 'node:util';
import { AGENTS, type RunPiOptions } from '../../lib/index.js';

/** The replay run when no --transcript is given: a tool call between two bits of text. */
export const DEFAULT_TRANSCRIPT = 'tool_call_then_text';

/** The prompt the page starts with. */
export const DEFAULT_PROMPT = 'Run `echo hello` with bash, then tell me what it printed.';

export const USAGE = `usage: npm run web -- [options]

Serves a page that runs a coding agent through agent-rx and streams it to the browser (SSE).
By default the agent is a bundled replay of a recorded pi run (offline, no API key, no pi needed).

  --port <n>            port on 127.0.0.1 (also: PORT; default: any free port)
  --transcript <name>   which recorded run to replay (examples/replay-agent/transcripts/<name>.jsonl)
  --real                run the real \`pi\` on PATH instead (also: AGENT_RX_WEB_REAL=1)
  --provider <name>     passed to pi
  --model <id>          passed to pi
  --executable <path>   the pi executable for --real (default: pi on PATH)
  -h, --help            this text
`;

/** Which agent a run starts: the bundled replay, or the real pi. */
export type AgentChoice =
  | { readonly kind: 'replay'; readonly transcript: string; readonly env?: Readonly<Record<string, string>> }
  | { readonly kind: 'pi'; readonly provider?: string; readonly model?: string; readonly executable?: string };

export type WebRequest =
  | { readonly kind: 'serve'; readonly port: number; readonly agent: AgentChoice }
  | { readonly kind: 'help' }
  | { readonly kind: 'usage-error'; readonly message: string };

// Reads the command line and the environment; never throws on bad input.
export function parseWebArgs(argv: readonly string[], env: NodeJS.ProcessEnv): WebRequest {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        port: { type: 'string' },
        transcript: { type: 'string' },
        real: { type: 'boolean' },
        provider: { type: 'string' },
        model: { type: 'string' },
        executable: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    return { kind: 'usage-error', message: error instanceof Error ? error.message : String(error) };
  }
  if (values.help === true) return { kind: 'help' };
  const portText = values.port ?? env['PORT'] ?? '0';
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65_535) return { kind: 'usage-error', message: `--port must be a port number, got '${portText}'` };
  const real = values.real === true || env['AGENT_RX_WEB_REAL'] === '1';
  if (real && values.transcript !== undefined) return { kind: 'usage-error', message: '--transcript picks a replay; it does not go with --real' };
  if (!real && (values.provider !== undefined || values.model !== undefined || values.executable !== undefined)) {
    return { kind: 'usage-error', message: '--provider, --model and --executable are for the real pi: add --real' };
  }
  if (values.executable === '') return { kind: 'usage-error', message: '--executable must be a path' };
  const agent: AgentChoice = real
    ? {
        kind: 'pi',
        ...(values.provider === undefined ? {} : { provider: values.provider }),
        ...(values.model === undefined ? {} : { model: values.model }),
        ...(values.executable === undefined ? {} : { executable: values.executable }),
      }
    : { kind: 'replay', transcript: values.transcript ?? DEFAULT_TRANSCRIPT };
  return { kind: 'serve', port, agent };
}

// The runPi options of one run: Node running the replay script (a transcript is a "model"), or pi.
export function runOptionsFor(agent: AgentChoice, prompt: string, replayScript: string): RunPiOptions {
  if (agent.kind === 'pi') {
    return {
      prompt,
      ...(agent.provider === undefined ? {} : { provider: agent.provider }),
      ...(agent.model === undefined ? {} : { model: agent.model }),
      ...(agent.executable === undefined ? {} : { executable: agent.executable }),
    };
  }
  return { prompt, executable: process.execPath, executableArgs: [replayScript], model: agent.transcript, ...(agent.env === undefined ? {} : { env: agent.env }) };
}

// One line saying which agent runs, for the console and the page.
export function describeAgent(agent: AgentChoice): string {
  const pi = AGENTS.pi;
  if (agent.kind === 'replay') return `replay of a recorded ${pi.displayName} run: ${agent.transcript} (offline; --real runs ${pi.executable})`;
  const model = [agent.provider, agent.model].filter((part) => part !== undefined).join('/');
  return `${agent.executable ?? pi.executable}${model === '' ? '' : ` (${model})`}`;
}
