"use client";
/**
 * The grid page's selection (`selection.ts`) and what its toolbar buttons do with it.
 * Guarantees: a `matching` selection is dropped when the filter changes (it named the
 * old filter's rows); Run selected sends the ids or the filter, never a list of the
 * matching rows; Delete selected asks first, naming the count, then sends the bulk
 * delete (ids in chunks of 10,000, or one request naming the filter), never one request
 * per row.
 */
import { useEffect, useState } from "react";
import type { WhereCondition } from "@/contracts/where";
import { answer, api, describeError } from "../api";
import {
  deleteBodies,
  isMatching,
  NO_SELECTION,
  pickedIds,
  runScope,
  type Selection,
  selectedCount,
} from "./selection";
import type { PageMessage, RunRequest } from "./use-run-control";
import type { LiveTable } from "./use-table";

export function useSelection(o: {
  tableId: string;
  /** The filter shown (a view's, when one is open). */
  where: WhereCondition[];
  /** Whether a filter or a view narrows the rows. */
  filtered: boolean;
  /** The rows the filter matches. */
  total: number;
  live: Pick<LiveTable, "deleted" | "changed">;
  run(req: RunRequest): void;
  message(m: PageMessage): void;
}) {
  const { tableId, where, filtered, total, live } = o;
  const [selected, setSelected] = useState<Selection>(NO_SELECTION);
  const count = selectedCount(selected, total);

  const filterKey = JSON.stringify([where, filtered]);
  // biome-ignore lint/correctness/useExhaustiveDependencies: the key stands for the filter
  useEffect(() => {
    setSelected((s) => (isMatching(s) ? NO_SELECTION : s));
  }, [filterKey]);

  const runSelected = () => o.run({ mode: "all", ...runScope(selected, where) });

  const deleteSelected = async () => {
    const which = isMatching(selected) && filtered ? " matching the filter" : "";
    const question = `Delete ${count.toLocaleString()} rows${which}? Their running cells stop.`;
    if (!window.confirm(question)) return;
    const ids = pickedIds(selected);
    let deleted = 0;
    try {
      for (const body of deleteBodies(selected, where)) {
        const r = await answer(
          api.POST("/api/tables/{id}/rows/delete", { params: { path: { id: tableId } }, body }),
        );
        deleted += r.deleted;
      }
      o.message({ text: `Deleted ${deleted.toLocaleString()} rows.`, error: false });
    } catch (err) {
      o.message({ text: describeError(err), error: true });
    }
    // What was deleted leaves the grid (a partial delete too); the events say it again.
    if (ids) live.deleted([...ids]);
    else live.changed();
    setSelected(NO_SELECTION);
  };

  return { selected, setSelected, count, runSelected, deleteSelected };
}
