/** `cellflow tables`: each table's auto-run switch is shown, so a paused table is seen. */
import { describe, expect, it } from "vitest";
import { tableListing } from "@/cli/commands/tables";

describe("cellflow tables listing", () => {
  it("shows the auto-run switch of each table as on or off, in its own column", () => {
    const out = tableListing([
      { id: "tbl_a", name: "Leads", rowCount: 12, autoRun: true },
      { id: "tbl_bb", name: "Paused leads", rowCount: 3, autoRun: false },
    ]);
    expect(out.split("\n")).toEqual([
      "ID      ROWS  AUTO  NAME",
      "tbl_a     12  on    Leads",
      "tbl_bb     3  off   Paused leads",
      "",
    ]);
  });

  it("says when there is no table yet", () => {
    expect(tableListing([])).toBe("no tables yet\n");
  });
});
