/**
 * Reconnect delays: exponential, capped, with equal jitter. Servers that
 * failed together (one upstream restart drops them all) would otherwise
 * retry in lockstep and fail together again.
 */

/** The delay before retry number `attempt` (1-based), ms: uniform in [d/2, d] where d = min(max, initial·2^(attempt−1)). */
export function retryDelayMs(attempt: number, options: { initialDelayMs: number; maxDelayMs: number }, random: () => number = Math.random): number {
  const ceiling = Math.min(options.maxDelayMs, options.initialDelayMs * 2 ** (attempt - 1));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}
