import { describe, expect, it } from '@jest/globals';
import { from } from 'rxjs';
import { mapToCliMessage, type CliMessage, type ProcessItem } from '../../../lib/index.js';
import { codexAppServerDialect, codexDialect, codexOutputToMessages, codexStderrLine, createCodexTextReader } from '../../../lib/dialects.js';
import { exit, runExit, scheduler, terminalFailed } from '../../helpers/items.js';

const line = (value: object): ProcessItem => ({ kind: 'line', text: JSON.stringify(value) });
const item = (phase: 'started' | 'updated' | 'completed', fields: { id: string; type: string } & Record<string, unknown>) => line({ type: `item.${phase}`, item: fields });
const thread = line({ type: 'thread.started', thread_id: 'T1' });
const turn = line({ type: 'turn.started' });
const usage = { input_tokens: 10, cached_input_tokens: 0, cache_write_input_tokens: 0, output_tokens: 5, reasoning_output_tokens: 0 };
const turnCompleted = line({ type: 'turn.completed', usage });
const errorLine = (message: string) => line({ type: 'error', message });
const turnFailed = (message: string) => line({ type: 'turn.failed', error: { message } });

const started: CliMessage = { type: 'session.started', sessionId: 'T1' };
const completedTerminal: CliMessage = {
  type: 'terminal.completed',
  stopReason: 'end_turn',
  usage: { inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0, totalTokens: 15 },
  sessionId: 'T1',
};
const failed = (fields: Parameters<typeof terminalFailed>[0]) => terminalFailed({ sessionId: 'T1', ...fields });

describe('Codex dialect (codexOutputToMessages)', () => {
  it('a whole run: the thread, a command, the answer, the reasoning at the turn end, success', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold<ProcessItem>('-t-u-r-s-c-m-d-x|', {
        t: thread,
        u: turn,
        r: item('completed', { id: 'item_0', type: 'reasoning', text: 'Think first.' }),
        s: item('started', { id: 'item_1', type: 'command_execution', command: 'ls', aggregated_output: '', exit_code: null, status: 'in_progress' }),
        c: item('completed', { id: 'item_1', type: 'command_execution', command: 'ls', aggregated_output: 'a b\n', exit_code: 0, status: 'completed' }),
        m: item('completed', { id: 'item_2', type: 'agent_message', text: 'Two files.' }),
        d: turnCompleted,
        x: exit(),
      });
      expectObservable(source.pipe(codexOutputToMessages())).toBe('-a-----b-c-m-f-(h|)', {
        a: started,
        b: { type: 'tool.call', toolCallId: 'item_1', name: 'command_execution', input: { command: 'ls' }, kind: 'execute', summary: 'ls' },
        c: { type: 'tool.completed', toolCallId: 'item_1', name: 'command_execution', output: 'a b\n' },
        m: { type: 'assistant', text: 'Two files.' },
        f: { type: 'assistant.thought', text: 'Think first.' },
        h: completedTerminal,
      });
    });
  });

  it('an empty source still ends with one terminal: missing-terminal', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<ProcessItem>('|').pipe(codexOutputToMessages())).toBe('(t|)', {
        t: terminalFailed({ reason: 'missing-terminal', exitCode: null, message: 'the Codex output ended without an exit' }),
      });
    });
  });

  it('a clean exit without turn.completed or turn.failed is missing its terminal', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<ProcessItem>('-t-u-x|', { t: thread, u: turn, x: exit() }).pipe(codexOutputToMessages())).toBe('-a---(t|)', {
        a: started,
        t: failed({ reason: 'missing-terminal', message: 'Codex exited without turn.completed or turn.failed' }),
      });
    });
  });

  it('an error of the source passes through, after what came before it', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const boom = new Error('read failed');
      expectObservable(cold<ProcessItem>('-t-#', { t: thread }, boom).pipe(codexOutputToMessages())).toBe('-a-#', { a: started }, boom);
    });
  });

  it('unsubscribing early unsubscribes from the source, and nothing more comes', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold<ProcessItem>('-t-u-m-d-x|', {
        t: thread,
        u: turn,
        m: item('completed', { id: 'item_0', type: 'agent_message', text: 'late' }),
        d: turnCompleted,
        x: exit(),
      });
      expectObservable(source.pipe(codexOutputToMessages()), '^--!').toBe('-a-', { a: started });
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });

  it('two subscriptions share nothing: each has its own session, tool calls and text', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold<ProcessItem>('-t-c----m-d-x|', {
        t: thread,
        c: item('completed', { id: 'item_0', type: 'command_execution', command: 'ls', aggregated_output: '', exit_code: 0, status: 'completed' }),
        m: item('completed', { id: 'item_1', type: 'agent_message', text: 'Done.' }),
        d: turnCompleted,
        x: exit(),
      });
      const messages = source.pipe(codexOutputToMessages());
      const values = {
        a: started,
        b: { type: 'tool.call', toolCallId: 'item_0', name: 'command_execution', input: { command: 'ls' }, kind: 'execute', summary: 'ls' },
        c: { type: 'tool.completed', toolCallId: 'item_0', name: 'command_execution', output: '' },
        m: { type: 'assistant', text: 'Done.' },
        h: completedTerminal,
      };
      expectObservable(messages).toBe('-a-(bc)-m---(h|)', values);
      expectObservable(messages, '----^').toBe('-----a-(bc)-m---(h|)', values);
    });
  });

  it('reads an agent_message that grows (item.updated) as snapshots of one text: each part once', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold<ProcessItem>('-t-1-2-3-d-x|', {
        t: thread,
        1: item('updated', { id: 'item_0', type: 'agent_message', text: 'Hel' }),
        2: item('updated', { id: 'item_0', type: 'agent_message', text: 'Hello' }),
        3: item('completed', { id: 'item_0', type: 'agent_message', text: 'Hello!' }),
        d: turnCompleted,
        x: exit(),
      });
      expectObservable(source.pipe(codexOutputToMessages())).toBe('-a-1-2-3---(h|)', {
        a: started,
        1: { type: 'assistant', text: 'Hel' },
        2: { type: 'assistant', text: 'lo' },
        3: { type: 'assistant', text: '!' },
        h: completedTerminal,
      });
    });
  });

  it('resuming: session.resumed with the thread id', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<ProcessItem>('-t-d-x|', { t: thread, d: turnCompleted, x: exit() }).pipe(codexOutputToMessages({ resuming: true }))).toBe(
        '-a---(h|)',
        { a: { type: 'session.resumed', sessionId: 'T1' }, h: completedTerminal },
      );
    });
  });

  it('usage: cached input tokens are counted apart from the other input tokens; cache writes are kept', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const d = line({ type: 'turn.completed', usage: { input_tokens: 100, cached_input_tokens: 40, cache_write_input_tokens: 5, output_tokens: 12, reasoning_output_tokens: 4 } });
      const bare = line({ type: 'turn.completed', usage: { input_tokens: 7, output_tokens: 3 } });
      const none = line({ type: 'turn.completed' });
      const run = (end: ProcessItem) => cold<ProcessItem>('-d-x|', { d: end, x: exit() }).pipe(codexOutputToMessages());
      expectObservable(run(d)).toBe('---(h|)', {
        h: { type: 'terminal.completed', stopReason: 'end_turn', usage: { inputTokens: 60, outputTokens: 12, cacheReadTokens: 40, cacheWriteTokens: 5, totalTokens: 117 } },
      });
      expectObservable(run(bare)).toBe('---(h|)', {
        h: { type: 'terminal.completed', stopReason: 'end_turn', usage: { inputTokens: 7, outputTokens: 3, cacheReadTokens: 0, cacheWriteTokens: 0, totalTokens: 10 } },
      });
      expectObservable(run(none)).toBe('---(h|)', { h: { type: 'terminal.completed', stopReason: 'end_turn' } });
    });
  });
});

describe('Codex dialect: retries and errors', () => {
  it('reads retry notices: n/m with a reason, waiting for network, the unicode ellipsis, no reason, nested parentheses', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold<ProcessItem>('-a-b-c-d-e-', {
        a: errorLine('Reconnecting... 2/5 (stream disconnected before completion: idle timeout waiting for SSE)'),
        b: errorLine('Reconnecting... waiting for network (Connection failed: error sending request)'),
        c: errorLine('Reconnecting… 3/5 (exceeded retry limit, last status: 429 Too Many Requests)'),
        d: errorLine('Reconnecting... 4/5'),
        e: errorLine('Reconnecting... 1/2 (error sending request (connection reset))'),
      });
      expectObservable(source.pipe(codexOutputToMessages())).toBe('-a-b-c-d-e-', {
        a: { type: 'agent.retry', attempt: 2, maxAttempts: 5, reason: 'stream disconnected before completion: idle timeout waiting for SSE' },
        b: { type: 'agent.retry', reason: 'waiting for network: Connection failed: error sending request' },
        c: { type: 'agent.retry', attempt: 3, maxAttempts: 5, reason: 'exceeded retry limit, last status: 429 Too Many Requests' },
        d: { type: 'agent.retry', attempt: 4, maxAttempts: 5, reason: 'Reconnecting... 4/5' },
        e: { type: 'agent.retry', attempt: 1, maxAttempts: 2, reason: 'error sending request (connection reset)' },
      });
    });
  });

  it('the final error line and turn.failed, then exit 1: an agent-error with the agent\'s message, not an exit failure', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const missing = 'Missing environment variable: `FAKE_OPENAI_API_KEY`.';
      const source = cold<ProcessItem>('-t-e-f-x|', { t: thread, e: errorLine(missing), f: turnFailed(missing), x: exit({ exitCode: 1 }) });
      expectObservable(source.pipe(codexOutputToMessages())).toBe('-a-----(z|)', {
        a: started,
        z: failed({ reason: 'agent-error', exitCode: 1, agentError: missing, message: `Codex reported an error: ${missing}` }),
      });
    });
  });

  it('the status of exceeded retries is the failure\'s httpStatus; turn.failed\'s message wins over the error line before it', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const limit = 'exceeded retry limit, last status: 429 Too Many Requests';
      const source = cold<ProcessItem>('-t-e-f-x|', { t: thread, e: errorLine('an earlier error'), f: turnFailed(limit), x: exit({ exitCode: 1 }) });
      expectObservable(source.pipe(codexOutputToMessages())).toBe('-a-----(z|)', {
        a: started,
        z: failed({ reason: 'agent-error', exitCode: 1, agentError: limit, httpStatus: 429, message: `Codex reported an error: ${limit}` }),
      });
    });
  });

  it('an error line that is not a retry notice, without turn.failed, is the failure\'s agentError', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const error = 'unexpected status 503 Service Unavailable: try later';
      const lines = { t: thread, e: errorLine(error) };
      expectObservable(cold<ProcessItem>('-t-e-x|', { ...lines, x: exit() }).pipe(codexOutputToMessages())).toBe('-a---(z|)', {
        a: started,
        z: failed({ reason: 'agent-error', agentError: error, httpStatus: 503, message: `Codex reported an error: ${error}` }),
      });
      // It did not say the run ended: a non-zero exit is an exit failure, with the error in its message.
      expectObservable(cold<ProcessItem>('-t-e-x|', { ...lines, x: exit({ exitCode: 1 }) }).pipe(codexOutputToMessages())).toBe('-a---(z|)', {
        a: started,
        z: failed({ reason: 'exit', exitCode: 1, agentError: error, httpStatus: 503, message: `Codex exited with code 1: ${error}` }),
      });
    });
  });

  it('a signal is an exit failure even after turn.failed', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold<ProcessItem>('-t-f-x|', { t: thread, f: turnFailed('boom'), x: exit({ exitCode: null, signal: 'SIGTERM' }) });
      expectObservable(source.pipe(codexOutputToMessages())).toBe('-a---(z|)', {
        a: started,
        z: failed({ reason: 'exit', exitCode: null, signal: 'SIGTERM', agentError: 'boom', message: 'Codex was killed by SIGTERM: boom' }),
      });
    });
  });

  it('an error item is an agent.warning and never a failure', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const warning = 'Codex is ignoring 1 unrecognized configuration setting.';
      const w = item('completed', { id: 'item_0', type: 'error', message: warning });
      const source = (end: string) =>
        cold<ProcessItem>(end, { t: thread, s: item('started', { id: 'item_0', type: 'error', message: warning }), w, d: turnCompleted, x: exit() }).pipe(
          codexOutputToMessages(),
        );
      expectObservable(source('-t-s-w-d-x|')).toBe('-a---w---(h|)', { a: started, w: { type: 'agent.warning', message: warning }, h: completedTerminal });
      // Without a turn end, it is still no agent error: the run is missing its terminal.
      expectObservable(source('-t-w-x|')).toBe('-a-w-(z|)', {
        a: started,
        w: { type: 'agent.warning', message: warning },
        z: failed({ reason: 'missing-terminal', message: 'Codex exited without turn.completed or turn.failed' }),
      });
    });
  });
});

describe('Codex dialect: tool items', () => {
  it('command_execution: output updates replace, a non-zero exit code or a status other than completed fails', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const command = (phase: 'started' | 'updated' | 'completed', id: string, output: string, extra: Record<string, unknown> = {}) =>
        item(phase, { id, type: 'command_execution', command: 'make', aggregated_output: output, exit_code: null, status: 'in_progress', ...extra });
      const source = cold<ProcessItem>('-s-u-c-e-k-', {
        s: command('started', 'item_0', ''),
        u: command('updated', 'item_0', 'building'),
        c: command('completed', 'item_0', 'building\nfailed', { exit_code: 2, status: 'completed' }),
        e: command('completed', 'item_1', 'partial', { exit_code: 0, status: 'declined' }),
        k: command('completed', 'item_0', 'again', { exit_code: 0, status: 'completed' }),
      });
      expectObservable(source.pipe(codexOutputToMessages())).toBe('-a-b-c-(de)-', {
        a: { type: 'tool.call', toolCallId: 'item_0', name: 'command_execution', input: { command: 'make' }, kind: 'execute', summary: 'make' },
        b: { type: 'tool.update', toolCallId: 'item_0', name: 'command_execution', output: 'building' },
        c: { type: 'tool.failed', toolCallId: 'item_0', name: 'command_execution', output: 'building\nfailed' },
        d: { type: 'tool.call', toolCallId: 'item_1', name: 'command_execution', input: { command: 'make' }, kind: 'execute', summary: 'make' },
        e: { type: 'tool.failed', toolCallId: 'item_1', name: 'command_execution', output: 'partial' },
      });
    });
  });

  it('file_change: the changes as input, one line per change as output; status failed fails', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const changes = [
        { path: 'src/a.ts', kind: 'add' },
        { path: 'src/b.ts', kind: 'update' },
        { path: 'old.ts', kind: 'delete' },
      ];
      const source = cold<ProcessItem>('-s-c-f-', {
        s: item('started', { id: 'item_0', type: 'file_change', changes, status: 'in_progress' }),
        c: item('completed', { id: 'item_0', type: 'file_change', changes, status: 'completed' }),
        f: item('completed', { id: 'item_1', type: 'file_change', changes: [{ path: 'x', kind: 'update' }], status: 'failed' }),
      });
      expectObservable(source.pipe(codexOutputToMessages())).toBe('-a-b-(cd)-', {
        a: { type: 'tool.call', toolCallId: 'item_0', name: 'file_change', input: { changes }, kind: 'edit' },
        b: { type: 'tool.completed', toolCallId: 'item_0', name: 'file_change', output: 'add src/a.ts\nupdate src/b.ts\ndelete old.ts' },
        c: { type: 'tool.call', toolCallId: 'item_1', name: 'file_change', input: { changes: [{ path: 'x', kind: 'update' }] }, kind: 'edit' },
        d: { type: 'tool.failed', toolCallId: 'item_1', name: 'file_change', output: 'update x' },
      });
    });
  });

  it('mcp_tool_call: named mcp__<server>__<tool>; the text of its result; its error fails; structured content when there is no text', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const call = { id: 'item_0', type: 'mcp_tool_call', server: 'github', tool: 'search_issues', arguments: { q: 'bug' } };
      const source = cold<ProcessItem>('-s-c-e----j-', {
        s: item('started', { ...call, status: 'in_progress' }),
        c: item('completed', {
          ...call,
          result: { content: [{ type: 'text', text: 'Issue 1, ' }, { type: 'image', data: '…' }, { type: 'text', text: 'issue 2' }], structured_content: null },
          status: 'completed',
        }),
        e: item('completed', { id: 'item_1', type: 'mcp_tool_call', server: 'github', tool: 'get_issue', arguments: { n: 9 }, error: { message: 'not found' }, status: 'failed' }),
        j: item('completed', { id: 'item_2', type: 'mcp_tool_call', server: 'calc', tool: 'add', arguments: null, result: { content: [], structured_content: { sum: 3 } }, status: 'completed' }),
      });
      expectObservable(source.pipe(codexOutputToMessages())).toBe('-a-b-(cd)-(ef)-', {
        a: { type: 'tool.call', toolCallId: 'item_0', name: 'mcp__github__search_issues', input: { q: 'bug' }, kind: 'other' },
        b: { type: 'tool.completed', toolCallId: 'item_0', name: 'mcp__github__search_issues', output: 'Issue 1, issue 2' },
        c: { type: 'tool.call', toolCallId: 'item_1', name: 'mcp__github__get_issue', input: { n: 9 }, kind: 'other' },
        d: { type: 'tool.failed', toolCallId: 'item_1', name: 'mcp__github__get_issue', output: 'not found' },
        e: { type: 'tool.call', toolCallId: 'item_2', name: 'mcp__calc__add', input: null, kind: 'other' },
        f: { type: 'tool.completed', toolCallId: 'item_2', name: 'mcp__calc__add', output: '{"sum":3}' },
      });
    });
  });

  it('web_search: a call with its query, completed without output', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const search = { id: 'item_0', type: 'web_search', query: 'rxjs TestScheduler' };
      const source = cold<ProcessItem>('-s-c-', { s: item('started', search), c: item('completed', search) });
      expectObservable(source.pipe(codexOutputToMessages())).toBe('-a-b-', {
        a: { type: 'tool.call', toolCallId: 'item_0', name: 'web_search', input: { query: 'rxjs TestScheduler' }, kind: 'fetch', summary: 'rxjs TestScheduler' },
        b: { type: 'tool.completed', toolCallId: 'item_0', name: 'web_search', output: '' },
      });
    });
  });

  it('todo_list: each update replaces the list, the completed list is the result, rendered [x] / [ ]', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const todo = (phase: 'started' | 'updated' | 'completed', ...done: boolean[]) =>
        item(phase, { id: 'item_0', type: 'todo_list', items: done.map((completed, i) => ({ text: 'ab'[i] ?? '?', completed })) });
      const source = cold<ProcessItem>('-s----u-v-c-', { s: todo('started', false, false), u: todo('updated', true, false), v: todo('updated', true, false), c: todo('completed', true, false) });
      expectObservable(source.pipe(codexOutputToMessages())).toBe('-(ab)-c---d-', {
        a: {
          type: 'tool.call',
          toolCallId: 'item_0',
          name: 'todo_list',
          kind: 'think',
          input: {
            items: [
              { text: 'a', completed: false },
              { text: 'b', completed: false },
            ],
          },
        },
        b: { type: 'tool.update', toolCallId: 'item_0', name: 'todo_list', output: '[ ] a\n[ ] b' },
        c: { type: 'tool.update', toolCallId: 'item_0', name: 'todo_list', output: '[x] a\n[ ] b' },
        d: { type: 'tool.completed', toolCallId: 'item_0', name: 'todo_list', output: '[x] a\n[ ] b' },
      });
    });
  });

  it('an item type it does not know gives no tool message, and says its type once', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold<ProcessItem>('-s-n-', {
        s: item('started', { id: 'item_0', type: 'image_generation', prompt: 'a cat' }),
        n: item('completed', { id: 'item_0', type: 'image_generation', prompt: 'a cat' }),
      });
      expectObservable(source.pipe(codexOutputToMessages())).toBe('-w---', { w: { type: 'agent.warning', message: 'Codex sent an event of unknown type "item:image_generation"; it was ignored' } });
    });
  });
});

describe('Codex dialect: parts', () => {
  it('createCodexTextReader: agent_message and reasoning items are texts keyed by item id; final only when completed', () => {
    const event = (type: string, fields: Record<string, unknown>) => ({ type, ...fields });
    const read = createCodexTextReader();
    expect(read(event('item.completed', { item: { id: 'item_3', type: 'agent_message', text: 'Hi' } }))).toEqual({
      channel: 'assistant',
      key: 'item_3',
      snapshot: 'Hi',
      final: true,
    });
    expect(read(event('item.updated', { item: { id: 'item_4', type: 'reasoning', text: 'Hm' } }))).toEqual({
      channel: 'thought',
      key: 'item_4',
      snapshot: 'Hm',
      final: false,
    });
    expect(read(event('item.completed', { item: { id: 'item_5', type: 'command_execution', command: 'ls' } }))).toBeNull();
    expect(read(event('turn.completed', {}))).toBeNull();
  });

  it('createCodexTextReader: each reasoning summary after the first begins with a blank line, decided once per item', () => {
    const reasoning = (phase: string, id: string, text: string) => ({ type: phase, item: { id, type: 'reasoning', text } });
    const read = createCodexTextReader();
    // An empty summary is no thought, and does not count as the first.
    expect(read(reasoning('item.completed', 'item_0', ''))).toBeNull();
    expect(read(reasoning('item.completed', 'item_1', 'First'))).toMatchObject({ key: 'item_1', snapshot: 'First' });
    expect(read(reasoning('item.updated', 'item_2', 'Sec'))).toMatchObject({ key: 'item_2', snapshot: '\n\nSec', final: false });
    expect(read(reasoning('item.completed', 'item_2', 'Second'))).toMatchObject({ key: 'item_2', snapshot: '\n\nSecond', final: true });
    // A reader per run: a new one starts again.
    expect(createCodexTextReader()(reasoning('item.completed', 'item_2', 'Second'))).toMatchObject({ snapshot: 'Second' });
  });

  it('is named Codex and says how to install it', () => {
    const dialect = codexDialect();
    expect(dialect.name).toBe('Codex');
    expect(dialect.installHint).toContain('npm install -g @openai/codex');
  });
});

describe('codexStderrLine', () => {
  const noise = [
    'WARNING: proceeding, even though we could not create PATH aliases: Refusing to create helper binaries under temporary dir "/tmp" (codex_home: AbsolutePathBuf("/x"))',
    'Reading additional input from stdin...',
    // With no prompt argument (how runCodex runs Codex).
    'Reading prompt from stdin...',
  ];

  it('says nothing for nothing, or for the lines Codex prints in every run', () => {
    expect(codexStderrLine('')).toBeUndefined();
    expect(codexStderrLine('\n  \n')).toBeUndefined();
    expect(codexStderrLine(`${noise.join('\n')}\n`)).toBeUndefined();
  });

  it('an error with the lines that continue it, as one line; the every-run lines left out', () => {
    const stderr = [noise[0], noise[2], 'Error loading config.toml: `wire_api = "chat"` is no longer supported.', noise[1], 'in `model_providers.fake`', ''].join('\n');
    expect(codexStderrLine(stderr)).toBe('Error loading config.toml: `wire_api = "chat"` is no longer supported. in `model_providers.fake`');
    expect(codexStderrLine("error: unexpected argument '--bogus' found\r\n\r\n  tip: to pass '--bogus' as a value, use '-- --bogus'\r\n")).toBe(
      "error: unexpected argument '--bogus' found tip: to pass '--bogus' as a value, use '-- --bogus'",
    );
  });

  it('the last error wins; without one, the last meaningful line, trimmed', () => {
    expect(codexStderrLine('Error: first\ncontinued\nError: second\nits detail\n')).toBe('Error: second its detail');
    expect(codexStderrLine(`${noise[0]}\n  2026-11-30T05:13:10Z  WARN codex_core: stream connection failed  \n${noise[1]}\n`)).toBe(
      '2026-11-30T05:13:10Z  WARN codex_core: stream connection failed',
    );
    expect(codexStderrLine('Errors are counted here\nlast words\n')).toBe('last words');
  });

  it('cuts a long explanation at 500 characters', () => {
    const long = `Error: ${'x'.repeat(600)}`;
    expect(codexStderrLine(long)).toBe(`${long.slice(0, 500)}…`);
  });

  it('is how the app-server dialect (codexSession) reads a failed exit too: the same binary, the same stderr', () => {
    const stderr = [noise[0], 'Error loading config.toml: `wire_api = "chat"` is no longer supported.', 'in `model_providers.fake`', ''].join('\n');
    const messages: CliMessage[] = [];
    from([runExit({ exitCode: 1, stderr })]).pipe(mapToCliMessage(codexAppServerDialect())).subscribe((message) => messages.push(message));
    expect(messages).toEqual([
      expect.objectContaining({ type: 'terminal.failed', reason: 'exit', stderr, message: 'Codex exited with code 1: Error loading config.toml: `wire_api = "chat"` is no longer supported. in `model_providers.fake`' }),
    ]);
  });
});
