// The recorded runs the replay agents play (examples/replay-agent/transcripts), and which of them
// stands for each agent: read from the recordings and the agents' definitions, not from a table.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AGENT_NAMES, type AgentName } from '../../lib/agent-table.js';
import { detectRecordingAgent } from '../../lib/cli/replay.js';

/** Where the recordings are. */
export const TRANSCRIPTS_DIR = fileURLToPath(new URL('./transcripts/', import.meta.url));

/** The recordings' names (`tool_call_then_text`, `codex-tool`, …), in order. */
export function transcriptNames(): string[] {
  return readdirSync(TRANSCRIPTS_DIR)
    .filter((file) => file.endsWith('.jsonl'))
    .map((file) => file.slice(0, -'.jsonl'.length))
    .sort();
}

/**
 * The recording shown for `agent` when none is chosen: the first one (by name) whose first lines the
 * agent recognises as its own output, one with a tool call (a name with `tool`) first; `undefined`
 * when there is none for it.
 */
export function defaultTranscript(agent: AgentName): string | undefined {
  const own = transcriptNames().filter((name) => detectRecordingAgent(join(TRANSCRIPTS_DIR, `${name}.jsonl`)) === agent);
  return own.find((name) => name.includes('tool')) ?? own[0];
}

/** Each agent's default recording (see {@link defaultTranscript}), `''` for an agent that has none. */
export const DEFAULT_TRANSCRIPTS: Readonly<Record<AgentName, string>> = Object.fromEntries(AGENT_NAMES.map((name) => [name, defaultTranscript(name) ?? ''])) as Record<AgentName, string>;
