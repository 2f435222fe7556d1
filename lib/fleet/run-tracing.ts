import type { Observable } from 'rxjs';
import type { AgentName } from '../agent-table.js';
import type { CliMessage } from '../messages.js';
import type { TraceContext } from './run-spec.js';

/** What a worker's `traceRuns` is told of a run: its id, its agent, the worker, and the caller's trace context when it came with one. */
export interface WorkerRunTrace {
  readonly runId: string;
  readonly agent: AgentName;
  readonly worker: string;
  readonly traceContext?: TraceContext | undefined;
}

/**
 * How a worker traces its runs (`serveRuns({ traceRuns })`): the run's stream, traced. `traceWorkerRuns()`
 * of `agent-rx/otel` makes one whose span continues the caller's trace; the agent is then given
 * that span's context, not the caller's.
 */
export type RunTracing = (run: Observable<CliMessage>, about: WorkerRunTrace) => Observable<CliMessage>;
