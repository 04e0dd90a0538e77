/**
 * How a destination's delivery is retried (API.md "Schedules, destinations, views"):
 * which answers are worth another try, and when. Pure: the clock and the dice are given.
 */

/** Retries stop this long after the delivery was made; it is then failed. */
export const RETRY_WINDOW_MS = 24 * 3_600_000;
/** No wait between two tries is longer than this. */
export const MAX_BACKOFF_MS = 3_600_000;
export const DEFAULT_RETRY_BASE_MS = 10_000;

/** 408, 429 and 5xx are worth another try; 2xx is delivered; any other status is final. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/**
 * The wait after the `attempt`-th failed try (1-based): base·2^(attempt-1), at most an
 * hour, less up to a fifth at random (`random` in [0, 1)), so receivers that failed
 * together are not retried together, and a wait never passes the hour.
 */
export function backoffMs(attempt: number, baseMs: number, random: number): number {
  const exponent = Math.min(Math.max(attempt - 1, 0), 40);
  const full = Math.min(baseMs * 2 ** exponent, MAX_BACKOFF_MS);
  return Math.round(full * (1 - 0.2 * random));
}

export type RetryVerdict = { retry: true; at: number } | { retry: false };

/** When to try again after a retryable failure, or not at all once the window is spent. */
export function nextRetry(o: {
  attempt: number;
  createdAtMs: number;
  nowMs: number;
  baseMs: number;
  random: number;
}): RetryVerdict {
  const at = o.nowMs + backoffMs(o.attempt, o.baseMs, o.random);
  return at - o.createdAtMs > RETRY_WINDOW_MS ? { retry: false } : { retry: true, at };
}
