import { describe, expect, it } from "vitest";
import {
  backoffMs,
  isRetryableStatus,
  MAX_BACKOFF_MS,
  nextRetry,
  RETRY_WINDOW_MS,
} from "@/domain/delivery-backoff";

describe("a destination's retry rule", () => {
  it("retries 408, 429 and 5xx only", () => {
    expect([408, 429, 500, 502, 503, 599].every(isRetryableStatus)).toBe(true);
    expect([400, 401, 403, 404, 409, 410, 422, 301].some(isRetryableStatus)).toBe(false);
  });

  it("waits base·2ⁿ⁻¹, at most an hour, less up to a fifth at random", () => {
    expect([1, 2, 3, 4].map((n) => backoffMs(n, 10_000, 0))).toEqual([
      10_000, 20_000, 40_000, 80_000,
    ]);
    expect(backoffMs(30, 10_000, 0)).toBe(MAX_BACKOFF_MS);
    expect(backoffMs(1_000, 10_000, 0)).toBe(MAX_BACKOFF_MS);
    expect(backoffMs(1, 10_000, 0.999)).toBeGreaterThan(8_000);
    expect(backoffMs(1, 10_000, 0.5)).toBe(9_000);
    expect(backoffMs(30, 10_000, 0.999)).toBeLessThanOrEqual(MAX_BACKOFF_MS);
  });

  it("stops retrying once the next try would fall past 24 h after the delivery was made", () => {
    const o = { attempt: 3, createdAtMs: 0, baseMs: 10_000, random: 0 };
    expect(nextRetry({ ...o, nowMs: 1_000 })).toEqual({ retry: true, at: 41_000 });
    expect(nextRetry({ ...o, nowMs: RETRY_WINDOW_MS - 40_000 })).toMatchObject({ retry: true });
    expect(nextRetry({ ...o, nowMs: RETRY_WINDOW_MS - 39_999 })).toEqual({ retry: false });
  });
});
