import type { Observable } from 'rxjs';
import { AGENTS } from '../agents/table.js';
import type { RunClaudeCodeOptions } from '../agents/claude/options.js';
import type { RunCodexOptions } from '../agents/codex/options.js';
import type { RunGeminiOptions } from '../agents/gemini/options.js';
import type { RunPiOptions } from '../agents/pi/options.js';
import type { CliMessage } from '../messages.js';
import type { StopReport } from '../process/options.js';
import type { RunSpec } from './run-spec.js';

/** The variable every process of a worker's runs carries: the worker's name (its sweep finds them). */
export const WORKER_ENV = 'AGENT_RX_WORKER';

/** What a worker decides of each agent: its executable, environment, configuration. Callers cannot. */
export interface WorkerAgents {
  readonly pi?: Partial<Omit<RunPiOptions, 'prompt'>>;
  readonly claude?: Partial<Omit<RunClaudeCodeOptions, 'prompt'>>;
  readonly codex?: Partial<Omit<RunCodexOptions, 'prompt'>>;
  readonly gemini?: Partial<Omit<RunGeminiOptions, 'prompt'>>;
}

// The agent's run on this machine: the worker's settings for it, the spec's choices, and the worker's marker.
export function agentSource(agents: WorkerAgents, workerName: string, spec: RunSpec, cwd: string, onStopped: (report: StopReport) => void): Observable<CliMessage> {
  const own: { readonly env?: Readonly<Record<string, string | undefined>> } | undefined = agents[spec.agent];
  if (own === undefined) throw new Error(`this worker does not run ${spec.agent}`);
  const env = { ...own.env, [WORKER_ENV]: workerName };
  const options = { ...own, ...spec.options, cwd, env, onStopped } as unknown as RunPiOptions;
  // The table's sources take their agent's options; the spec was checked for that agent, and
  // the worker's settings are that agent's (`WorkerAgents`).
  const run = AGENTS[spec.agent].run as (options: RunPiOptions) => Observable<CliMessage>;
  return run(options);
}
