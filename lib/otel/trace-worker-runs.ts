import type { RunTracing } from '../fleet/run-tracing.js';
import { checkTraceOptions } from './check-options.js';
import type { TraceOptions } from './spans.js';
import { traceRun } from './trace-run.js';

/**
 * How a fleet worker traces its runs (`serveRuns({ traceRuns: traceWorkerRuns() })`): `traceRun` on
 * each, its span a child of the caller's (the trace context the dispatcher put in the run's spec
 * from the caller's `traceRun`), so one trace holds the caller's span, the worker's and the agent
 * CLI's own. A run that came without one starts a trace of its own. The span says the run's id and
 * the worker (`agent_rx.run.id`, `agent_rx.worker`).
 *
 * @example
 * serveRuns({ connection: 'redis://127.0.0.1:6379', concurrency: 4, agents: { claude: {} }, traceRuns: traceWorkerRuns() });
 */
export function traceWorkerRuns(options: Omit<TraceOptions, 'agent' | 'context' | 'prompt'> = {}): RunTracing {
  checkTraceOptions('traceWorkerRuns', options);
  return (run, about) =>
    run.pipe(
      traceRun({
        ...options,
        agent: about.agent,
        ...(about.traceContext === undefined ? {} : { context: about.traceContext }),
        attributes: { ...options.attributes, 'agent_rx.run.id': about.runId, 'agent_rx.worker': about.worker },
      }),
    );
}
