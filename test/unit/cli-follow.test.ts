/**
 * `run --follow` reads its run's counts after the events that move them: with no `cell`
 * event per cell at stamping or at a large Stop (issue 33), the run's `dispatch` and
 * `progress` events must wake it too, and only the run's own end reads at once.
 */
import { describe, expect, it } from "vitest";
import { readAfter, rowsNote } from "@/cli/follow";

const ev = (event: string, data: unknown) => ({ id: 1, event, data });

describe("what wakes run --follow", () => {
  it("reads at once on its run's end or limit, soon on any change of cells", () => {
    expect(readAfter(ev("dispatch", { dispatchId: "d", status: "completed" }), "d")).toBe("now");
    expect(
      readAfter(
        ev("limit", { dispatchId: "d", reason: "credits", haltReason: "x", message: "m" }),
        "d",
      ),
    ).toBe("now");
    const page = {
      dispatchId: "d",
      status: "active",
      stamped: { cells: 2000, rows: 1000, afterPosition: 0, lastPosition: 1000 },
    };
    expect(readAfter(ev("dispatch", page), "d")).toBe("soon");
    expect(
      readAfter(ev("dispatch", { dispatchId: "d", status: "active", cancelled: 99 }), "d"),
    ).toBe("soon");
    expect(readAfter(ev("dispatch", { dispatchId: "other", status: "completed" }), "d")).toBe(
      "soon",
    );
    expect(readAfter(ev("progress", { rows: 1, groups: [] }), "d")).toBe("soon");
    expect(readAfter(ev("schema", { schemaVersion: 2, name: "t" }), "d")).toBe("no");
    expect(readAfter(ev("tick", {}), "d")).toBe("no");
  });
});

describe("what run --follow says of a bulk rows event", () => {
  it("prints one line with the count for a bulk insert or delete, nothing for a listed one", () => {
    const bulk = (op: string, count: number) => ev("rows", { op, rowIds: [], count, bulk: true });
    expect(rowsNote(bulk("insert", 25_000))).toBe("rows: 25,000 inserted");
    expect(rowsNote(bulk("delete", 5_000))).toBe("rows: 5,000 deleted");
    expect(rowsNote(ev("rows", { op: "insert", rowIds: ["a"] }))).toBeNull();
    expect(rowsNote(ev("cell", {}))).toBeNull();
    // Rows deleted take their cells with them: the run's counts are read again.
    expect(readAfter(bulk("delete", 5_000), "d")).toBe("soon");
  });
});
