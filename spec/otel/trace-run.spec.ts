import { describe, expect, it } from '@jest/globals';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { defer, lastValueFrom, map, of, Subject, toArray, type Observable } from 'rxjs';
import { budget, processLines, retryAgentRun, type CliMessage, type SessionCommand, type SessionMessage, type TerminalFailed } from '../../lib/index.js';
import { traceRun, traceSession } from '../../lib/otel.js';
import { terminalFailed } from '../helpers/items.js';
import { fixtureSession } from '../helpers/fixture-session.js';
import { createProcessTag } from '../helpers/tagged-processes.js';
import { memoryTracing, trace, traceparentOf } from './helpers.js';
import { readFileSync } from 'node:fs';

const usage = { inputTokens: 100, outputTokens: 20, cacheReadTokens: 5, cacheWriteTokens: 0, totalTokens: 125 };
const run: CliMessage[] = [
  { type: 'session.started', sessionId: 'S-1', model: 'claude-sonnet-4-5-20250929' },
  { type: 'assistant', text: 'Let me look. ' },
  { type: 'tool.call', toolCallId: 'T1', name: 'Bash', input: { command: 'cat secret.txt' }, kind: 'execute' },
  { type: 'tool.completed', toolCallId: 'T1', name: 'Bash', output: 'hunter2' },
  { type: 'tool.call', toolCallId: 'T2', name: 'Read', input: { path: 'x' }, kind: 'read' },
  { type: 'tool.failed', toolCallId: 'T2', name: 'Read', output: 'no such file' },
  { type: 'agent.warning', message: 'something odd' },
  { type: 'assistant', text: 'Done.' },
  { type: 'terminal.completed', stopReason: 'end_turn', usage, sessionId: 'S-1' },
];

describe('traceRun', () => {
  it('makes one invoke_agent span by the GenAI conventions, with an execute_tool span per call under it, and passes every message on', async () => {
    const tracing = memoryTracing();
    const messages = await lastValueFrom(of(...run).pipe(traceRun({ tracer: tracing.tracer, agent: 'claude', model: 'sonnet', provider: 'anthropic' }), toArray()));
    expect(messages).toEqual(run);
    const span = tracing.span('invoke_agent claude');
    expect(span.kind).toBe(SpanKind.CLIENT);
    expect(span.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'claude',
      'gen_ai.request.model': 'sonnet',
      // The model the agent said it used, where it says one.
      'gen_ai.response.model': 'claude-sonnet-4-5-20250929',
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.conversation.id': 'S-1',
      'gen_ai.usage.input_tokens': 100,
      'gen_ai.usage.output_tokens': 20,
      'gen_ai.usage.cache_read.input_tokens': 5,
      'gen_ai.response.finish_reasons': ['end_turn'],
      'agent_rx.outcome': 'completed',
    });
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
    expect(span.events.map((event) => [event.name, event.attributes])).toEqual([['agent_rx.warning', { 'agent_rx.warning.message': 'something odd' }]]);
    const tools = tracing.children(span);
    expect(tools.map((tool) => [tool.name, tool.attributes['gen_ai.tool.call.id'], tool.attributes['agent_rx.tool.kind'], tool.status.code])).toEqual([
      ['execute_tool Bash', 'T1', 'execute', SpanStatusCode.UNSET],
      ['execute_tool Read', 'T2', 'read', SpanStatusCode.ERROR],
    ]);
    expect(tools[1]?.attributes['error.type']).toBe('tool_error');
    // Nothing the agent was told or said, unless asked: tool inputs and outputs may hold secrets.
    const recorded = JSON.stringify(tracing.spans().map((each) => [each.attributes, each.events, each.status]));
    expect(recorded).not.toContain('hunter2');
    expect(recorded).not.toContain('secret.txt');
    expect(recorded).not.toContain('Let me look');
  });

  it('records the prompt, the answer and the tools\' inputs and outputs with recordContent', async () => {
    const tracing = memoryTracing();
    await lastValueFrom(of(...run).pipe(traceRun({ tracer: tracing.tracer, recordContent: true, prompt: 'Read the secret' }), toArray()));
    const span = tracing.span('invoke_agent');
    expect(JSON.parse(String(span.attributes['gen_ai.input.messages']))).toEqual([{ role: 'user', parts: [{ type: 'text', content: 'Read the secret' }] }]);
    expect(JSON.parse(String(span.attributes['gen_ai.output.messages']))).toEqual([{ role: 'assistant', parts: [{ type: 'text', content: 'Let me look. Done.' }], finish_reason: 'end_turn' }]);
    const bash = tracing.span('execute_tool Bash');
    expect(bash.attributes).toMatchObject({ 'gen_ai.tool.call.arguments': '{"command":"cat secret.txt"}', 'gen_ai.tool.call.result': 'hunter2' });
  });

  it('sets the error status and error.type from a failure, with what a budget or a timeout says', async () => {
    const tracing = memoryTracing();
    const failed = await lastValueFrom(of<CliMessage[]>({ type: 'tool.call', toolCallId: 'T1', name: 'bash', input: null }, { type: 'tool.call', toolCallId: 'T2', name: 'bash', input: null }).pipe(budget({ toolCalls: 1 }), traceRun({ tracer: tracing.tracer })));
    expect(failed).toMatchObject({ type: 'terminal.failed', reason: 'budget' });
    const span = tracing.span('invoke_agent');
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: (failed as TerminalFailed).message });
    expect(span.attributes).toMatchObject({ 'error.type': 'budget', 'agent_rx.budget.limit': 'toolCalls', 'agent_rx.budget.max': 1, 'agent_rx.budget.used': 2, 'agent_rx.outcome': 'failed' });
    // The tool calls the run did not see end are ended with it.
    expect(tracing.children(span).map((tool) => tool.attributes['agent_rx.tool.unfinished'])).toEqual(['failed', 'failed']);
  });

  it("spans every attempt of a retry in one span, each retry an event, and ends as the last attempt did", async () => {
    const tracing = memoryTracing();
    let attempt = 0;
    const attempts = defer(() => {
      attempt += 1;
      return attempt === 1 ? of<CliMessage[]>(terminalFailed({ message: 'fake 500', httpStatus: 500, agentError: '500 internal server error' })) : of(...run);
    });
    const messages = await lastValueFrom(attempts.pipe(retryAgentRun({ delay: 1 }), traceRun({ tracer: tracing.tracer }), toArray()));
    expect(messages[0]?.type).toBe('run.retrying');
    const span = tracing.span('invoke_agent');
    expect(span.events.map((event) => event.name)).toEqual(['agent_rx.run.retrying', 'agent_rx.warning']);
    expect(span.events[0]?.attributes).toMatchObject({ 'agent_rx.retry.attempt': 2, 'agent_rx.retry.delay_ms': 1, 'error.type': 'agent-error' });
    expect(span.attributes['agent_rx.outcome']).toBe('completed');
  });

  it('ends the span as unsubscribed, not as an error, when the caller leaves', () => {
    const tracing = memoryTracing();
    const live = new Subject<CliMessage>();
    const subscription = live.pipe(traceRun({ tracer: tracing.tracer })).subscribe();
    live.next({ type: 'tool.call', toolCallId: 'T1', name: 'bash', input: null });
    expect(tracing.spans()).toHaveLength(0);
    subscription.unsubscribe();
    const span = tracing.span('invoke_agent');
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
    expect(span.attributes['agent_rx.outcome']).toBe('unsubscribed');
    expect(tracing.span('execute_tool bash').attributes['agent_rx.tool.unfinished']).toBe('unsubscribed');
  });

  it("makes the span a child of the caller's active span, and one span per subscription", async () => {
    const tracing = memoryTracing();
    const traced = of(...run).pipe(traceRun({ tracer: tracing.tracer }));
    await tracing.tracer.startActiveSpan('caller', async (caller) => {
      await lastValueFrom(traced);
      await lastValueFrom(traced);
      caller.end();
    });
    const caller = tracing.span('caller');
    const runs = tracing.spans().filter((span) => span.name === 'invoke_agent');
    expect(runs).toHaveLength(2);
    expect(runs.every((span) => span.parentSpanContext?.spanId === caller.spanContext().spanId && span.spanContext().traceId === caller.spanContext().traceId)).toBe(true);
    expect(runs[0]?.spanContext().spanId).not.toBe(runs[1]?.spanContext().spanId);
  });

  it('gives the process it starts the span\'s trace context in TRACEPARENT, under the run\'s own variables', async () => {
    const tracing = memoryTracing();
    const printed = (env?: Record<string, string>): Observable<CliMessage> =>
      processLines(process.execPath, ['-e', 'console.log(`${process.env.TRACEPARENT ?? "none"} ${process.env.TRACESTATE ?? "none"}`)'], env === undefined ? {} : { env }).pipe(
        map((item): CliMessage => (item.kind === 'line' ? { type: 'assistant', text: item.text } : { type: 'terminal.completed', stopReason: 'end_turn' })),
      );
    const seen = await lastValueFrom(printed().pipe(traceRun({ tracer: tracing.tracer }), toArray()));
    expect(seen[0]).toEqual({ type: 'assistant', text: `${traceparentOf(tracing.span('invoke_agent'))} none` });
    const mine = await lastValueFrom(printed({ TRACEPARENT: 'the caller’s own' }).pipe(traceRun({ tracer: tracing.tracer }), toArray()));
    expect(mine[0]).toEqual({ type: 'assistant', text: 'the caller’s own none' });
    const off = await lastValueFrom(printed().pipe(traceRun({ tracer: tracing.tracer, propagate: false }), toArray()));
    expect(off[0]).toEqual({ type: 'assistant', text: `${process.env['TRACEPARENT'] ?? 'none'} none` });
  });

  it('records nothing and costs no span without an SDK: the API alone is a no-op', async () => {
    const messages = await lastValueFrom(of(...run).pipe(traceRun({ tracer: trace.getTracerProvider().getTracer('nobody') }), toArray()));
    expect(messages).toEqual(run);
  });

  it('refuses options it does not know at call time', () => {
    expect(() => traceRun({ agentName: 'x' } as never)).toThrow(/traceRun has no option "agentName"/);
    expect(() => traceRun({ tracer: {} as never })).toThrow(/tracer must be an OpenTelemetry Tracer/);
    expect(() => traceSession({ recordContent: 'yes' as never })).toThrow(/traceSession's recordContent must be a boolean/);
  });
});

describe('traceSession', () => {
  const TAG = createProcessTag('AGENT_RX_TRACE_SESSION');

  it('makes a session span with an invoke_agent span per turn, and gives the session process its trace context', async () => {
    const tracing = memoryTracing();
    const commands = new Subject<{ type: 'prompt'; text: string }>();
    const messages: SessionMessage[] = [];
    let environ = '';
    const done = new Promise<void>((resolve, reject) => {
      commands.pipe(fixtureSession(() => undefined, { tag: TAG }), traceSession({ tracer: tracing.tracer, agent: 'fixture' })).subscribe({
        next: (message) => {
          messages.push(message);
          if (message.type === 'session.started') environ = readFileSync(`/proc/${message.sessionId.replace('fixture-', '')}/environ`, 'latin1');
          if (message.type === 'turn.completed' && message.turn === 1) commands.next({ type: 'prompt', text: 'hang' });
          if (message.type === 'turn.started' && message.turn === 2) commands.next({ type: 'abort' } as never);
          if (message.type === 'turn.failed') commands.complete();
        },
        error: reject,
        complete: resolve,
      });
    });
    commands.next({ type: 'prompt', text: 'echo:hello' });
    await done;
    const session = tracing.span('agent_rx.session fixture');
    expect(session.attributes).toMatchObject({ 'gen_ai.agent.name': 'fixture', 'agent_rx.turns': 2, 'agent_rx.outcome': 'completed' });
    expect(session.attributes['gen_ai.conversation.id']).toMatch(/^fixture-\d+$/);
    const turns = tracing.children(session);
    expect(turns.map((turn) => [turn.name, turn.attributes['agent_rx.turn'], turn.attributes['agent_rx.outcome'], turn.attributes['error.type']])).toEqual([
      ['invoke_agent fixture', 1, 'completed', undefined],
      ['invoke_agent fixture', 2, 'failed', 'aborted'],
    ]);
    expect(turns[0]?.attributes['gen_ai.conversation.id']).toBe(session.attributes['gen_ai.conversation.id']);
    expect(environ.split('\0')).toContain(`TRACEPARENT=${traceparentOf(session)}`);
    expect(messages.at(-1)?.type).toBe('terminal.completed');
  });

  it("continues a W3C trace context given as its context (an editor's over ACP): the session span is the remote span's child", async () => {
    const tracing = memoryTracing();
    const editor = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', tracestate: 'editor=1' };
    const commands = new Subject<SessionCommand>();
    const done = lastValueFrom(commands.pipe(fixtureSession(() => undefined, { tag: TAG }), traceSession({ tracer: tracing.tracer, agent: 'fixture', context: editor }), toArray()));
    commands.next({ type: 'prompt', text: 'echo:hello' });
    commands.complete();
    await done;
    const session = tracing.span('agent_rx.session fixture');
    expect(session.spanContext().traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(session.parentSpanContext?.spanId).toBe('b7ad6b7169203331');
    expect(session.spanContext().traceState?.get('editor')).toBe('1');
    expect(() => traceSession({ context: { traceparent: 'nope' } })).toThrow(/context.traceparent must be a W3C traceparent/);
  });
});
