/**
 * Stop: every in-flight cell in scope becomes `cancelled`, set-based, whatever its
 * execution id. The tombstone is authoritative: claim and every attempt write require
 * `queued`/`running` with their own id, so no worker can revive a cancelled cell. The
 * rows are locked first so a concurrent claim either lands before (and is cancelled
 * as running) or after (and finds the tombstone).
 * Its events stay bounded by runs, not cells: a Stop that cancels more than
 * CELL_EVENTS_UP_TO cells writes one `dispatch` event per run it cancelled cells of (with
 * their number) instead of their `cell` events; cells of no run (a carrier's auto-run
 * stamps, which wrote a `cell` event each and are at most a window's worth) keep theirs.
 */

import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { type SQL, sql } from "drizzle-orm";
import { CELL_EVENTS_UP_TO } from "@/contracts/events";
import type { CellStatus } from "@/domain/statuses";
import { IN_FLIGHT, stopRowIds, textArray } from "../sql";
import { cellEventData } from "./transition";

export interface CancelScope {
  tableId: string;
  dispatchId?: string;
  rowIds?: string[];
  groupIds?: string[];
  /** A Stop with a `where`: only the rows it matched (`stop_ranges` under this number). */
  stopSeq?: number;
}

export interface CancelledCell {
  rowId: string;
  groupId: string;
  executionId: string;
  was: CellStatus;
  runId: string | null;
  dispatchId: string | null;
}

/**
 * `besideScopes`: the Stop recorded cancel scopes for the queued cells of its runs
 * (cancel-scope.ts), so only the rest is cancelled here: running and paused cells, and
 * queued cells of no run (both bounded by the windows), found without reading the former.
 */
export async function cancelCells(
  db: Db,
  scope: CancelScope,
  opts: { besideScopes?: boolean } = {},
): Promise<CancelledCell[]> {
  if (!opts.besideScopes) return cancelWhere(db, scope, sql`status in ${IN_FLIGHT}`);
  // Two statements, each off its own index (the table's statuses; the partial index of
  // unfinished cells of no run): one OR of both was planned as a walk of every queued cell.
  return [
    ...(await cancelWhere(db, scope, sql`status in ('running', 'paused')`)),
    ...(await cancelWhere(
      db,
      scope,
      sql`dispatch_id is null and status in ('queued', 'running', 'paused') and status = 'queued'`,
    )),
  ];
}

async function cancelWhere(db: Db, scope: CancelScope, statuses: SQL): Promise<CancelledCell[]> {
  const terms: SQL[] = [sql`table_id = ${scope.tableId}`, statuses];
  if (scope.dispatchId) terms.push(sql`dispatch_id = ${scope.dispatchId}`);
  if (scope.rowIds) terms.push(sql`row_id = any(${textArray(scope.rowIds)})`);
  if (scope.groupIds) terms.push(sql`group_id = any(${textArray(scope.groupIds)})`);
  if (scope.stopSeq !== undefined)
    terms.push(sql`row_id in (${stopRowIds(scope.tableId, scope.stopSeq)})`);
  return queryRows<CancelledCell>(
    db,
    sql`with target as (
          select row_id, group_id, status as was from cells where ${sql.join(terms, sql` and `)}
          order by row_id, group_id
          for update
        ),
        upd as (
          update cells c set status = 'cancelled', finished_at = now(), running_block_ids = '{}', updated_at = now()
            from target t
           where c.row_id = t.row_id and c.group_id = t.group_id and c.status in ${IN_FLIGHT}
          returning c.table_id, c.row_id, c.group_id, c.status, c.outcome, c.execution_id, c.error,
                    c.running_block_ids, c.block_errors, c.run_id, c.dispatch_id, c.attempt, t.was
        ),
        ev as (
          insert into events (table_id, kind, data)
          select table_id, 'cell', ${cellEventData} from upd
           where dispatch_id is null or (select count(*) from upd) <= ${CELL_EVENTS_UP_TO}
          returning table_id
        ),
        run_ev as (
          insert into events (table_id, kind, data)
          select ${scope.tableId}, 'dispatch',
                 jsonb_build_object('dispatchId', d.id, 'status', d.status, 'cancelled', n.cancelled)
            from (select dispatch_id, count(*)::int as cancelled from upd
                   where dispatch_id is not null group by dispatch_id) n
            join dispatches d on d.id = n.dispatch_id
           where (select count(*) from upd) > ${CELL_EVENTS_UP_TO}
          returning table_id
        ),
        wake as (select pg_notify('cellflow_events', ${scope.tableId})
                  where exists (select 1 from ev) or exists (select 1 from run_ev))
        select row_id as "rowId", group_id as "groupId", execution_id as "executionId", was, run_id as "runId", dispatch_id as "dispatchId",
               (select count(*) from wake) as woke
          from upd`,
  );
}
