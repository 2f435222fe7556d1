import { context } from './api.js';
import { Observable } from 'rxjs';
import type { CliMessage } from '../messages.js';
import { currentRunScope, RunScope } from '../process/run-scope.js';
import { checkTraceOptions } from './check-options.js';
import { InvocationSpan, parentOf, traceEnvironment, tracerOf, type TraceOptions } from './spans.js';

/**
 * Traces a run: one `invoke_agent` span per subscription (OpenTelemetry's GenAI conventions), with
 * an `execute_tool` span per tool call under it. The span carries the agent, the model, the
 * conversation id, the token counts and the finish reason; a failure sets its status to error and
 * `error.type` to the terminal's reason; the agent's own retries, warnings, permission requests and
 * the caller's retries (`run.retrying`, with `retryAgentRun()` before this operator) are events on
 * it. An unsubscribe ends it as `agent_rx.outcome: unsubscribed`, not as an error. What the agent
 * was told and said is recorded only with `recordContent`.
 *
 * The agent process gets the span's trace context (`TRACEPARENT`, `TRACESTATE`), so a CLI that
 * exports its own spans continues the trace: see `agentTelemetry` for pointing it at a collector.
 * Messages pass through unchanged; without an OpenTelemetry SDK registered, nothing is recorded.
 *
 * @example
 * runClaudeCode({ prompt: 'Fix the failing test' })
 *   .pipe(retryAgentRun(), traceRun({ agent: 'claude', model: 'claude-sonnet-4-5' }))
 *   .subscribe(render);
 */
export function traceRun(options: TraceOptions = {}): <T extends CliMessage>(source: Observable<T>) => Observable<T> {
  checkTraceOptions('traceRun', options);
  return <T extends CliMessage>(source: Observable<T>) =>
    new Observable<T>((subscriber) => {
      const parent = parentOf(options.context);
      const invocation = new InvocationSpan(tracerOf(options), parent, options, options.attributes ?? {}, options.prompt);
      const scope = new RunScope(currentRunScope(), options.propagate === false ? {} : traceEnvironment(invocation.span.spanContext()));
      const subscription = context.with(invocation.context, () =>
        scope.run(() =>
          source.subscribe({
            next: (message) => {
              // The span ends before the caller hears the end: what it exports next holds it.
              if (message.type === 'terminal.completed') invocation.completed(message.usage, message.stopReason, message.sessionId);
              else if (message.type === 'terminal.failed') invocation.failed(message);
              else invocation.see(message);
              subscriber.next(message);
            },
            error: (error: unknown) => {
              invocation.abandoned('errored', error);
              subscriber.error(error);
            },
            complete: () => {
              invocation.abandoned('incomplete');
              subscriber.complete();
            },
          }),
        ),
      );
      return () => {
        subscription.unsubscribe();
        invocation.abandoned('unsubscribed');
      };
    });
}
