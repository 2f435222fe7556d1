import type { Span } from '@opentelemetry/api';
import { context, SpanKind, SpanStatusCode, trace } from './api.js';
import { Observable, type MonoTypeOperatorFunction } from 'rxjs';
import type { SessionMessage } from '../messages.js';
import { currentRunScope, RunScope } from '../process/run-scope.js';
import { checkTraceOptions } from './check-options.js';
import { InvocationSpan, parentOf, traceEnvironment, tracerOf, usageAttributes, type TraceOptions } from './spans.js';

/**
 * Traces a session: one `agent_rx.session` span for the whole session (its conversation id, its
 * turns, its total usage, how it ended), and under it one `invoke_agent` span per turn, with the
 * turn's `execute_tool` spans, usage, finish reason or failure, as `traceRun` makes for a run.
 * Commands that were dropped, and the session's sleeps and wakes (`idleMs`), are events on the
 * session's span. The agent process gets the session span's trace context (`TRACEPARENT`), and so
 * does every process a sleeping session wakes.
 *
 * @example
 * commands.pipe(claudeCodeSession(), traceSession({ agent: 'claude' })).subscribe(render);
 */
export function traceSession(options: TraceOptions = {}): MonoTypeOperatorFunction<SessionMessage> {
  checkTraceOptions('traceSession', options);
  return (source) =>
    new Observable<SessionMessage>((subscriber) => {
      const tracer = tracerOf(options);
      const agent = options.agent;
      const parent = parentOf(options.context);
      const session: Span = tracer.startSpan(
        agent === undefined ? 'agent_rx.session' : `agent_rx.session ${agent}`,
        {
          kind: SpanKind.INTERNAL,
          attributes: {
            ...(agent === undefined ? {} : { 'gen_ai.agent.name': agent }),
            ...(options.model === undefined ? {} : { 'gen_ai.request.model': options.model }),
            ...(options.provider === undefined ? {} : { 'gen_ai.provider.name': options.provider }),
            ...options.attributes,
          },
        },
        parent,
      );
      const sessionContext = trace.setSpan(parent, session);
      const scope = new RunScope(currentRunScope(), options.propagate === false ? {} : traceEnvironment(session.spanContext()));
      let conversationId: string | undefined;
      let turn: InvocationSpan | null = null;
      let turns = 0;
      let ended = false;

      const end = (outcome: string): void => {
        if (ended) return;
        ended = true;
        turn?.abandoned(outcome === 'errored' ? 'errored' : outcome === 'unsubscribed' ? 'unsubscribed' : 'incomplete');
        turn = null;
        session.setAttributes({ 'agent_rx.turns': turns, 'agent_rx.outcome': outcome });
        session.end();
      };

      const see = (message: SessionMessage): void => {
        switch (message.type) {
          case 'session.started':
          case 'session.resumed':
            conversationId = message.sessionId;
            session.setAttribute('gen_ai.conversation.id', message.sessionId);
            if (message.type === 'session.resumed' && message.resumeMs !== undefined) session.addEvent('agent_rx.session.resumed', { 'agent_rx.session.resume_ms': message.resumeMs });
            return;
          case 'session.passivated':
            session.addEvent('agent_rx.session.passivated', { 'agent_rx.session.snapshot_bytes': message.snapshotBytes, 'agent_rx.session.idle_ms': message.idleMs });
            return;
          case 'input.dropped':
            session.addEvent('agent_rx.input.dropped', { 'agent_rx.input.kind': message.kind, 'agent_rx.input.reason': message.reason });
            return;
          case 'turn.started':
            turns = message.turn;
            turn?.abandoned('incomplete');
            turn = new InvocationSpan(tracer, sessionContext, options, { 'agent_rx.turn': message.turn, ...(conversationId === undefined ? {} : { 'gen_ai.conversation.id': conversationId }) }, message.prompt);
            // Seen before the prompt goes: a protocol that carries a trace per prompt (ACP) gives the turn's.
            if (options.propagate !== false) scope.setTurnEnv(traceEnvironment(turn.span.spanContext()));
            return;
          case 'turn.completed':
            turn?.completed(message.usage, message.stopReason, conversationId);
            turn = null;
            scope.setTurnEnv(undefined);
            return;
          case 'turn.failed':
            turn?.failed(message);
            turn = null;
            scope.setTurnEnv(undefined);
            return;
          case 'terminal.completed':
            if (message.usage !== undefined) session.setAttributes(usageAttributes(message.usage));
            end('completed');
            return;
          case 'terminal.failed':
            session.setAttribute('error.type', message.reason);
            session.setStatus({ code: SpanStatusCode.ERROR, message: message.message });
            end('failed');
            return;
          default:
            if (turn !== null) turn.see(message);
            else if (message.type === 'agent.warning') session.addEvent('agent_rx.warning', { 'agent_rx.warning.message': message.message });
            return;
        }
      };

      const subscription = context.with(sessionContext, () =>
        scope.run(() =>
          source.subscribe({
            next: (message) => {
              see(message);
              subscriber.next(message);
            },
            error: (error: unknown) => {
              session.recordException(error instanceof Error ? error : String(error));
              session.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
              end('errored');
              subscriber.error(error);
            },
            complete: () => {
              end('incomplete');
              subscriber.complete();
            },
          }),
        ),
      );
      return () => {
        subscription.unsubscribe();
        end('unsubscribed');
      };
    });
}
