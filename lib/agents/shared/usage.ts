import type { Usage } from '../../messages.js';

/** Token counts as an agent reports them, before they are named the contract's way. */
export interface TokenCounts {
  readonly input: number;
  readonly output: number;
  readonly cacheRead?: number | undefined;
  readonly cacheWrite?: number | undefined;
  /** When the agent does not give it: the sum of the four counts. */
  readonly total?: number | undefined;
  /** In the provider's currency unit, when the agent reports one. */
  readonly cost?: number | undefined;
}

/** The contract's `Usage` for one model call. */
export function usageOf(counts: TokenCounts): Usage {
  const cacheRead = counts.cacheRead ?? 0;
  const cacheWrite = counts.cacheWrite ?? 0;
  const usage: Usage = {
    inputTokens: counts.input,
    outputTokens: counts.output,
    cacheReadTokens: cacheRead,
    cacheWriteTokens: cacheWrite,
    totalTokens: counts.total ?? counts.input + counts.output + cacheRead + cacheWrite,
  };
  return counts.cost === undefined ? usage : { ...usage, cost: counts.cost };
}
