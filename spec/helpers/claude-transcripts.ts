import { readFileSync } from 'node:fs';
import { lastValueFrom, toArray } from 'rxjs';
import { runClaudeCode, type CliMessage, type RunClaudeCodeOptions } from '../../lib/index.js';
import { fixture } from './processes.js';

interface Line {
  type: string;
  subtype?: string;
  session_id?: string;
  claude_code_version?: string;
  model?: string;
  error?: string;
  is_api_error_message?: boolean;
  message?: { id?: string; content?: unknown };
}

export interface ClaudeFacts {
  /** Text blocks of the block-level assistant lines (API errors left out), in order. */
  readonly answer: string;
  readonly thinking: readonly string[];
  readonly toolUses: readonly string[];
  readonly sessionId: string | undefined;
  /** The CLI's version as its `system/init` line gives it. */
  readonly agentVersion: string | undefined;
  /** The model as its `system/init` line gives it. */
  readonly model: string | undefined;
  /** How the recorded process ended: an exit code, or a signal name. */
  readonly ending: string;
}

/** What a recorded Claude Code run says, read straight from its lines and meta file. */
export function claudeFacts(name: string): ClaudeFacts {
  let answer = '';
  const thinking: string[] = [];
  const toolUses: string[] = [];
  let sessionId: string | undefined;
  let agentVersion: string | undefined;
  let model: string | undefined;
  for (const raw of readFileSync(fixture(`claude/${name}.jsonl`), 'utf8').split('\n')) {
    if (raw === '') continue;
    const line = JSON.parse(raw) as Line;
    if (line.type === 'system' && line.subtype === 'init') {
      sessionId ??= line.session_id;
      agentVersion ??= line.claude_code_version;
      model ??= line.model;
    }
    if (line.type !== 'assistant' || line.is_api_error_message === true || line.error !== undefined) continue;
    for (const block of (line.message?.content ?? []) as { type: string; text?: string; thinking?: string; id?: string }[]) {
      if (block.type === 'text') answer += block.text ?? '';
      if (block.type === 'thinking' && block.thinking) thinking.push(block.thinking);
      if (block.type === 'tool_use' && block.id !== undefined) toolUses.push(block.id);
    }
  }
  const meta = JSON.parse(readFileSync(fixture(`claude/${name}.meta.json`), 'utf8')) as { exit_code?: number | null; signal?: string | null };
  return { answer, thinking, toolUses, sessionId, agentVersion, model, ending: meta.signal ?? String(meta.exit_code ?? 0) };
}

/** Runs a recorded Claude Code transcript through runClaudeCode, ending as the recording did. */
export function replayClaude(name: string, options: Partial<RunClaudeCodeOptions> = {}): Promise<CliMessage[]> {
  return lastValueFrom(
    runClaudeCode({
      prompt: 'replayed',
      executable: process.execPath,
      executableArgs: [fixture('fake-pi.mjs'), fixture(`claude/${name}.jsonl`)],
      env: { FAKE_PI_EXIT: claudeFacts(name).ending },
      ...options,
    }).pipe(toArray()),
  );
}
