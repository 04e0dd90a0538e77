/**
 * A row's deadline fires once after its time unless disarmed first, and the count of armed
 * deadlines follows both (row-deadline.ts).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { RowDeadlines } from "@/engine/row-deadline";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("a row's deadline (RowDeadlines)", () => {
  it("calls back once at its time, and no longer counts as armed after", () => {
    const deadlines = new RowDeadlines();
    let fired = 0;
    const d = deadlines.arm(1_000, () => fired++);
    expect(deadlines.armed()).toBe(1);
    vi.advanceTimersByTime(999);
    expect(fired).toBe(0);
    vi.advanceTimersByTime(1);
    expect(fired).toBe(1);
    expect(deadlines.armed()).toBe(0);
    d.disarm();
    expect(deadlines.armed()).toBe(0);
  });

  it("never calls back once disarmed, and disarming twice counts once", () => {
    const deadlines = new RowDeadlines();
    let fired = 0;
    const first = deadlines.arm(1_000, () => fired++);
    deadlines.arm(1_000, () => {});
    first.disarm();
    first.disarm();
    expect(deadlines.armed()).toBe(1);
    vi.advanceTimersByTime(5_000);
    expect(fired).toBe(0);
    expect(deadlines.armed()).toBe(0);
  });
});
