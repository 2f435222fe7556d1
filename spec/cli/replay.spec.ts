import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { AGENT_NAMES, AGENTS, type AgentName } from '../../lib/agent-table.js';
import { detectAgentOfLines, detectRecordingAgent } from '../../lib/cli/replay.js';
import { fixture } from '../helpers/processes.js';

// Every recorded stdout file of an agent (spec/fixtures/<agent>/**/*.jsonl) that has a line in it.
function recordings(agent: AgentName): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? walk(path) : name.endsWith('.jsonl') && statSync(path).size > 0 ? [path] : [];
    });
  return walk(fixture(agent));
}

const firstLine = (path: string): string => readFileSync(path, 'utf8').split('\n')[0] ?? '';

describe('telling a recording\'s agent from its first lines', () => {
  it.each(AGENT_NAMES)('recognises every %s recording as its own', (agent) => {
    const files = recordings(agent);
    expect(files.length).toBeGreaterThan(3);
    expect(files.map((file) => [file, detectRecordingAgent(file)])).toEqual(files.map((file) => [file, agent]));
  });

  it.each(AGENT_NAMES)("%s's test claims no other agent's first line", (agent) => {
    const others = AGENT_NAMES.filter((other) => other !== agent).flatMap(recordings).map(firstLine);
    expect(others.filter((line) => AGENTS[agent].recognizesOutput(line))).toEqual([]);
  });

  it('skips blank lines and lines no agent prints, up to the first ten lines', () => {
    const header = firstLine(fixture('codex/tool.jsonl'));
    expect(detectAgentOfLines(['', '  ', 'Loading…', '{"type":"unknown"}', header])).toBe('codex');
    expect(detectAgentOfLines([...Array<string>(10).fill('noise'), header])).toBeNull();
  });

  it('recognises nothing in an empty recording, text, or JSON that is not an object', () => {
    expect(detectRecordingAgent(fixture('codex/config-error.jsonl'))).toBeNull();
    expect(detectAgentOfLines(['hello', '[1,2]', 'null', '"session"', '{"type":"session"'])).toBeNull();
  });

  it('throws what reading the file throws', () => {
    expect(() => detectRecordingAgent(fixture('no-such-recording.jsonl'))).toThrow(/ENOENT/);
    expect(() => detectRecordingAgent(fixture('pi'))).toThrow(/EISDIR/);
  });
});
