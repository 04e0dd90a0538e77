/**
 * Auto-run entry points: rows inserted, a value edited, groups added or switched to
 * auto-run. Each goes through a dispatch (mode `new`, dependencies required), so a bulk
 * insert is paced by the window like any run. See domain/auto-run.ts for the rules.
 */
import type { Db } from "@db/client";
import { stamperSpec, type TaskBackend } from "@/backends/port";
import { TableSchema } from "@/contracts/table";
import { autoRunDependencies, reArmedByEdit } from "@/domain/auto-run";
import { creditsExhausted, planLimits } from "@/limits/plans";
import { clearGroupCells } from "@/store/cells/clear";
import { discardDispatch } from "@/store/dispatches/read";
import { tableForEngine } from "@/store/engine-reads";
import { abortLocal, publishCancel } from "./cancellation";
import { heldWindow, launchRun, stampRun } from "./dispatcher";

export interface AutoFired {
  dispatchId: string | null;
  stamped: number;
}

/** Stamps and dispatches the auto-run groups (optionally only some) whose dependencies are met. */
export async function autoFire(
  db: Db,
  backend: TaskBackend,
  tableId: string,
  rowIds: string[] | null,
  only?: ReadonlySet<string>,
): Promise<AutoFired> {
  const table = await tableForEngine(db, tableId);
  if (!table) return { dispatchId: null, stamped: 0 };
  const schema = TableSchema.parse(table.schema);
  const deps = autoRunDependencies(schema, only);
  // Credits used up: auto-run stops firing paid groups until the month turns.
  if (creditsExhausted(table.plan, table.creditsCommitted))
    for (const g of schema.groups) if (g.kind === "enrichment") delete deps[g.id];
  const groupIds = Object.keys(deps);
  if (groupIds.length === 0) return { dispatchId: null, stamped: 0 };
  const run = await stampRun(db, {
    tableId,
    groupIds,
    mode: "new",
    rowIds,
    limit: null,
    window: heldWindow(backend, planLimits(table.plan).window),
    dependsOn: deps,
  });
  if (run.stamped === 0) {
    // Nothing was eligible: no run in the table's history, no events about one.
    await discardDispatch(db, run.dispatchId);
    return { dispatchId: null, stamped: 0 };
  }
  await launchRun(db, backend, tableId, run.dispatchId);
  if (run.stamping) await backend.enqueue([stamperSpec({ tableId, dispatchId: run.dispatchId })]);
  return { dispatchId: run.dispatchId, stamped: run.stamped };
}

/**
 * After `changed` columns of a row were edited: the groups reading them (and, in turn,
 * their dependents) lose their cells and outputs, an attempt of theirs still running is
 * stopped, and whatever is now eligible fires.
 */
export async function applyEdit(
  db: Db,
  backend: TaskBackend,
  tableId: string,
  rowId: string,
  changed: string[],
): Promise<AutoFired> {
  const table = await tableForEngine(db, tableId);
  if (!table) return { dispatchId: null, stamped: 0 };
  const { groupIds, clearColumns } = reArmedByEdit(TableSchema.parse(table.schema), changed);
  const removed = await clearGroupCells(db, { tableId, rowId, groupIds, clearColumns });
  const running = removed.filter((r) => r.was === "running").map((r) => r.executionId);
  if (running.length > 0) {
    abortLocal(running);
    await publishCancel(db, running);
  }
  return autoFire(db, backend, tableId, [rowId]);
}
