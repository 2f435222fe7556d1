import type { Usage } from '../messages.js';

/** `total` plus `next`, count by count; a cost is kept when either has one. */
export function addUsage(total: Usage | undefined, next: Usage): Usage {
  if (total === undefined) return next;
  const sum: Usage = {
    inputTokens: total.inputTokens + next.inputTokens,
    outputTokens: total.outputTokens + next.outputTokens,
    cacheReadTokens: total.cacheReadTokens + next.cacheReadTokens,
    cacheWriteTokens: total.cacheWriteTokens + next.cacheWriteTokens,
    totalTokens: total.totalTokens + next.totalTokens,
  };
  return total.cost === undefined && next.cost === undefined ? sum : { ...sum, cost: (total.cost ?? 0) + (next.cost ?? 0) };
}
