import { readdirSync } from 'node:fs';
import type { CliMessage } from '../../lib/index.js';
import { replayClaude } from './claude-transcripts.js';
import { replayCodex } from './codex-transcripts.js';
import { replayGemini } from './gemini-transcripts.js';
import { replay as replayPi } from './pi-transcripts.js';
import { fixture } from './processes.js';

/** The agents whose recorded runs are replayed, and how. */
export const REPLAYS = {
  pi: (name: string) => replayPi(name),
  claude: (name: string) => replayClaude(name),
  codex: (name: string) => replayCodex(name),
  gemini: (name: string) => replayGemini(name),
} as const;

/** The recorded runs of `agent` (its `spec/fixtures/<agent>/*.jsonl`, by name). */
export function recordings(agent: keyof typeof REPLAYS): string[] {
  return readdirSync(fixture(agent))
    .filter((file) => file.endsWith('.jsonl'))
    .map((file) => file.slice(0, -'.jsonl'.length))
    .sort();
}

/** A replay's messages as compared: what varies from run to run (times, pids, process groups) left out. */
export function comparable(messages: readonly CliMessage[]): unknown[] {
  return JSON.parse(JSON.stringify(messages, (key, value: unknown) => (key === 'durationMs' || key === 'pid' || key === 'pids' || key === 'processGroup' ? undefined : value))) as unknown[];
}

// `tsx spec/helpers/replay-recordings.ts <out.json>`: every agent's recordings, replayed.
if (process.argv[1]?.endsWith('replay-recordings.ts') && process.argv[2] !== undefined) {
  const { writeFileSync } = await import('node:fs');
  const out: Record<string, Record<string, unknown[]>> = {};
  for (const agent of Object.keys(REPLAYS) as (keyof typeof REPLAYS)[]) {
    out[agent] = {};
    for (const name of recordings(agent)) out[agent][name] = comparable(await REPLAYS[agent](name));
  }
  writeFileSync(process.argv[2], `${JSON.stringify(out, null, 1)}\n`);
}
