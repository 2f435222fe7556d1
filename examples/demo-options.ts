import { parseArgs } from 'node:util';
import type { RunPiOptions } from '../lib/index.js';

/** The replay shown when no --transcript is given: a tool call between two bits of text. */
export const DEFAULT_TRANSCRIPT = 'tool_call_then_text';

export const DEFAULT_PROMPT = 'Run `echo hello` with bash, then tell me what it printed.';

export const USAGE = `usage: npm start -- [options] [prompt]

Runs a coding agent through agent-rx and shows its messages as they stream.
By default a bundled replay of a recorded pi run (offline, no API key, no pi needed).

  --transcript <name>   which recorded run to replay (examples/replay-agent/transcripts/<name>.jsonl)
  --real                run the real \`pi\` on PATH instead (also: AGENT_RX_DEMO_REAL=1)
  --provider <name>     passed to pi
  --model <id>          passed to pi (for the replay: same as --transcript)
  -h, --help            this text
`;

/** What the demo was asked to do. */
export type DemoRequest =
  | { readonly kind: 'run'; readonly real: boolean; readonly prompt: string; readonly provider?: string; readonly model?: string }
  | { readonly kind: 'help' }
  | { readonly kind: 'usage-error'; readonly message: string };

// Reads the command line and the environment; never throws on bad input.
export function parseDemoArgs(argv: readonly string[], env: NodeJS.ProcessEnv): DemoRequest {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
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
  const real = values.real === true || env['AGENT_RX_DEMO_REAL'] === '1';
  if (real && values.transcript !== undefined) {
    return { kind: 'usage-error', message: '--transcript picks a replay; it does not go with --real' };
  }
  const prompt = positionals.join(' ').trim();
  const model = values.transcript ?? values.model ?? (real ? undefined : DEFAULT_TRANSCRIPT);
  return {
    kind: 'run',
    real,
    prompt: prompt === '' ? DEFAULT_PROMPT : prompt,
    ...(values.provider === undefined ? {} : { provider: values.provider }),
    ...(model === undefined ? {} : { model }),
  };
}

// The runPi options for a request: the real `pi`, or Node running the bundled replay script.
export function piOptionsFor(request: Extract<DemoRequest, { kind: 'run' }>, replayScript: string): RunPiOptions {
  const passed = {
    prompt: request.prompt,
    ...(request.provider === undefined ? {} : { provider: request.provider }),
    ...(request.model === undefined ? {} : { model: request.model }),
  };
  return request.real ? passed : { ...passed, executable: process.execPath, executableArgs: [replayScript] };
}

// One line saying what runs, for the top of the output.
export function describeAgent(request: Extract<DemoRequest, { kind: 'run' }>): string {
  if (request.real) {
    const model = [request.provider, request.model].filter((part) => part !== undefined).join('/');
    return `pi${model === '' ? '' : ` (${model})`}`;
  }
  return `replay of a recorded pi run: ${request.model ?? DEFAULT_TRANSCRIPT} (offline; --real runs pi)`;
}
