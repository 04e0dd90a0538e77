/**
 * A carrier's auto-run stamp: the next auto-run group of the row it holds, with no run
 * request behind it. Invariant: it never stamps on a row a Stop covers until a run
 * request made after the Stop stamped the row (see `stamp.ts`, `hold`); being no request,
 * its cell inherits the row's newest request number and lifts no hold. The table's stop lock,
 * taken shared in its own statement first, makes that check see every committed Stop and
 * keeps a Stop from committing between it and the stamp. It stamps nothing while the
 * table's auto-run switch is off, read in the stamping statement; turning the switch off
 * takes the stop lock exclusively, so once that answered no carrier's stamp commits.
 */
import type { Db } from "@db/client";
import { retryOnConflict } from "@db/sqlstate";
import { lockAgainstStop } from "../stops/stop-lock";
import { stampPage } from "./stamp";
import type { CellRef } from "./transition";

export async function autoStamp(
  db: Db,
  cell: CellRef & {
    tableId: string;
    dependsOn: string[];
    /** The group and the groups it reads from, transitively. */
    upstream: readonly string[];
  },
): Promise<number> {
  return retryOnConflict(() =>
    db.transaction(async (tx) => {
      await lockAgainstStop(tx, cell.tableId);
      const stamped = await stampPage(tx, {
        tableId: cell.tableId,
        dispatchId: null,
        groupIds: [cell.groupId],
        mode: "new",
        rowIds: [cell.rowId],
        afterPosition: -1,
        maxRows: 1,
        dependsOn: { [cell.groupId]: cell.dependsOn },
        hold: { upstream: cell.upstream },
        switched: true,
      });
      return stamped.cells;
    }),
  );
}
