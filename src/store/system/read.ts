/**
 * What the System page reads of one workspace, each off an index or the progress counters,
 * so its cost follows the workspace's tables and groups, never its rows or cells: no
 * count(*) over `cells`, however large a table.
 */
import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import { isoTime } from "../sql";

/** The workspace's cells queued and running now, off the counters (folded base plus deltas). */
export async function workspaceCellLoad(
  db: Db,
  workspaceId: string,
): Promise<{ queued: number; running: number }> {
  const [row] = await queryRows<{ queued: number; running: number }>(
    db,
    sql`with t as (select id from tables where workspace_id = ${workspaceId}),
        c as (
          select cc.status, cc.n from cell_counts cc join t on t.id = cc.table_id
           where cc.status in ('queued', 'running')
          union all
          select d.status, d.n from cell_count_deltas d join t on t.id = d.table_id
           where d.group_id is not null and d.status in ('queued', 'running'))
        select coalesce(sum(n) filter (where status = 'queued'), 0)::float8 as queued,
               coalesce(sum(n) filter (where status = 'running'), 0)::float8 as running
          from c`,
  );
  return { queued: Math.max(0, row?.queued ?? 0), running: Math.max(0, row?.running ?? 0) };
}

export interface CellErrorRow {
  tableId: string;
  tableName: string;
  rowId: string;
  groupId: string;
  /** The group's name in the table's schema now (null: the group is gone). */
  groupName: string | null;
  error: string | null;
  finishedAt: string | null;
}

/**
 * The workspace's newest cells in `error`, newest first: each table's `limit` newest off
 * the partial index `cells_error_recent_idx` (table, finished_at desc where error), then
 * the newest of those (ties, cells ended by one statement, by row and group id). Its cost
 * is an index probe per table of the workspace.
 */
export function recentCellErrors(
  db: Db,
  workspaceId: string,
  limit: number,
): Promise<CellErrorRow[]> {
  return queryRows<CellErrorRow>(
    db,
    sql`select t.id as "tableId", t.name as "tableName", e.row_id as "rowId", e.group_id as "groupId",
               (select g->>'name' from jsonb_array_elements(t.schema->'groups') g
                 where g->>'id' = e.group_id limit 1) as "groupName",
               e.error,
               case when e.finished_at is null then null else ${isoTime(sql`e.finished_at`)} end as "finishedAt"
          from tables t
          cross join lateral (
            select c.row_id, c.group_id, c.error, c.finished_at from cells c
             where c.table_id = t.id and c.status = 'error'
             order by c.finished_at desc nulls last, c.row_id, c.group_id
             limit ${limit}) e
         where t.workspace_id = ${workspaceId}
         order by e.finished_at desc nulls last, e.row_id, e.group_id
         limit ${limit}`,
  );
}

/** Whether the deployment has a workspace other than this one (its figures are not this one's). */
export async function otherWorkspacesExist(db: Db, workspaceId: string): Promise<boolean> {
  const [row] = await queryRows<{ others: boolean }>(
    db,
    sql`select exists (select 1 from workspaces where id <> ${workspaceId}) as others`,
  );
  return row?.others ?? false;
}
