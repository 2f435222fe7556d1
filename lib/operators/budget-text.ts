import type { BudgetExceeded, BudgetLimit } from '../messages.js';

/** A crossed budget limit in words: `the budget of 500 tokens was spent (512 used, 512 of them estimated)`. */
export function budgetText(exceeded: BudgetExceeded): string {
  const unpriced = exceeded.unpriced;
  if (unpriced !== undefined) {
    const model = unpriced.model === null ? 'the model (neither the agent nor the run named it)' : `the model ${JSON.stringify(unpriced.model)}`;
    return `the budget of ${amount(exceeded.limit, exceeded.max)} cannot be kept: budget.prices has no price for ${model}, no budget.price is given for the rest, and the agent reports no cost`;
  }
  const whose = exceeded.per === 'turn' ? "the turn's budget" : 'the budget';
  const estimated = exceeded.limit === 'tokens' && exceeded.spent.estimatedTokens > 0 ? `, ${Math.round(exceeded.spent.estimatedTokens)} of them estimated` : '';
  return `${whose} of ${amount(exceeded.limit, exceeded.max)} was spent (${amount(exceeded.limit, exceeded.used)} used${estimated})`;
}

function amount(limit: BudgetLimit, value: number): string {
  switch (limit) {
    case 'tokens':
      return `${Math.round(value)} tokens`;
    case 'costUsd':
      return `$${value.toFixed(value < 1 ? 4 : 2)}`;
    case 'wallMs':
      return `${Math.round(value)} ms`;
    case 'toolCalls':
      return `${value} tool call${value === 1 ? '' : 's'}`;
    case 'turns':
      return `${value} turn${value === 1 ? '' : 's'}`;
  }
}
