import * as z from 'zod';
import type { BudgetOptions } from '../../operators/budget.js';

/** A budget given as an option of a run or a session: `budget()`'s limits, `per`, `price` and `prices` (its scheduler is the default one). */
export type AgentBudget = Omit<BudgetOptions, 'scheduler'>;

/**
 * Where an agent CLI sends its own OpenTelemetry (its spans, logs and metrics): an OTLP/HTTP
 * endpoint (`http://127.0.0.1:4318`, the signal paths `/v1/traces`, `/v1/logs` and `/v1/metrics`
 * added), in JSON (`http/json`) or protobuf (`http/protobuf`, the default).
 */
export interface AgentTelemetry {
  readonly endpoint: string;
  readonly protocol?: 'http/json' | 'http/protobuf';
}

/** The options every run and session takes to cap its spending and to have its CLI export its own telemetry. */
export interface WatchOptions {
  /**
   * Limits on what the run (or the session, or each of its turns) may spend: the `budget()`
   * operator applied to it, with the agent's own caps as a second line where it has them (Claude
   * Code's `--max-budget-usd`). `costUsd` needs a `price` (or `prices` by model) unless the agent
   * reports its cost (Claude Code): refused at call time otherwise, as is a `model` option that
   * `prices` does not price.
   */
  readonly budget?: AgentBudget | undefined;
  /**
   * Points the CLI's own OpenTelemetry export at an OTLP/HTTP collector, the way that CLI takes it
   * (Claude Code, Gemini CLI and Qwen Code: environment variables; Codex: its `otel`
   * configuration). With `traceRun` or `traceSession` around the run, the CLIs that read
   * `TRACEPARENT` (Claude Code, Codex) put their spans in the caller's trace. Refused at call time
   * for an agent that exports none (pi).
   */
  readonly telemetry?: AgentTelemetry | undefined;
}

const limit = z.number({ error: 'must be a number' }).optional();
const PRICE = z.strictObject({ input: z.number(), output: z.number(), cacheRead: z.number().optional(), cacheWrite: z.number().optional() });

/** The schema of {@link WatchOptions}: its values are checked precisely by `budget()` and by the agent's own mapping. */
export const WATCH_OPTIONS = {
  budget: z
    .strictObject(
      {
        tokens: limit,
        costUsd: limit,
        wallMs: limit,
        toolCalls: limit,
        turns: limit,
        per: z.enum(['total', 'turn']).optional(),
        price: PRICE.optional(),
        prices: z.record(z.string(), PRICE).optional(),
      },
      { error: 'must be an object of limits (tokens, costUsd, wallMs, toolCalls, turns), with per, price and prices' },
    )
    .optional(),
  telemetry: z
    .strictObject(
      {
        endpoint: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }),
        protocol: z.enum(['http/json', 'http/protobuf']).optional(),
      },
      { error: "must be { endpoint: 'http://…', protocol?: 'http/json' | 'http/protobuf' }" },
    )
    .optional(),
};

/** An endpoint without its trailing slashes, for appending `/v1/<signal>`. */
export function endpointBase(telemetry: AgentTelemetry): string {
  return telemetry.endpoint.replace(/\/+$/, '');
}
