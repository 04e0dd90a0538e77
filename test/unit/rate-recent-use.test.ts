/**
 * The part cap a process learns per weighted key (recent-use.ts): no cap before the key's
 * first settled call, then the most any of its last 32 settled calls used, so one long
 * answer raises it at once and lowers it only once 32 calls have passed it; keys are
 * remembered independently and in bounded number. And what an entry counts in a part of
 * the window under a cap (slots.ts `partWeight`).
 */
import { describe, expect, it } from "vitest";
import { RecentUse } from "@/limits/rate/recent-use";
import { partWeight } from "@/limits/rate/slots";

describe("the part cap a process learns (RecentUse)", () => {
  it("is none before a settled call, then the most of the key's last 32", () => {
    const recent = new RecentUse();
    expect(recent.cap("a")).toBeUndefined();
    recent.add("a", 100);
    recent.add("a", 340.2);
    recent.add("b", 7);
    expect(recent.cap("a")).toBe(341);
    expect(recent.cap("b")).toBe(7);
    for (let i = 0; i < 31; i++) recent.add("a", 90);
    expect(recent.cap("a")).toBe(341);
    recent.add("a", 90);
    expect(recent.cap("a")).toBe(90);
  });

  it("forgets the oldest key past a thousand, never a usage below zero", () => {
    const recent = new RecentUse();
    for (let i = 0; i < 1_001; i++) recent.add(`k${i}`, 5);
    expect(recent.cap("k0")).toBeUndefined();
    expect(recent.cap("k1")).toBe(5);
    expect(recent.cap("k1000")).toBe(5);
    recent.add("neg", -40);
    expect(recent.cap("neg")).toBe(0);
  });
});

describe("what an entry counts in a part of the window (partWeight)", () => {
  it("is its weight without a cap, at most the cap with one", () => {
    expect(partWeight(1_080)).toBe(1_080);
    expect(partWeight(1_080, 101)).toBe(101);
    expect(partWeight(60, 101)).toBe(60);
    expect(partWeight(60, -5)).toBe(0);
  });
});
