/**
 * `agent-rx/otel`: OpenTelemetry traces of runs and sessions, by the GenAI semantic conventions
 * (`invoke_agent`, `execute_tool`), with the trace context passed into the agent process. It needs
 * `@opentelemetry/api` (an optional peer dependency: nothing else of agent-rx loads it) and, to
 * record anything, an OpenTelemetry SDK registered by the host.
 *
 * @example
 * import { runCodex } from 'agent-rx';
 * import { traceRun } from 'agent-rx/otel';
 * runCodex({ prompt: 'Fix the failing test' }).pipe(traceRun({ agent: 'codex' })).subscribe(render);
 *
 * @module agent-rx/otel
 */

export { traceRun } from './otel/trace-run.js';
export { traceSession } from './otel/trace-session.js';
export { traceWorkerRuns } from './otel/trace-worker-runs.js';
export { traceEnvironment, MAX_CONTENT_CHARACTERS, type TraceOptions } from './otel/spans.js';
