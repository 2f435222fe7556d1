import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { share } from 'rxjs';
import { traceRun } from '../../lib/otel.js';
import { startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver.js';
import { memoryTracing, traceparentOf } from '../otel/helpers.js';
import { eventually } from '../conformance/suite.js';
import { agentPids, fleetWorld, gone } from './fleet-world.js';

// A fleet run traced on both sides: the caller's traceRun around the dispatcher's run, and the
// worker's traceWorkerRuns (its spans exported to an OTLP receiver on 127.0.0.1), in one trace; the
// agent on the worker is given the context of the span just above it.

const world = fleetWorld();
let receiver: OtlpReceiver;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
});

afterAll(async () => {
  await receiver.close();
});

/** The agent's `TRACEPARENT`, from its environment while it runs. */
const traceparentOfPid = (pid: number): string | undefined =>
  readFileSync(`/proc/${pid}/environ`, 'latin1')
    .split('\0')
    .find((entry) => entry.startsWith('TRACEPARENT='))
    ?.slice('TRACEPARENT='.length);

describe('a traced fleet run', () => {
  it("puts the worker's span under the caller's, in one trace, and gives the agent the worker span's context", async () => {
    await world.startWorker('traced-1', { queue: 'traced', otlpEndpoint: receiver.endpoint });
    const tracing = memoryTracing();
    const run = world
      .dispatcher({ queue: 'traced' })
      .run({ agent: 'pi', options: { prompt: 'hi', model: 'fake_tool' } })
      .pipe(traceRun({ tracer: tracing.tracer, agent: 'pi' }), share());
    const subscription = run.subscribe();
    const { agentPid, toolPid } = await agentPids(run);
    const agentTraceparent = traceparentOfPid(agentPid);
    subscription.unsubscribe();
    await gone([agentPid, toolPid]);
    const caller = tracing.span('invoke_agent pi');
    const worker = () => receiver.spans.find((span) => span.name === 'invoke_agent pi' && span.traceId === caller.spanContext().traceId);
    await eventually(() => worker() !== undefined, 10_000);
    expect(worker()?.parentSpanId).toBe(caller.spanContext().spanId);
    expect(agentTraceparent).toBe(`00-${caller.spanContext().traceId}-${worker()?.spanId ?? ''}-01`);
  });

  it("gives the agent the caller's own context when the worker does not trace its runs", async () => {
    await world.startWorker('untraced-1', { queue: 'untraced' });
    const tracing = memoryTracing();
    const run = world
      .dispatcher({ queue: 'untraced' })
      .run({ agent: 'pi', options: { prompt: 'hi', model: 'fake_tool' } })
      .pipe(traceRun({ tracer: tracing.tracer }), share());
    const subscription = run.subscribe();
    const { agentPid, toolPid } = await agentPids(run);
    const agentTraceparent = traceparentOfPid(agentPid);
    subscription.unsubscribe();
    await gone([agentPid, toolPid]);
    expect(agentTraceparent).toBe(traceparentOf(tracing.span('invoke_agent')));
  });
});
