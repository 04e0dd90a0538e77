/**
 * The grid's selection model: the header picks the rows loaded, "Select all N rows" then
 * picks every row the filter matches, and actions on that selection name the filter,
 * never ids; explicit ids go in chunks a request takes (10,000).
 */
import { describe, expect, it } from "vitest";
import type { WhereCondition } from "@/contracts/where";
import {
  allChecked,
  deleteBodies,
  headerToggled,
  idsSelection,
  isSelected,
  NO_SELECTION,
  offersMatching,
  pickedIds,
  rowToggled,
  runScope,
  type Selection,
  selectedCount,
} from "@/ui/grid/selection";

const loaded = ["a", "b", "c"];
const matching: Selection = { kind: "matching" };
const where: WhereCondition[] = [{ column: "n", op: "lt", value: 10 }];

describe("grid selection", () => {
  it("the header checkbox picks the loaded rows, and clears them when all were picked", () => {
    const all = headerToggled(NO_SELECTION, loaded);
    expect(pickedIds(all)).toEqual(new Set(loaded));
    expect(allChecked(all, loaded)).toBe(true);
    expect(headerToggled(all, loaded)).toEqual(NO_SELECTION);
    expect(allChecked(idsSelection(["a", "b"]), loaded)).toBe(false);
    expect(allChecked(NO_SELECTION, [])).toBe(false);
  });

  it("offers every matching row only when all loaded rows are picked and more match", () => {
    const all = idsSelection(loaded);
    expect(offersMatching(all, loaded, 100_000)).toBe(true);
    expect(offersMatching(all, loaded, 3)).toBe(false);
    expect(offersMatching(idsSelection(["a"]), loaded, 100_000)).toBe(false);
    expect(offersMatching(matching, loaded, 100_000)).toBe(false);
  });

  it("under matching every row is checked and the count is the filter's", () => {
    expect(isSelected(matching, "beyond-the-window")).toBe(true);
    expect(allChecked(matching, loaded)).toBe(true);
    expect(selectedCount(matching, 100_000)).toBe(100_000);
    expect(selectedCount(idsSelection(["a"]), 100_000)).toBe(1);
    expect(pickedIds(matching)).toBeNull();
  });

  it("a row unchecked under matching leaves the other loaded rows picked", () => {
    expect(pickedIds(rowToggled(matching, "b", loaded))).toEqual(new Set(["a", "c"]));
    expect(pickedIds(rowToggled(idsSelection(["a"]), "a", loaded))).toEqual(new Set());
    expect(pickedIds(rowToggled(idsSelection(["a"]), "b", loaded))).toEqual(new Set(["a", "b"]));
    expect(headerToggled(matching, loaded)).toEqual(NO_SELECTION);
  });

  it("a run of matching rows names the filter (none: every row), of ids the ids", () => {
    expect(runScope(matching, where)).toEqual({ where });
    expect(runScope(matching, [])).toEqual({});
    expect(runScope(idsSelection(["a", "b"]), where)).toEqual({ rowIds: ["a", "b"] });
  });

  it("a delete of matching rows is one request naming the filter; ids go 10,000 a request", () => {
    expect(deleteBodies(matching, where)).toEqual([{ where }]);
    expect(deleteBodies(matching, [])).toEqual([{ all: true }]);
    const ids = Array.from({ length: 25_000 }, (_, k) => `r${k}`);
    const bodies = deleteBodies(idsSelection(ids), where);
    expect(bodies.map((b) => ("rowIds" in b ? b.rowIds.length : 0))).toEqual([
      10_000, 10_000, 5_000,
    ]);
    expect(bodies.flatMap((b) => ("rowIds" in b ? b.rowIds : []))).toEqual(ids);
    expect(deleteBodies(NO_SELECTION, where)).toEqual([]);
  });
});
