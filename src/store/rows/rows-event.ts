import { ROW_EVENT_IDS_UP_TO, type RowsEventData } from "@/contracts/events";

/**
 * The `rows` event of an insert or delete of these rows. Invariant: no event lists more
 * than ROW_EVENT_IDS_UP_TO ids; past that it carries their number (`bulk`), so an import
 * or a bulk delete writes events of a few bytes however many rows each statement moved.
 */
export function rowsEventOf(op: "insert" | "delete", rowIds: readonly string[]): RowsEventData {
  if (rowIds.length <= ROW_EVENT_IDS_UP_TO) return { op, rowIds: [...rowIds] };
  return { op, rowIds: [], count: rowIds.length, bulk: true };
}
