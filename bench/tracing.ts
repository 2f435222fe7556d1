import { ExportResultCode } from '@opentelemetry/core';
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { fileURLToPath } from 'node:url';
import { from, lastValueFrom, type Observable } from 'rxjs';
import { runPi, type CliMessage } from '../lib/index.js';
import { traceRun } from '../lib/otel.js';
import { check, ratios, summarize, type Summary } from './util.js';

// What tracing costs: the same stream through `traceRun` (an OpenTelemetry SDK recording every span,
// exported in batches to an exporter that drops them) against the stream alone, in turns.

const AGENT = fileURLToPath(new URL('../spec/fleet/fixtures/fleet-agent.mjs', import.meta.url));

/** An exporter that takes every batch and keeps nothing: what is measured is the spans' making. */
const dropping: SpanExporter = {
  export: (_spans, done) => {
    done({ code: ExportResultCode.SUCCESS });
  },
  shutdown: () => Promise.resolve(),
};

export interface TracingResult {
  readonly perMessage: {
    readonly messages: number;
    readonly toolCalls: number;
    readonly repetitions: number;
    /** ms to read the whole stream. */
    readonly plain: Summary;
    readonly traced: Summary;
    readonly content: Summary;
    /** µs per message added by tracing, and with content recorded. */
    readonly addedUs: Summary;
    readonly contentAddedUs: Summary;
    readonly ratio: Summary;
  };
  readonly perRun: {
    readonly repetitions: number;
    /** ms from subscribe to the terminal of a replayed pi run (`tool_call_then_text`). */
    readonly plain: Summary;
    readonly traced: Summary;
    readonly addedMs: Summary;
    readonly ratio: Summary;
  };
}

/** A long run's messages: text deltas, and a tool call (call, update, result) every 20 deltas. */
function syntheticRun(messages: number): CliMessage[] {
  const run: CliMessage[] = [{ type: 'session.started', sessionId: 'bench' }];
  let call = 0;
  while (run.length < messages - 1) {
    for (let i = 0; i < 20; i += 1) run.push({ type: 'assistant', text: `word${String(i)} ` });
    call += 1;
    const toolCallId = `call-${String(call)}`;
    run.push(
      { type: 'tool.call', toolCallId, name: 'bash', input: { command: `echo ${String(call)}` }, kind: 'execute' },
      { type: 'tool.update', toolCallId, name: 'bash', output: 'partial' },
      { type: 'tool.completed', toolCallId, name: 'bash', output: `${String(call)}\n` },
    );
  }
  run.push({ type: 'terminal.completed', stopReason: 'end_turn', usage: { inputTokens: 100, outputTokens: 50, cacheReadTokens: 0, cacheWriteTokens: 0, totalTokens: 150 } });
  return run;
}

async function timed(source: Observable<CliMessage>): Promise<number> {
  const started = performance.now();
  const last = await lastValueFrom(source);
  check(last.type === 'terminal.completed', `the traced bench run ended ${last.type}`);
  return performance.now() - started;
}

export async function tracingOverhead(sizes: { readonly messages: number; readonly repetitions: number; readonly runs: number }): Promise<TracingResult> {
  const provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(dropping, { maxQueueSize: 65_536, maxExportBatchSize: 4096, scheduledDelayMillis: 50 })] });
  const tracer = provider.getTracer('bench');
  try {
    const messages = syntheticRun(sizes.messages);
    const toolCalls = messages.filter((message) => message.type === 'tool.call').length;
    const plain: number[] = [];
    const traced: number[] = [];
    const content: number[] = [];
    // One unmeasured round: the JIT warms up on every path.
    await timed(from(messages).pipe(traceRun({ tracer, recordContent: true })));
    for (let rep = 0; rep < sizes.repetitions; rep += 1) {
      const order = rep % 2 === 0 ? (['plain', 'traced', 'content'] as const) : (['content', 'traced', 'plain'] as const);
      for (const kind of order) {
        if (kind === 'plain') plain.push(await timed(from(messages)));
        if (kind === 'traced') traced.push(await timed(from(messages).pipe(traceRun({ tracer, agent: 'pi' }))));
        if (kind === 'content') content.push(await timed(from(messages).pipe(traceRun({ tracer, agent: 'pi', recordContent: true }))));
        await provider.forceFlush();
      }
    }
    const added = (with_: readonly number[]): number[] => with_.map((ms, i) => ((ms - (plain[i] ?? 0)) * 1000) / messages.length);

    const run = (): Observable<CliMessage> => runPi({ prompt: 'bench', model: 'tool_call_then_text', executable: process.execPath, executableArgs: [AGENT], env: { PI_REPLAY_SPEED: '0' } });
    const runPlain: number[] = [];
    const runTraced: number[] = [];
    await timed(run());
    for (let rep = 0; rep < sizes.runs; rep += 1) {
      for (const kind of rep % 2 === 0 ? (['plain', 'traced'] as const) : (['traced', 'plain'] as const)) {
        if (kind === 'plain') runPlain.push(await timed(run()));
        else runTraced.push(await timed(run().pipe(traceRun({ tracer, agent: 'pi' }))));
      }
    }
    return {
      perMessage: {
        messages: messages.length,
        toolCalls,
        repetitions: sizes.repetitions,
        plain: summarize(plain),
        traced: summarize(traced),
        content: summarize(content),
        addedUs: summarize(added(traced)),
        contentAddedUs: summarize(added(content)),
        ratio: ratios(traced, plain),
      },
      perRun: {
        repetitions: sizes.runs,
        plain: summarize(runPlain),
        traced: summarize(runTraced),
        addedMs: summarize(runTraced.map((ms, i) => ms - (runPlain[i] ?? 0))),
        ratio: ratios(runTraced, runPlain),
      },
    };
  } finally {
    await provider.shutdown();
  }
}
