/**
 * Where orphans can be: `queued` or `running` cells that should have a live carrier: an
 * active dispatch's cells at or before its cursor (handed out), and cells of no active
 * dispatch. Cells past an active dispatch's cursor wait for the window, not for a
 * carrier. Read off the window's partial index (unfinished cells only), so a pass costs
 * the number of unfinished cells, not the table sizes.
 */
import { sql } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { queryRows } from "../../../db/client";

export interface OrphanCandidate {
  tableId: string;
  rowId: string;
  dispatchId: string | null;
  running: { groupId: string; executionId: string; attempt: number }[];
  /** Some queued cell has waited longer than the grace period. */
  queuedStale: boolean;
}

export async function orphanCandidates(
  db: Db,
  opts: { queuedGraceMs: number; limit: number },
): Promise<OrphanCandidate[]> {
  return queryRows<OrphanCandidate>(
    db,
    sql`with inflight as (
          -- Off the window's partial index (queued/running cells only). A cell past an
          -- active dispatch's cursor waits for the window; any other one needs a carrier:
          -- no dispatch (auto-run, edits), or a dispatch already over (a resumed approval).
          select c.table_id, c.row_id, c.dispatch_id, c.group_id, c.execution_id, c.attempt, c.status, c.queued_at
            from cells c
            left join dispatches d on d.id = c.dispatch_id and d.status = 'active'
           where c.status in ('queued', 'running')
             and (d.id is null or c.row_position <= d."cursor")
        )
        select table_id as "tableId", row_id as "rowId", min(dispatch_id) as "dispatchId",
               coalesce(jsonb_agg(jsonb_build_object('groupId', group_id, 'executionId', execution_id, 'attempt', attempt))
                          filter (where status = 'running'), '[]'::jsonb) as running,
               bool_or(status = 'queued' and queued_at < now() - make_interval(secs => ${opts.queuedGraceMs / 1000})) as "queuedStale"
          from inflight
         group by table_id, row_id
        having bool_or(status = 'running')
            or bool_or(status = 'queued' and queued_at < now() - make_interval(secs => ${opts.queuedGraceMs / 1000}))
         limit ${opts.limit}`,
  );
}

/** Active dispatches, for the window to hand out what a lost carrier never asked for. */
export async function activeDispatches(
  db: Db,
  opts: { stampingIdleMs: number },
): Promise<{ id: string; tableId: string; stampingStalled: boolean }[]> {
  return queryRows(
    db,
    sql`select id, table_id as "tableId",
               stamping and updated_at < now() - make_interval(secs => ${opts.stampingIdleMs / 1000}) as "stampingStalled"
          from dispatches where status = 'active'`,
  );
}
