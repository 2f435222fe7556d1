import type { Observable } from 'rxjs';
import * as z from 'zod';
import type { AgentDefinition } from '../agents/definition.js';
import { checkOptions } from '../agents/shared/option-schemas.js';
import { WATCH_OPTIONS, type WatchOptions } from '../agents/shared/watch-options.js';
import type { SessionMessage } from '../messages.js';
import { agentBudget } from '../operators/budget.js';

/** A run's or session's options without `budget` and `telemetry`, made into what the agent takes, and the budget to pipe its stream through. */
export interface Watched<O> {
  readonly options: O;
  readonly budget: (<T extends SessionMessage>(source: Observable<T>) => Observable<T>) | undefined;
}

const WATCH_SCHEMA = z.object(WATCH_OPTIONS);

/**
 * Takes `budget` and `telemetry` out of `options`: the budget becomes an operator (checked now: a
 * `costUsd` without a `price` for an agent that reports no cost is a `TypeError`) and the agent's
 * own caps (set unless the caller set them); the telemetry becomes the variables and options that
 * make the agent's CLI export its own (refused with a `TypeError` for an agent that has none).
 */
export function watched<O>(definition: AgentDefinition<string, never, never, unknown>, options: O, what: string): Watched<O> {
  const { budget, telemetry, ...rest } = (options ?? {}) as O & WatchOptions;
  if (budget === undefined && telemetry === undefined) return { options, budget: undefined };
  checkOptions(what, WATCH_SCHEMA, { budget, telemetry });
  let plain: Record<string, unknown> = rest;
  let operator: Watched<O>['budget'];
  if (budget !== undefined) {
    // Every agent's runs and sessions name their model with `model`, where the caller chose one.
    const asked = (rest as { model?: unknown }).model;
    const model = typeof asked === 'string' ? asked : undefined;
    operator = agentBudget(budget, { name: definition.displayName, reportsCost: definition.spending?.reportsCost === true, model });
    plain = { ...definition.spending?.caps?.(budget), ...plain };
  }
  if (telemetry !== undefined) {
    if (definition.telemetry === undefined) {
      throw new TypeError(`agent-rx: ${definition.displayName} exports no telemetry of its own: telemetry is not taken (traceRun and traceSession still trace its runs)`);
    }
    const settings = definition.telemetry(telemetry, plain);
    const env = settings.env === undefined ? {} : { env: { ...(plain['env'] as Readonly<Record<string, string | undefined>> | undefined), ...settings.env } };
    plain = { ...plain, ...settings.options, ...env };
  }
  return { options: plain as O, budget: operator };
}
