/**
 * Auto-run entry points: rows inserted, a value edited (engine/row-edit.ts), groups added
 * or switched to auto-run, the table's auto-run switch turned back on with a backfill.
 * None fires while the table's switch is off: the auto-fire's run is refused when it is
 * created (store/dispatches/create.ts). Each goes through a dispatch (mode `new`, dependencies
 * required), so a bulk insert is paced by the window like any run. See
 * domain/auto-run.ts for the rules. The stamps and the hand-out are two steps, so a
 * caller can stamp inside its own transaction and hand out once that committed: carriers
 * are enqueued after the stamps they carry are committed, never before. Each verb takes
 * the request side's handle (`RequestEngine`) and its own request; the stamps go through
 * the handle's database and never stop at its race points (an auto-fire has none).
 */
import { stamperSpec } from "@/backends/port";
import { TableSchema } from "@/contracts/table";
import { autoRunDependencies } from "@/domain/auto-run";
import { isLookupGroup } from "@/domain/table-schema";
import { creditsExhausted, planLimits } from "@/limits/plans";
import { discardDispatch } from "@/store/dispatches/read";
import { type EngineTable, tableForEngine } from "@/store/engine-reads";
import { heldWindow, launchRun, stampAutoFireRun, startRun } from "./dispatcher";
import type { RequestEngine } from "./handle";

export interface AutoFired {
  dispatchId: string | null;
  stamped: number;
}

/** What `stampAutoFire` stamped, for `launchAutoFire` once it committed. */
export interface AutoStamped extends AutoFired {
  /** More rows than a request stamps: a background job stamps the rest. */
  stamping: boolean;
}

const NOTHING: AutoStamped = { dispatchId: null, stamped: 0, stamping: false };

/**
 * The rows an auto-fire stamps (null: every row, or with `afterPosition` every row placed
 * after it), and optionally only some auto-run groups.
 */
interface AutoFireRows {
  rowIds: string[] | null;
  afterPosition?: number;
  only?: ReadonlySet<string>;
}

/** Stamps and dispatches the auto-run groups (optionally only some) whose dependencies are met. */
export async function autoFire(
  engine: RequestEngine,
  request: AutoFireRows & { tableId: string },
): Promise<AutoFired> {
  const { tableId, ...rows } = request;
  const table = await tableForEngine(engine.db, tableId);
  if (!table) return { dispatchId: null, stamped: 0 };
  const run = await stampAutoFire(engine, { table, ...rows });
  await launchAutoFire(engine, { tableId, run });
  return { dispatchId: run.dispatchId, stamped: run.stamped };
}

/**
 * The auto-fire's run and its stamps, handing nothing out: in `engine.db`'s transaction
 * when it is one (the run and its cells then commit with whatever else that transaction
 * writes). The backend only holds the run's window to what it runs of one table at once.
 */
export async function stampAutoFire(
  engine: RequestEngine,
  request: AutoFireRows & { table: EngineTable },
): Promise<AutoStamped> {
  const { db, backend } = engine;
  const { table, rowIds, afterPosition, only } = request;
  const schema = TableSchema.parse(table.schema);
  const deps = autoRunDependencies(schema, only);
  // Credits used up: auto-run stops firing paid groups until the month turns.
  if (creditsExhausted(table.plan, table.creditsCommitted))
    for (const g of schema.groups) if (isLookupGroup(g)) delete deps[g.id];
  const groupIds = Object.keys(deps);
  if (groupIds.length === 0) return NOTHING;
  // Refused (null) while the table's auto-run switch is off: nothing fires by itself.
  const run = await stampAutoFireRun(
    { db },
    {
      tableId: table.id,
      groupIds,
      mode: "new",
      rowIds,
      ...(afterPosition === undefined ? {} : { afterPosition }),
      limit: null,
      window: heldWindow(backend, planLimits(table.plan).window),
      dependsOn: deps,
    },
  );
  if (!run) return NOTHING;
  if (run.stamped === 0) {
    // Nothing was eligible: no run in the table's history, no events about one.
    await discardDispatch(db, run.dispatchId);
    return NOTHING;
  }
  return { dispatchId: run.dispatchId, stamped: run.stamped, stamping: run.stamping };
}

/** Hands out the first window of a committed auto-fire (and its background stamping). */
export async function launchAutoFire(
  engine: RequestEngine,
  request: { tableId: string; run: AutoStamped },
): Promise<void> {
  const { tableId, run } = request;
  if (!run.dispatchId) return;
  await launchRun(engine, { tableId, dispatchId: run.dispatchId });
  if (run.stamping)
    await engine.backend.enqueue([stamperSpec({ tableId, dispatchId: run.dispatchId })]);
}

/**
 * The backfill of the auto-run switch turned back on: one run, mode `new`, of the table's
 * auto-run groups with their dependencies required, as auto-run would have stamped them.
 * null when the table has no auto-run group (or is gone).
 */
export async function backfillAutoRun(
  engine: RequestEngine,
  request: { tableId: string },
): Promise<{ dispatchId: string } | null> {
  const table = await tableForEngine(engine.db, request.tableId);
  if (!table) return null;
  const deps = autoRunDependencies(TableSchema.parse(table.schema));
  const groupIds = Object.keys(deps);
  if (groupIds.length === 0) return null;
  const run = await startRun(engine, {
    tableId: table.id,
    groupIds,
    mode: "new",
    rowIds: null,
    limit: null,
    window: planLimits(table.plan).window,
    dependsOn: deps,
  });
  return { dispatchId: run.dispatchId };
}
