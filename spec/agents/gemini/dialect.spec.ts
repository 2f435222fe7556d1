import { describe, expect, it } from '@jest/globals';
import { agentOutputToMessages, type CliMessage, type Dialect, type ProcessItem } from '../../../lib/index.js';
import { createGeminiTextReader, geminiDialect, geminiOutputToMessages, geminiStderrLine, geminiTurnEnd, mapGeminiStderrLine, type GeminiState } from '../../../lib/dialects.js';
import { exit, scheduler, terminalFailed } from '../../helpers/items.js';
import { geminiFacts } from '../../helpers/gemini-transcripts.js';

const line = (value: object): ProcessItem => ({ kind: 'line', text: JSON.stringify(value) });
const stderr = (text: string): ProcessItem => ({ kind: 'stderr-line', text });
const init = line({ type: 'init', timestamp: 't', session_id: 'S1', model: 'gemini-2.5-pro' });
const user = line({ type: 'message', timestamp: 't', role: 'user', content: 'Say hello' });
const say = (content: string) => line({ type: 'message', timestamp: 't', role: 'assistant', content, delta: true });
const toolUse = (id: string, name = 'run_shell_command', parameters: unknown = { command: 'ls' }) => line({ type: 'tool_use', timestamp: 't', tool_name: name, tool_id: id, parameters });
const toolResult = (id: string, status: string, fields: Record<string, unknown> = {}) => line({ type: 'tool_result', timestamp: 't', tool_id: id, status, ...fields });
const errorEvent = (message: string, severity?: string) => line({ type: 'error', timestamp: 't', message, ...(severity === undefined ? {} : { severity }) });
const stats = { total_tokens: 20, input_tokens: 10, output_tokens: 5, cached: 0, input: 10, duration_ms: 5, tool_calls: 0, models: {} };
const success = line({ type: 'result', timestamp: 't', status: 'success', stats });
const failedResult = (message: string, type = 'unknown') => line({ type: 'result', timestamp: 't', status: 'error', error: { type, message }, stats: { ...stats, total_tokens: 0 } });

const started: CliMessage = { type: 'session.started', sessionId: 'S1', model: 'gemini-2.5-pro' };
const USAGE = { inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0, totalTokens: 20 };
const completedTerminal: CliMessage = { type: 'terminal.completed', stopReason: 'end_turn', usage: USAGE, sessionId: 'S1' };
const failed = (fields: Parameters<typeof terminalFailed>[0]) => terminalFailed({ sessionId: 'S1', ...fields });
const NO_RESULT = 'Gemini CLI exited without a result line (stopped by a signal, or it could not start)';
const API_500 = '[API Error: {"error":{"code":500,"message":"fake internal server error","status":"INTERNAL"}}]';
const RETRY_500 = 'Attempt 1 failed with status 500. Retrying with backoff... _ApiError: {"error":{"code":500,"message":"fake internal server error","status":"INTERNAL"}}';
const RETRY_FETCH = 'Attempt 1 failed. Retrying with backoff... Error: exception TypeError: fetch failed sending request';
const LAST_ATTEMPT = 'Attempt 2 failed: {"error":{"code":500,"message":"fake internal server error","status":"INTERNAL"}}. Max attempts reached';

describe('Gemini CLI dialect (geminiOutputToMessages)', () => {
  it('a whole run: the session, deltas, a tool call and its result, more deltas, success with the usage', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold<ProcessItem>('-i-u-a-b-t-r-c-d-x|', {
        i: init,
        u: user,
        a: say('I will '),
        b: say('run ls.'),
        t: toolUse('T1'),
        r: toolResult('T1', 'success', { output: 'a b' }),
        c: say('Two files.'),
        d: success,
        x: exit(),
      });
      expectObservable(source.pipe(geminiOutputToMessages())).toBe('-s---a-b-t-r-c---(h|)', {
        s: started,
        a: { type: 'assistant', text: 'I will ' },
        b: { type: 'assistant', text: 'run ls.' },
        t: { type: 'tool.call', toolCallId: 'T1', name: 'run_shell_command', input: { command: 'ls' }, kind: 'execute', summary: 'ls' },
        r: { type: 'tool.completed', toolCallId: 'T1', name: 'run_shell_command', output: 'a b' },
        c: { type: 'assistant', text: 'Two files.' },
        h: completedTerminal,
      });
    });
  });

  it('an empty source still ends with one terminal: missing-terminal', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<ProcessItem>('|').pipe(geminiOutputToMessages())).toBe('(t|)', {
        t: terminalFailed({ reason: 'missing-terminal', exitCode: null, message: 'the Gemini CLI output ended without an exit' }),
      });
    });
  });

  it('an error of the source passes through, after what came before it', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const boom = new Error('read failed');
      expectObservable(cold<ProcessItem>('-i-a-#', { i: init, a: say('Hi') }, boom).pipe(geminiOutputToMessages())).toBe(
        '-s-a-#',
        { s: started, a: { type: 'assistant', text: 'Hi' } },
        boom,
      );
    });
  });

  it('unsubscribing early unsubscribes from the source, and nothing more comes', () => {
    scheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold<ProcessItem>('-i-a-b-d-x|', { i: init, a: say('early'), b: say('late'), d: success, x: exit() });
      expectObservable(source.pipe(geminiOutputToMessages()), '^----!').toBe('-s-a-', { s: started, a: { type: 'assistant', text: 'early' } });
      expectSubscriptions(source.subscriptions).toBe('^----!');
    });
  });

  it('two subscriptions share nothing: each has its own session, tool calls, text stretches and retries', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold<ProcessItem>('-e-i-t-r-a-d-x|', {
        e: stderr(RETRY_500),
        i: init,
        t: toolUse('T1'),
        r: toolResult('T1', 'success', { output: '' }),
        a: say('Done.'),
        d: success,
        x: exit(),
      });
      const messages = source.pipe(geminiOutputToMessages());
      const values = {
        e: { type: 'agent.retry', attempt: 1, reason: '500 fake internal server error' },
        s: started,
        t: { type: 'tool.call', toolCallId: 'T1', name: 'run_shell_command', input: { command: 'ls' }, kind: 'execute', summary: 'ls' },
        r: { type: 'tool.completed', toolCallId: 'T1', name: 'run_shell_command', output: '' },
        a: { type: 'assistant', text: 'Done.' },
        h: completedTerminal,
      };
      expectObservable(messages).toBe('-e-s-t-r-a---(h|)', values);
      expectObservable(messages, '----^').toBe('-----e-s-t-r-a---(h|)', values);
    });
  });

  it('resuming: session.resumed with the session id, once', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold<ProcessItem>('-i-j-d-x|', { i: init, j: line({ type: 'init', session_id: 'S2' }), d: success, x: exit() });
      expectObservable(source.pipe(geminiOutputToMessages({ resuming: true }))).toBe('-s-----(h|)', {
        s: { type: 'session.resumed', sessionId: 'S1', model: 'gemini-2.5-pro' },
        h: completedTerminal,
      });
    });
  });

  it('the user message and stats without counts say nothing; an unknown event type says so once', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold<ProcessItem>('-u-k-k-d-x|', {
        u: user,
        k: line({ type: 'telemetry', timestamp: 't', data: 1 }),
        d: line({ type: 'result', status: 'success', stats: {} }),
        x: exit(),
      });
      expectObservable(source.pipe(geminiOutputToMessages())).toBe('---k-----(h|)', {
        k: { type: 'agent.warning', message: 'Gemini CLI sent an event of unknown type "telemetry"; it was ignored' },
        h: { type: 'terminal.completed', stopReason: 'end_turn', usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, totalTokens: 0 } },
      });
      // A result without stats: no usage.
      const bare = cold<ProcessItem>('-d-x|', { d: line({ type: 'result', status: 'success' }), x: exit() });
      expectObservable(bare.pipe(geminiOutputToMessages())).toBe('---(h|)', { h: { type: 'terminal.completed', stopReason: 'end_turn' } });
    });
  });

  it('usage: cached input apart from the rest; `input` as printed, else input_tokens less cached; total_tokens as printed (it counts thinking)', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const run = (fields: Record<string, number>) =>
        cold<ProcessItem>('-d-x|', { d: line({ type: 'result', status: 'success', stats: fields }), x: exit() }).pipe(geminiOutputToMessages());
      const usage = (inputTokens: number, outputTokens: number, cacheReadTokens: number, totalTokens: number) => ({
        h: { type: 'terminal.completed', stopReason: 'end_turn', usage: { inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens: 0, totalTokens } },
      });
      expectObservable(run({ total_tokens: 112, input_tokens: 100, output_tokens: 12, cached: 30, input: 70 })).toBe('---(h|)', usage(70, 12, 30, 112));
      expectObservable(run({ input_tokens: 100, output_tokens: 12, cached: 30 })).toBe('---(h|)', usage(70, 12, 30, 112));
      expectObservable(run({ total_tokens: 71, input_tokens: 42, output_tokens: 9, cached: 0, input: 42 })).toBe('---(h|)', usage(42, 9, 0, 71));
    });
  });
});

describe('Gemini CLI dialect: text between tool calls', () => {
  it('each stretch between tool calls is its own text: the same words before and after a call are both kept', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold<ProcessItem>('-a-t-r-b-u-s-c-d-x|', {
        a: say('Same.'),
        t: toolUse('T1'),
        r: toolResult('T1', 'success', { output: 'x' }),
        b: say('Same.'),
        u: toolUse('T2', 'read_file', { file_path: 'f' }),
        s: toolResult('T2', 'error', { output: 'File not found: f', error: { type: 'file_not_found', message: 'File not found: f' } }),
        c: say('Same.'),
        d: success,
        x: exit(),
      });
      expectObservable(source.pipe(geminiOutputToMessages())).toBe('-a-t-r-b-u-s-c---(h|)', {
        a: { type: 'assistant', text: 'Same.' },
        t: { type: 'tool.call', toolCallId: 'T1', name: 'run_shell_command', input: { command: 'ls' }, kind: 'execute', summary: 'ls' },
        r: { type: 'tool.completed', toolCallId: 'T1', name: 'run_shell_command', output: 'x' },
        b: { type: 'assistant', text: 'Same.' },
        u: { type: 'tool.call', toolCallId: 'T2', name: 'read_file', input: { file_path: 'f' }, kind: 'read', summary: 'f' },
        s: { type: 'tool.failed', toolCallId: 'T2', name: 'read_file', output: 'File not found: f' },
        c: { type: 'assistant', text: 'Same.' },
        h: { type: 'terminal.completed', stopReason: 'end_turn', usage: USAGE },
      });
    });
  });

  it('a failed result without output shows its error message; one without either shows nothing; a result for an unknown call announces it', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold<ProcessItem>('-t-r-u-s-v-', {
        t: toolUse('T1'),
        r: toolResult('T1', 'error', { error: { type: 'tool_not_registered', message: 'Tool "x" not found.' } }),
        u: toolUse('T2', 'glob', { pattern: '*' }),
        s: toolResult('T2', 'error'),
        v: toolResult('T3', 'success', { output: 'late' }),
      });
      expectObservable(source.pipe(geminiOutputToMessages())).toBe('-t-r-u-s-(wv)-', {
        t: { type: 'tool.call', toolCallId: 'T1', name: 'run_shell_command', input: { command: 'ls' }, kind: 'execute', summary: 'ls' },
        r: { type: 'tool.failed', toolCallId: 'T1', name: 'run_shell_command', output: 'Tool "x" not found.' },
        u: { type: 'tool.call', toolCallId: 'T2', name: 'glob', input: { pattern: '*' }, kind: 'search', summary: '*' },
        s: { type: 'tool.failed', toolCallId: 'T2', name: 'glob', output: '' },
        w: { type: 'tool.call', toolCallId: 'T3', name: 'unknown', input: null, kind: 'other' },
        v: { type: 'tool.completed', toolCallId: 'T3', name: 'unknown', output: 'late' },
      });
    });
  });

  it('the text reader: assistant deltas only, a new key after each tool line; the turn ends at result', () => {
    const read = createGeminiTextReader();
    const event = (value: Record<string, unknown>) => value as { type: string };
    expect(read(event({ type: 'message', role: 'user', content: 'hi' }))).toBeNull();
    expect(read(event({ type: 'message', role: 'assistant', content: 'a', delta: true }))).toEqual({ channel: 'assistant', key: '0', delta: 'a' });
    expect(read(event({ type: 'tool_use', tool_name: 'x', tool_id: 'T' }))).toBeNull();
    const afterCall = read(event({ type: 'message', role: 'assistant', content: 'b', delta: true }));
    expect(read(event({ type: 'tool_result', tool_id: 'T', status: 'success' }))).toBeNull();
    const afterResult = read(event({ type: 'message', role: 'assistant', content: 'c', delta: true }));
    expect(afterCall).toMatchObject({ channel: 'assistant', delta: 'b' });
    expect(afterResult).toMatchObject({ channel: 'assistant', delta: 'c' });
    const keys = [afterCall, afterResult].map((reading) => (reading !== null && 'key' in reading ? reading.key : undefined));
    expect(new Set(['0', ...keys]).size).toBe(3);
    // Each reader counts for itself.
    expect(createGeminiTextReader()(event({ type: 'message', role: 'assistant', content: 'd' }))).toEqual({ channel: 'assistant', key: '0', delta: 'd' });
    expect(geminiTurnEnd({ type: 'result' })).toBe('final');
    expect(geminiTurnEnd({ type: 'message' })).toBeNull();
    expect(geminiTurnEnd({ type: 'tool_result' })).toBeNull();
  });
});

describe('Gemini CLI dialect: stderr, retries and errors', () => {
  it('reads the retry notices of stderr: with the API error\'s status and message, or the error\'s text; the last attempt and other lines are no retry', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold<ProcessItem>('-a-b-c-d-e-f-g-h-', {
        a: stderr(RETRY_500),
        b: stderr(RETRY_FETCH),
        c: stderr(LAST_ATTEMPT),
        d: stderr('    at throwErrorIfNotOK (file://$LAB/node_modules/@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:267833:24)'),
        e: stderr('Warning: 256-color support not detected. Using a terminal with at least 256-color support is recommended for a better visual experience.'),
        f: stderr('  status: 500'),
        g: stderr('Attempt 3 failed with status 503. Retrying with backoff...'),
        h: stderr('Error when talking to Gemini API Full report available at: $TMPDIR/gemini-client-error.json _ApiError: {"error":{"code":500}}'),
      });
      expectObservable(source.pipe(geminiOutputToMessages())).toBe('-a-b---------g---', {
        a: { type: 'agent.retry', attempt: 1, reason: '500 fake internal server error' },
        b: { type: 'agent.retry', attempt: 1, reason: 'exception TypeError: fetch failed sending request' },
        g: { type: 'agent.retry', attempt: 3, reason: 'status 503' },
      });
    });
  });

  it('mapGeminiStderrLine on its own: each real format, and the edge cases', () => {
    const state = geminiDialect().createState();
    const map = (text: string) => mapGeminiStderrLine(state, text);
    expect(map(RETRY_500)).toEqual([{ type: 'agent.retry', attempt: 1, reason: '500 fake internal server error' }]);
    expect(map(RETRY_FETCH)).toEqual([{ type: 'agent.retry', attempt: 1, reason: 'exception TypeError: fetch failed sending request' }]);
    expect(map(LAST_ATTEMPT)).toEqual([]);
    expect(map('Attempt 10 failed: {"error":{"code":500}}. Max attempts reached')).toEqual([]);
    // Not JSON after the error's name: its text as it is, with the status in front.
    expect(map('Attempt 2 failed with status 429. Retrying with backoff... _ApiError: Resource has been exhausted (e.g. check quota).')).toEqual([
      { type: 'agent.retry', attempt: 2, reason: '429 Resource has been exhausted (e.g. check quota).' },
    ]);
    // JSON without an error message: the JSON as it is.
    expect(map('Attempt 4 failed with status 500. Retrying with backoff... _ApiError: {"error":{"code":500}}')).toEqual([
      { type: 'agent.retry', attempt: 4, reason: '500 {"error":{"code":500}}' },
    ]);
    expect(map('Attempt 5 failed. Retrying with backoff...')).toEqual([{ type: 'agent.retry', attempt: 5, reason: 'failed' }]);
    // The bundle's other forms: a delay the API asked for, and a status class without the error.
    expect(map('Attempt 3 failed: Quota exceeded. Please retry in 5s. Retrying after 5000ms...')).toEqual([
      { type: 'agent.retry', attempt: 3, delayMs: 5000, reason: 'Quota exceeded. Please retry in 5s' },
    ]);
    expect(map('Attempt 2 failed with 429 error (no Retry-After header). Retrying with backoff...')).toEqual([
      { type: 'agent.retry', attempt: 2, reason: '429 error (no Retry-After header)' },
    ]);
    expect(map('Attempt 2 failed with 5xx error. Retrying with backoff...')).toEqual([{ type: 'agent.retry', attempt: 2, reason: '5xx error' }]);
    expect(map('  Attempt 6 failed. Retrying with backoff... Error: socket hang up  ')).toEqual([{ type: 'agent.retry', attempt: 6, reason: 'socket hang up' }]);
    for (const text of ['', 'Attempt one failed. Retrying with backoff...', 'Retrying with backoff...', 'YOLO mode is enabled. All tool calls will be automatically approved.', '}']) {
      expect([text, map(text)]).toEqual([text, []]);
    }
    // The state is not touched: the retries say nothing about how the run ended.
    expect(state).toEqual(geminiDialect().createState());
  });

  it('every retry notice of the recorded 500 run: attempts 1 to 9, none for the tenth', () => {
    const state = geminiDialect().createState();
    const retries = geminiFacts('http500').stderr.split('\n').flatMap((text) => mapGeminiStderrLine(state, text));
    expect(retries).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9].map((attempt) => ({ type: 'agent.retry', attempt, reason: '500 fake internal server error' })));
  });

  it('a dialect without mapStderrLine ignores the stderr lines', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const withoutStderr: Dialect<GeminiState> = { ...geminiDialect() };
      delete withoutStderr.mapStderrLine;
      const source = cold<ProcessItem>('-a-i-d-x|', { a: stderr(RETRY_500), i: init, d: success, x: exit() });
      expectObservable(source.pipe(geminiOutputToMessages())).toBe('-e-s---(h|)', {
        e: { type: 'agent.retry', attempt: 1, reason: '500 fake internal server error' },
        s: started,
        h: completedTerminal,
      });
      expectObservable(source.pipe(agentOutputToMessages(withoutStderr))).toBe('---s---(h|)', { s: started, h: completedTerminal });
    });
  });

  it('an error event of severity warning is an agent.warning; of severity error (or none) it is no message, and the run still completes with a success result', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold<ProcessItem>('-i-w-e-n-d-x|', {
        i: init,
        w: errorEvent('Loop detected, stopping execution', 'warning'),
        e: errorEvent('Maximum session turns exceeded', 'error'),
        n: errorEvent('no severity'),
        d: success,
        x: exit(),
      });
      expectObservable(source.pipe(geminiOutputToMessages())).toBe('-s-w-------(h|)', {
        s: started,
        w: { type: 'agent.warning', message: 'Loop detected, stopping execution' },
        h: completedTerminal,
      });
    });
  });

  it('an error event of severity error without a result: the failure keeps it as agentError; an error result\'s message wins over it', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const lines = { i: init, e: errorEvent('Maximum session turns exceeded', 'error'), f: failedResult('Reached max session turns'), x: exit() };
      expectObservable(cold<ProcessItem>('-i-e-x|', lines).pipe(geminiOutputToMessages())).toBe('-s---(z|)', {
        s: started,
        z: failed({ reason: 'missing-terminal', exitCode: 0, agentError: 'Maximum session turns exceeded', message: NO_RESULT }),
      });
      expectObservable(cold<ProcessItem>('-i-e-f-x|', { ...lines, x: exit({ exitCode: 53 }) }).pipe(geminiOutputToMessages())).toBe('-s-----(z|)', {
        s: started,
        z: failed({ reason: 'agent-error', exitCode: 53, agentError: 'Reached max session turns', message: 'Gemini CLI reported an error: Reached max session turns' }),
      });
    });
  });

  it('an error result is an agent-error that explains its exit code; the API error\'s code is the HTTP status', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold<ProcessItem>('-i-f-x|', { i: init, f: failedResult(API_500), x: exit({ exitCode: 244, stderr: 'Attempt 1 failed…\n' }) });
      expectObservable(source.pipe(geminiOutputToMessages())).toBe('-s---(z|)', {
        s: started,
        z: failed({
          reason: 'agent-error',
          exitCode: 244,
          stderr: 'Attempt 1 failed…\n',
          agentError: API_500,
          httpStatus: 500,
          message: `Gemini CLI reported an error: ${API_500}`,
        }),
      });
    });
  });

  it('the HTTP status of an API error without a code is the exit code plus 256 (400 to 511); other exit codes give none', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const quota = '[API Error: Resource has been exhausted (e.g. check quota).]\nPlease wait and try again later.';
      const run = (message: string, end: ProcessItem) => cold<ProcessItem>('-f-x|', { f: failedResult(message), x: end }).pipe(geminiOutputToMessages());
      const agentError = (message: string, fields: Parameters<typeof terminalFailed>[0]) =>
        terminalFailed({ reason: 'agent-error', agentError: message, message: `Gemini CLI reported an error: ${message}`, ...fields });
      expectObservable(run(quota, exit({ exitCode: 173 }))).toBe('---(z|)', { z: agentError(quota, { exitCode: 173, httpStatus: 429 }) });
      expectObservable(run(quota, exit({ exitCode: 144 }))).toBe('---(z|)', { z: agentError(quota, { exitCode: 144, httpStatus: 400 }) });
      expectObservable(run(quota, exit({ exitCode: 255 }))).toBe('---(z|)', { z: agentError(quota, { exitCode: 255, httpStatus: 511 }) });
      expectObservable(run(quota, exit({ exitCode: 1 }))).toBe('---(z|)', { z: agentError(quota, { exitCode: 1 }) });
      expectObservable(run(quota, exit({ exitCode: 0 }))).toBe('---(z|)', { z: agentError(quota, { exitCode: 0 }) });
      // Not an API error: no status, whatever the exit code.
      expectObservable(run('something broke', exit({ exitCode: 244 }))).toBe('---(z|)', { z: agentError('something broke', { exitCode: 244 }) });
      // The quoted code wins over the exit code.
      expectObservable(run(API_500, exit({ exitCode: 173 }))).toBe('---(z|)', { z: agentError(API_500, { exitCode: 173, httpStatus: 500 }) });
    });
  });

  it('FatalCancellationError is aborted, and explains exit 130', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold<ProcessItem>('-i-f-x|', { i: init, f: failedResult('Operation cancelled.', 'FatalCancellationError'), x: exit({ exitCode: 130 }) });
      expectObservable(source.pipe(geminiOutputToMessages())).toBe('-s---(z|)', {
        s: started,
        z: failed({ reason: 'aborted', exitCode: 130, agentError: 'Operation cancelled.', message: 'Gemini CLI cancelled the run: Operation cancelled.' }),
      });
    });
  });

  it('a signal is an exit failure even after a result; a success result does not explain a non-zero exit', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const killed = cold<ProcessItem>('-i-f-x|', { i: init, f: failedResult('Operation cancelled.', 'FatalCancellationError'), x: exit({ exitCode: null, signal: 'SIGKILL' }) });
      expectObservable(killed.pipe(geminiOutputToMessages())).toBe('-s---(z|)', {
        s: started,
        z: failed({ reason: 'exit', exitCode: null, signal: 'SIGKILL', agentError: 'Operation cancelled.', message: 'Gemini CLI was killed by SIGKILL: Operation cancelled.' }),
      });
      const nonZero = cold<ProcessItem>('-i-d-x|', { i: init, d: success, x: exit({ exitCode: 1, stderr: 'Ripgrep is not available. Falling back to GrepTool.\nboom\n' }) });
      expectObservable(nonZero.pipe(geminiOutputToMessages())).toBe('-s---(z|)', {
        s: started,
        z: failed({ reason: 'exit', exitCode: 1, stderr: 'Ripgrep is not available. Falling back to GrepTool.\nboom\n', message: 'Gemini CLI exited with code 1: boom' }),
      });
    });
  });

  it('exit 0 without a result (SIGTERM, SIGINT) is missing its terminal, never a completion; garbage makes it invalid-output', () => {
    scheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold<ProcessItem>('-i-u-x|', { i: init, u: user, x: exit() }).pipe(geminiOutputToMessages())).toBe('-s---(z|)', {
        s: started,
        z: failed({ reason: 'missing-terminal', exitCode: 0, message: NO_RESULT }),
      });
      const garbage = cold<ProcessItem>('-i-g-x|', { i: init, g: { kind: 'line', text: 'not json' }, x: exit() });
      expectObservable(garbage.pipe(geminiOutputToMessages())).toBe('-s---(z|)', {
        s: started,
        z: failed({
          reason: 'invalid-output',
          exitCode: 0,
          message: expect.stringContaining(`${NO_RESULT}; 1 line(s) of output were not understood (line 2: not-json`) as unknown as string,
          invalidOutputLines: [expect.objectContaining({ lineNumber: 2, reason: 'not-json', text: 'not json' })] as unknown as [],
        }),
      });
    });
  });

  it('a non-zero exit without a result: an exit failure whose message is what stderr explains', () => {
    scheduler().run(({ cold, expectObservable }) => {
      const text = geminiFacts('missing-api-key').stderr;
      expectObservable(cold<ProcessItem>('-x|', { x: exit({ exitCode: 41, stderr: text }) }).pipe(geminiOutputToMessages())).toBe('-(z|)', {
        z: terminalFailed({
          reason: 'exit',
          exitCode: 41,
          stderr: text,
          message:
            'Gemini CLI exited with code 41: When using Gemini API, you must specify the GEMINI_API_KEY environment variable. Update your environment and try again (no reload needed if using .env)!',
        }),
      });
      // Only routine lines on stderr: the exit code alone.
      const routine = 'Warning: 256-color support not detected.\nRipgrep is not available. Falling back to GrepTool.\n';
      expectObservable(cold<ProcessItem>('-x|', { x: exit({ exitCode: 55, stderr: routine }) }).pipe(geminiOutputToMessages())).toBe('-(z|)', {
        z: terminalFailed({ reason: 'exit', exitCode: 55, stderr: routine, message: 'Gemini CLI exited with code 55' }),
      });
    });
  });
});

describe('geminiStderrLine', () => {
  it('the last two lines that are not routine, joined: what is wrong, then what to do', () => {
    expect(geminiStderrLine(geminiFacts('missing-api-key').stderr)).toBe(
      'When using Gemini API, you must specify the GEMINI_API_KEY environment variable. Update your environment and try again (no reload needed if using .env)!',
    );
    expect(geminiStderrLine('Warning: 256-color support not detected. Using a terminal…\nGemini CLI is not running in a trusted directory. To proceed, use --skip-trust.\n')).toBe(
      'Gemini CLI is not running in a trusted directory. To proceed, use --skip-trust.',
    );
  });

  it('leaves out the routine lines and the rest of stack traces', () => {
    const http401 = geminiFacts('http401').stderr;
    const explained = geminiStderrLine(http401);
    expect(explained).toMatch(/^Error when talking to Gemini API Full report available at: \$TMPDIR\/gemini-client-error-.*_ApiError: \{"error":\{"code":401,/);
    expect(explained).not.toMatch(/256-color|Ripgrep|throwErrorIfNotOK|status: 401/);
    // The retried 500: its last attempt and the final report.
    const http500 = geminiStderrLine(geminiFacts('http500').stderr);
    expect(http500).toMatch(/^Attempt 10 failed: .*Max attempts reached Error when talking to Gemini API/);
    for (const name of ['text', 'tool', 'tool-fail', 'reasoning', 'session-id-flag', 'cancel-sigterm-norelaunch']) {
      expect([name, geminiStderrLine(geminiFacts(name).stderr)]).toEqual([name, undefined]);
    }
    expect(geminiStderrLine('')).toBeUndefined();
    expect(geminiStderrLine('  status: 500\n}\n{\n    at x (y:1:2)\nLoaded cached credentials.\n')).toBeUndefined();
  });

  it('leaves out terminal colour sequences, which some of its messages have even on a pipe', () => {
    expect(geminiStderrLine('\u001b[33mWarning: 256-color support not detected.\u001b[0m\n\u001b[31mGemini CLI is not running in a trusted directory.\u001b[39m\n')).toBe(
      'Gemini CLI is not running in a trusted directory.',
    );
    expect(geminiStderrLine('\u001b[2m\u001b[0m\n')).toBeUndefined();
  });

  it('cuts a long explanation at 500 characters', () => {
    const long = `Error: ${'x'.repeat(600)}`;
    const explained = geminiStderrLine(`${long}\n`);
    expect(explained).toBe(`${long.slice(0, 500)}…`);
  });
});
