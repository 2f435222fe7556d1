import { describe, expect, it } from '@jest/globals';
import { from, lastValueFrom, toArray } from 'rxjs';
import { type CliMessage, type ProcessItem } from '../../../lib/index.js';
import { claudeOutputToMessages } from '../../../lib/dialects.js';
import { exit } from '../../helpers/items.js';

const line = (value: object): ProcessItem => ({ kind: 'line', text: JSON.stringify(value) });
const delta = (index: number, text: string) =>
  line({ type: 'stream_event', api_message_id: 'msg_1', parent_tool_use_id: null, event: { type: 'content_block_delta', index, delta: { type: 'text_delta', text } } });
const block = (content: object) => line({ type: 'assistant', parent_tool_use_id: null, message: { id: 'msg_1', content: [content] } });

function run(items: ProcessItem[]): Promise<CliMessage[]> {
  return lastValueFrom(from([...items, exit()]).pipe(claudeOutputToMessages(), toArray()));
}

describe('Claude Code dialect', () => {
  it('keys block-level lines by their position in the message, so text, tool, text is never doubled', async () => {
    const messages = await run([
      line({ type: 'system', subtype: 'init', session_id: 'S' }),
      delta(0, 'Before '),
      delta(0, 'the tool.'),
      block({ type: 'text', text: 'Before the tool.' }),
      block({ type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'ls' } }),
      delta(2, 'After '),
      delta(2, 'it.'),
      block({ type: 'text', text: 'After it.' }),
      line({ type: 'result', subtype: 'success', is_error: false, stop_reason: 'end_turn', session_id: 'S' }),
    ]);
    expect(messages.map((message) => (message.type === 'assistant' ? message.text : message.type))).toEqual([
      'session.started',
      'Before ',
      'the tool.',
      'tool.call',
      'After ',
      'it.',
      'terminal.completed',
    ]);
  });

  it('leaves synthetic API-error text and sub-agent text out of the answer', async () => {
    const messages = await run([
      line({ type: 'assistant', parent_tool_use_id: 'toolu_task', message: { id: 'msg_sub', content: [{ type: 'text', text: 'sub-agent chatter' }] } }),
      line({ type: 'assistant', error: 'rate_limit', is_api_error_message: true, message: { id: 'uuid', content: [{ type: 'text', text: 'API Error: 429' }] } }),
    ]);
    expect(messages.filter((message) => message.type === 'assistant')).toEqual([]);
    expect(messages.at(-1)).toMatchObject({ type: 'terminal.failed', reason: 'agent-error', agentError: 'API Error: 429' });
  });

  it('a ToolSearch result (tool_reference blocks, Claude Code 2.1.332) completes with the names of the tools it loaded', async () => {
    const messages = await run([
      block({ type: 'tool_use', id: 'toolu_s', name: 'ToolSearch', input: { query: 'select:mcp__host__lookup,Monitor' } }),
      line({
        type: 'user',
        message: {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_s', content: [{ type: 'tool_reference', tool_name: 'mcp__host__lookup' }, { type: 'tool_reference', tool_name: 'Monitor' }] },
            { type: 'text', text: 'Tool loaded.' },
          ],
        },
      }),
    ]);
    expect(messages.filter((message) => message.type.startsWith('tool.'))).toEqual([
      { type: 'tool.call', toolCallId: 'toolu_s', name: 'ToolSearch', input: { query: 'select:mcp__host__lookup,Monitor' }, kind: 'search', summary: 'select:mcp__host__lookup,Monitor' },
      { type: 'tool.completed', toolCallId: 'toolu_s', name: 'ToolSearch', output: 'mcp__host__lookup\nMonitor' },
    ]);
  });

  it('without a result line, a clean exit is missing its terminal', async () => {
    expect((await run([line({ type: 'system', subtype: 'init', session_id: 'S' })])).at(-1)).toMatchObject({
      reason: 'missing-terminal',
      message: 'Claude Code exited without a result line',
      sessionId: 'S',
    });
  });
});
