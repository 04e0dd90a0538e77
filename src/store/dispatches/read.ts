import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { type SQL, sql } from "drizzle-orm";
import {
  CELL_STATUSES,
  type CellStatus,
  type DispatchStatus,
  type HaltReason,
  type RunMode,
} from "@/domain/statuses";
import { isoTime } from "../sql";
import { asCredits } from "../usage/amounts";

export interface DispatchView {
  id: string;
  status: DispatchStatus;
  mode: RunMode;
  groupIds: string[];
  window: number;
  stamped: number;
  /** True while a background job is still stamping the rest of a large run. */
  stamping: boolean;
  /**
   * Its cells by status, every status present: off the run's counters (folded base plus
   * unfolded deltas, store/progress/fold.ts), so the read costs the same for any run
   * size. Exact for the committed cells. Only this read uses them: the engine's own
   * decisions (advance, finish) count the run's cells in SQL where they decide.
   */
  counts: Record<CellStatus, number>;
  createdAt: string;
  finishedAt: string | null;
  /** Why a `halted` run stopped (null otherwise). */
  haltReason: HaltReason | null;
  /** The run's credit cap (null: none). */
  maxCredits: number | null;
  /** The run's per-row budget in credits (null: none). */
  maxCreditsPerRow: number | null;
  /** Credits its cells were charged (the ledger's charged entries of the run). */
  creditsUsed: number;
  /** Mode `stale`: the age in hours past which a completed cell was run again (else null). */
  staleAfterHours: number | null;
}

/**
 * `'queued', coalesce(sum(c.n) filter (where c.status = 'queued'), 0), …`: one pair per
 * status of the tuple, so none is missed; literals built from constants (never input).
 */
const countByStatus = sql.raw(
  CELL_STATUSES.map(
    (s) => `'${s}', coalesce(sum(c.n) filter (where c.status = '${s}'), 0)::bigint`,
  ).join(",\n"),
);

/**
 * `system`: joined to its table (`t`), whose id and name come first, and without its
 * credits (a sum over the run's ledger entries: too much to read every few seconds).
 */
const select = (where: SQL, tail: SQL = sql``, system = false) => sql`
  select ${system ? sql`t.id as "tableId", t.name as "tableName",` : sql``} d.id, d.status, d.mode, d.group_ids as "groupIds", d."window", d.stamped, d.stamping,
         ${isoTime(sql`d.created_at`)} as "createdAt",
         case when d.finished_at is null then null else ${isoTime(sql`d.finished_at`)} end as "finishedAt",
         d.halt_reason as "haltReason", ${asCredits(sql`d.max_credits_milli`)} as "maxCredits",
         d.stale_after_hours as "staleAfterHours",
         ${asCredits(sql`d.max_credits_per_row_milli`)} as "maxCreditsPerRow",
         ${
           system
             ? sql``
             : sql`${asCredits(sql`(select coalesce(sum(u.milli), 0) from usage u
                            where u.dispatch_id = d.id and u.state = 'charged')`)} as "creditsUsed",`
         }
         (select jsonb_build_object(${countByStatus})
            from (select r.status, r.n from run_cell_counts r where r.dispatch_id = d.id
                  union all
                  select x.status, x.n from cell_count_deltas x
                   where x.table_id = d.table_id and x.dispatch_id = d.id and x.group_id is not null) c
         ) as counts
    from dispatches d ${system ? sql`join tables t on t.id = d.table_id` : sql``}
   where ${where} ${tail}`;

export async function getDispatch(
  db: Db,
  tableId: string,
  id: string,
): Promise<DispatchView | null> {
  const rows = await queryRows<DispatchView>(
    db,
    select(sql`d.table_id = ${tableId} and d.id = ${id}`),
  );
  return rows[0] ?? null;
}

/** Active first, then newest first. */
export function listDispatches(db: Db, tableId: string, limit = 50): Promise<DispatchView[]> {
  return queryRows<DispatchView>(
    db,
    select(
      sql`d.table_id = ${tableId}`,
      sql`order by (d.status = 'active') desc, d.created_at desc limit ${limit}`,
    ),
  );
}

/** The most active runs the System page lists (the oldest). */
const ACTIVE_LIMIT = 100;

/** An active run of a workspace, with its table (and not its credits). */
export interface ActiveDispatch extends Omit<DispatchView, "creditsUsed"> {
  tableId: string;
  tableName: string;
}

/**
 * The workspace's active runs, oldest first: off the active runs' partial index (every
 * workspace's active runs, a few), each counted off its counters like `getDispatch`.
 */
export function listActiveDispatches(db: Db, workspaceId: string): Promise<ActiveDispatch[]> {
  return queryRows<ActiveDispatch>(
    db,
    select(
      sql`d.status = 'active' and t.workspace_id = ${workspaceId}`,
      sql`order by d.created_at, d.id limit ${ACTIVE_LIMIT}`,
      true,
    ),
  );
}

/** Removes a dispatch that stamped no cell (auto-fire that found nothing to run). */
export async function discardDispatch(db: Db, id: string): Promise<void> {
  await db.execute(
    sql`delete from dispatches d where d.id = ${id} and not exists (select 1 from cells c where c.dispatch_id = d.id)`,
  );
}
