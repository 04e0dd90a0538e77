/**
 * How long a provider asked us to wait before trying again. Invariant: the answer is a
 * whole number of milliseconds in [0, MAX_RETRY_AFTER_MS], or undefined when the provider
 * said nothing usable; a provider cannot park a block for longer than the cap.
 */

export const MAX_RETRY_AFTER_MS = 5 * 60_000;

const SECONDS = /^\d+(\.\d+)?$/;

/**
 * `Retry-After` as delay-seconds or as an HTTP date (RFC 9110 §10.2.3). A date in the past
 * means "now" (0); anything unparsable is ignored rather than guessed at.
 */
export function parseRetryAfter(
  value: string | null | undefined,
  now = Date.now(),
): number | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  if (SECONDS.test(text)) return clamp(Number(text) * 1000);
  // A bare number that is not delay-seconds (negative, exponent) is not a date either.
  if (/^[-+\d.eE]+$/.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : clamp(at - now);
}

/**
 * OpenAI-compatible providers also send `retry-after-ms`, which is more precise and wins
 * when present.
 */
export function retryAfterFromHeaders(
  headers: Headers | undefined,
  now = Date.now(),
): number | undefined {
  if (!headers) return undefined;
  const ms = headers.get("retry-after-ms")?.trim();
  if (ms && SECONDS.test(ms)) return clamp(Number(ms));
  return parseRetryAfter(headers.get("retry-after"), now);
}

function clamp(ms: number): number {
  return Math.min(Math.max(0, Math.ceil(ms)), MAX_RETRY_AFTER_MS);
}
