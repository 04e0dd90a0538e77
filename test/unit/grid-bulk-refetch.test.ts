/**
 * The grid's answer to a run's `dispatch` event that stands for many cells (a stamping
 * page or a Stop above CELL_EVENTS_UP_TO cells writes no `cell` event per cell): the shown
 * rows it may have changed are read again, so cells show `queued` and `cancelled` without
 * their own events.
 */
import { describe, expect, it } from "vitest";
import { CELL_EVENTS_UP_TO } from "@/contracts/events";
import { REFETCH_ONE_BY_ONE, refetchFor } from "@/ui/grid/bulk-refetch";
import { GridRows, type RowView } from "@/ui/grid/model";

const row = (i: number): RowView => ({ id: `r${i}`, position: i, data: {}, cells: {} });

function shown(positions: number[]): GridRows {
  const rows = new GridRows();
  const page = { rows: positions.map(row), prevCursor: null, nextCursor: null };
  rows.reset(page, null, { start: 0, total: positions.length });
  return rows;
}

const page = (cells: number, afterPosition: number, lastPosition: number) => ({
  dispatchId: "d",
  status: "active" as const,
  stamped: { cells, rows: cells, afterPosition, lastPosition },
});

describe("the grid's refetch after a run's bulk event", () => {
  it("reads a large stamped page's shown rows by id when they are few", () => {
    const rows = shown([1, 2, 3, 10, 11, 500]);
    const r = refetchFor(page(1_000, 2, 11), (a, l) => rows.idsInPositions(a, l));
    expect(r).toEqual({ kind: "rows", rowIds: ["r3", "r10", "r11"] });
  });

  it("reads all the shown rows again when the page covers many of them", () => {
    const rows = shown(Array.from({ length: 200 }, (_, i) => i + 1));
    const r = refetchFor(page(1_000, 0, 200), (a, l) => rows.idsInPositions(a, l));
    expect(REFETCH_ONE_BY_ONE).toBeLessThan(200);
    expect(r).toEqual({ kind: "shown" });
  });

  it("reads nothing for a page none of whose rows is shown, or whose cells had their own events", () => {
    const rows = shown([1, 2, 3]);
    expect(refetchFor(page(1_000, 3, 1_003), (a, l) => rows.idsInPositions(a, l))).toEqual({
      kind: "none",
    });
    expect(refetchFor(page(CELL_EVENTS_UP_TO, 0, 3), (a, l) => rows.idsInPositions(a, l))).toEqual({
      kind: "none",
    });
  });

  it("reads all the shown rows again after a Stop's event (it names no rows), nothing after a run's end", () => {
    const rows = shown([1, 2]);
    const range = (a: number, l: number) => rows.idsInPositions(a, l);
    expect(refetchFor({ dispatchId: "d", status: "active", cancelled: 900 }, range)).toEqual({
      kind: "shown",
    });
    expect(refetchFor({ dispatchId: "d", status: "cancelled", cancelled: 51 }, range)).toEqual({
      kind: "shown",
    });
    expect(refetchFor({ dispatchId: "d", status: "completed" }, range)).toEqual({ kind: "none" });
  });

  it("reads all the shown rows again after a halt that un-ran many cells, nothing after a small one", () => {
    const rows = shown([1, 2]);
    const range = (a: number, l: number) => rows.idsInPositions(a, l);
    expect(refetchFor({ dispatchId: "d", status: "halted", unstamped: 900 }, range)).toEqual({
      kind: "shown",
    });
    expect(refetchFor({ dispatchId: "d", status: "halted" }, range)).toEqual({ kind: "none" });
  });

  it("a re-read shows the cells queued; their running and completed events apply after it", () => {
    const rows = shown([1]);
    const queued = "ex2_00000000000a0000000000000000000";
    const reread = () =>
      rows.upsert([{ ...row(1), cells: { g: { executionId: queued, status: "queued" } } }], {
        onlyShown: true,
      });
    reread();
    expect(rows.get("r1")?.cells.g?.status).toBe("queued");
    const cell = { rowId: "r1", groupId: "g", executionId: queued } as const;
    expect(rows.applyCell({ ...cell, attempt: 1, status: "running" })).toBe(true);
    expect(rows.applyCell({ ...cell, attempt: 1, status: "completed", outcome: "ok" })).toBe(true);
    // A re-read that started before the end must not take it back.
    reread();
    expect(rows.get("r1")?.cells.g?.status).toBe("completed");
  });
});
