import { describe, expect, it } from "vitest";
import { achievedPerSec, ratioOf, w8Answers, w8Expected, w8StepOf } from "../../bench/w8-figures";

describe("W8's expectations", () => {
  it("2,000 rows: step 1 answers 800, step 2 600 of the other 1,200, step 3 the last 600", () => {
    expect(w8Answers(2_000)).toEqual([800, 600, 600]);
    expect([0, 3, 4, 6, 7, 9, 10].map(w8StepOf)).toEqual([1, 1, 2, 2, 3, 3, 1]);
  });

  it("calls 2,000 / 1,200 / 600 and credits 800·c1 + 600·c2 + 600·c3", () => {
    const e = w8Expected([800, 600, 600], [3, 2, 1]);
    expect(e.calls).toEqual([2_000, 1_200, 600]);
    expect(e.creditsByStep).toEqual([2_400, 1_200, 600]);
    expect(e.credits).toBe(800 * 3 + 600 * 2 + 600 * 1);
  });

  it("a rate over the grants' span: n grants span n - 1 gaps", () => {
    expect(achievedPerSec([0, 100, 200, 300, 400])).toBe(10);
    expect(achievedPerSec([1_000, 0, 500])).toBe(2);
    expect(achievedPerSec([5])).toBe(0);
    expect(ratioOf(4_200, 4_200)).toBe(1);
    expect(ratioOf(0, 0)).toBe(1);
    expect(ratioOf(1, 0)).toBe(Number.POSITIVE_INFINITY);
  });
});
