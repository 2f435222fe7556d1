import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { TOOL_KINDS } from '../../lib/index.js';
import { fixture } from '../helpers/processes.js';
import { comparable, recordings, REPLAYS } from '../helpers/replay-recordings.js';

// Every recorded run still gives the messages it gave before the agents became definitions
// (spec/fixtures/replayed/README.md), and no recording was added or lost unseen.
const before = JSON.parse(readFileSync(fixture('replayed/messages.json'), 'utf8')) as Record<string, Record<string, unknown[]>>;

describe.each(Object.keys(REPLAYS) as (keyof typeof REPLAYS)[])("%s's recorded runs", (agent) => {
  it('are the ones replayed before', () => {
    expect(recordings(agent)).toEqual(Object.keys(before[agent] ?? {}).sort());
  });

  it.each(recordings(agent))('%s replays to the same messages, each tool call with a kind', async (name) => {
    const messages = await REPLAYS[agent](name);
    const calls = messages.filter((message) => message.type === 'tool.call');
    for (const call of calls) expect(TOOL_KINDS).toContain(call.kind);
    const withoutAdded = messages.map((message) => {
      if (message.type === 'session.started' || message.type === 'session.resumed') {
        // The model the agent says it uses came later (spec/agents/agent-version.spec.ts).
        const { model: _model, ...rest } = message;
        return rest;
      }
      if (message.type !== 'tool.call') return message;
      const { kind: _kind, summary: _summary, ...rest } = message;
      return rest;
    });
    expect(comparable(withoutAdded)).toEqual(before[agent]?.[name]);
  });
});
