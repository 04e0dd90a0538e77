/** The grid's event-merging rule: an event for an older attempt never overwrites a newer one. */
import { describe, expect, it } from "vitest";
import {
  accepts,
  type CellEvent,
  type CellView,
  compareAttempts,
  mergeCell,
} from "@/ui/grid/merge";
import { GridRows } from "@/ui/grid/model";

const older = "ex2_00000000000a1111111111111111111";
const newer = "ex2_00000000000b0000000000000000000";
const legacy = "ex_9f3c2a";

const ev = (executionId: string, status: CellEvent["status"], outputs?: Record<string, unknown>) =>
  ({ rowId: "r", groupId: "g", executionId, status, ...(outputs ? { outputs } : {}) }) as CellEvent;

const cv = (executionId: string, status: CellView["status"]): CellView => ({ executionId, status });

describe("merging cell events", () => {
  it("a gone event (status null) drops the cell, unless it is an older attempt's", () => {
    const current: CellView = { executionId: older, status: "queued" };
    expect(mergeCell(current, ev(older, null)).cell).toBeNull();
    expect(mergeCell(current, ev(newer, null)).cell).toBeNull();
    const rerun: CellView = { executionId: newer, status: "running" };
    expect(mergeCell(rerun, ev(older, null)).cell).toBe(rerun);
  });

  it("the grid shows no cell for a group whose cell is gone", () => {
    const rows = new GridRows();
    rows.reset(
      {
        rows: [
          {
            id: "r",
            position: 0,
            data: {},
            cells: { g: { status: "queued", executionId: older } },
          },
        ],
        prevCursor: null,
        nextCursor: null,
      },
      null,
      { start: 0, total: 1 },
    );
    expect(rows.applyCell(ev(older, null))).toBe(true);
    expect(rows.get("r")?.cells.g).toBeUndefined();
  });

  it("orders ex2_ attempts by id, before any legacy id, and legacy ids not at all", () => {
    expect(compareAttempts(newer, older)).toBe(1);
    expect(compareAttempts(older, newer)).toBe(-1);
    expect(compareAttempts(older, older)).toBe(0);
    expect(compareAttempts(older, legacy)).toBe(1);
    expect(compareAttempts(legacy, "ex_other")).toBeNull();
  });

  it("an older attempt's event, even a terminal one arriving late, never overwrites a newer attempt", () => {
    const current: CellView = { executionId: newer, status: "running" };
    const late = mergeCell(current, ev(older, "completed", { title: "stale" }));
    expect(late.cell).toBe(current);
    expect(late.outputs).toBeNull();
    expect(accepts(current, cv(older, "queued"))).toBe(false);
  });

  it("a newer attempt replaces an older one whatever their states", () => {
    const current: CellView = { executionId: older, status: "completed", outcome: "ok" };
    const next = mergeCell(current, ev(newer, "queued"));
    expect(next.cell).toEqual({ executionId: newer, status: "queued" });
  });

  it("within one attempt, a terminal state is final: a replayed running event does not revive it", () => {
    const done: CellView = { executionId: older, status: "completed", outcome: "ok" };
    expect(accepts(done, cv(older, "running"))).toBe(false);
    expect(accepts(done, cv(older, "queued"))).toBe(false);
    expect(accepts({ executionId: older, status: "running" }, cv(older, "completed"))).toBe(true);
    // Resume: paused → queued → running again under the same execution id.
    expect(accepts({ executionId: older, status: "paused" }, cv(older, "queued"))).toBe(true);
  });

  it("hands back the outputs an accepted event carries, for the row", () => {
    const r = mergeCell(undefined, ev(newer, "running", { title: "partial" }));
    expect(r.outputs).toEqual({ title: "partial" });
    expect(r.cell).toEqual({ executionId: newer, status: "running" });
  });

  it("with legacy ids that have no order, the latest event to arrive wins", () => {
    expect(accepts({ executionId: legacy, status: "completed" }, cv("ex_other", "queued"))).toBe(
      true,
    );
  });
});

describe("rows read from the API after events", () => {
  it("a read that predates a finished re-run keeps the outputs the re-run's event wrote", () => {
    const rows = new GridRows();
    const old = "ex2_000000000001aa";
    const rerun = "ex2_000000000002bb";
    rows.reset(
      {
        rows: [
          {
            id: "r1",
            position: 0,
            data: { n: 1, doubled: 2 },
            cells: { g: { status: "completed", executionId: old } },
          },
        ],
        prevCursor: null,
        nextCursor: null,
      },
      null,
      { start: 0, total: 1 },
    );
    // The edit's re-run finishes, and its event arrives before the edit's own answer.
    rows.applyCell({
      rowId: "r1",
      groupId: "g",
      status: "completed",
      executionId: rerun,
      attempt: 1,
      outputs: { doubled: 100 },
    });
    // The edit's answer: n changed, the group's re-run only just stamped.
    rows.upsert([
      {
        id: "r1",
        position: 0,
        data: { n: 50 },
        cells: { g: { status: "queued", executionId: rerun } },
      },
    ]);
    expect(rows.get("r1")?.data).toEqual({ n: 50, doubled: 100 });
    expect(rows.get("r1")?.cells.g?.status).toBe("completed");
    // A later read that is newer than the event wins as usual.
    const later = "ex2_000000000003cc";
    rows.upsert([
      {
        id: "r1",
        position: 0,
        data: { n: 7 },
        cells: { g: { status: "queued", executionId: later } },
      },
    ]);
    expect(rows.get("r1")?.data).toEqual({ n: 7 });
  });
});
