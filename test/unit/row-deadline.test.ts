/**
 * A row's deadline fires once after its time unless disarmed first, and the count of armed
 * deadlines follows both (row-deadline.ts).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { armedRowDeadlines, armRowDeadline } from "@/engine/row-deadline";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("armRowDeadline", () => {
  it("calls back once at its time, and no longer counts as armed after", () => {
    const before = armedRowDeadlines();
    let fired = 0;
    const d = armRowDeadline(1_000, () => fired++);
    expect(armedRowDeadlines()).toBe(before + 1);
    vi.advanceTimersByTime(999);
    expect(fired).toBe(0);
    vi.advanceTimersByTime(1);
    expect(fired).toBe(1);
    expect(armedRowDeadlines()).toBe(before);
    d.disarm();
    expect(armedRowDeadlines()).toBe(before);
  });

  it("never calls back once disarmed, and disarming twice counts once", () => {
    const before = armedRowDeadlines();
    let fired = 0;
    const d = armRowDeadline(1_000, () => fired++);
    d.disarm();
    d.disarm();
    expect(armedRowDeadlines()).toBe(before);
    vi.advanceTimersByTime(5_000);
    expect(fired).toBe(0);
  });
});
