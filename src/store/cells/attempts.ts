/**
 * A cell's attempt history, read in one statement: its current attempt (the cell row)
 * first, then the ended attempts the cell moved on from (cell_attempts, recorded by the
 * trigger of migration 0025 and by `clear.ts`), newest first, at most ATTEMPTS_KEPT in
 * all. Read straight into the API's shape, as `rows/read.ts` does. Outputs are the
 * group's output values of a completed attempt (the current one's read from the row).
 */

import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import type { CellAttempt } from "@/contracts/cells";
import { TERMINAL } from "../sql";
import type { CellRef } from "./transition";

/** How many attempts of a cell are kept (the prune trigger of migration 0025 keeps as many). */
export const ATTEMPTS_KEPT = 20;
/** Child runs listed per attempt (a foreach may have thousands; `childrenTotal` counts them). */
const CHILDREN_LISTED = 200;

const iso = (column: string) =>
  `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** One attempt in the API's shape, from a relation `x` with cell_attempts' column names. */
const attemptJson = (x: "cur" | "hist") =>
  sql.raw(`jsonb_build_object(
  'executionId', ${x}.execution_id, 'attempt', ${x}.attempt, 'status', ${x}.status,
  'outcome', ${x}.outcome, 'error', ${x}.error, 'startedAt', ${iso(`${x}.started_at`)},
  'endedAt', ${iso(`${x}.ended_at`)},
  'durationMs', (extract(epoch from ${x}.ended_at - ${x}.started_at) * 1000)::bigint,
  'outputs', ${x}.outputs, 'blockErrors', ${x}.block_errors, 'details', ${x}.details,
  'resumedFrom', ${x}.resumed_from,
  'children', coalesce((select jsonb_agg(jsonb_build_object(
      'id', cr.id, 'parentId', cr.parent_id, 'blockId', cr.block_id, 'index', cr.item_index,
      'workflowId', cr.workflow_id,
      -- A child still marked running whose attempt no longer holds the cell (the cell ended
      -- outside the attempt: a re-drive's give-up, a dead worker) ended with it.
      'status', case when cr.status = 'running' and not exists (
                       select 1 from cells held
                        where held.row_id = cr.row_id and held.group_id = cr.group_id
                          and held.status = 'running' and held.execution_id = cr.execution_id
                          and held.attempt = cr.attempt)
                     then 'cancelled' else cr.status::text end,
      -- A foreach item that ended ok keeps its output once, with its step record.
      'output', coalesce(cr.output, (
                  select s.output from execution_steps s
                   where cr.item_index is not null and cr.status = 'completed'
                     and s.execution_id = cr.execution_id
                     and s.scope = case when cr.parent_id = cr.execution_id then ''
                                        else substr(cr.parent_id, length(cr.execution_id) + 2) end
                     and s.key = cr.block_id || '#' || cr.item_index)),
      'error', cr.error,
      'startedAt', ${iso("cr.started_at")}, 'endedAt', ${iso("cr.ended_at")}) order by cr.started_at, cr.id)
    from (select * from child_runs cr where cr.execution_id = ${x}.execution_id
             and cr.attempt = ${x}.attempt order by cr.started_at, cr.id
           limit ${CHILDREN_LISTED}) cr), '[]'::jsonb),
  'childrenTotal', (select count(*) from child_runs cr
                     where cr.execution_id = ${x}.execution_id and cr.attempt = ${x}.attempt))`);

/** The cell's attempts, newest first; null when the row is not in the table. */
export async function readCellAttempts(
  db: Db,
  ref: CellRef & { tableId: string },
): Promise<CellAttempt[] | null> {
  const [row] = await queryRows<{ found: boolean; attempts: CellAttempt[] }>(
    db,
    sql`with r as (select id, data from rows where id = ${ref.rowId} and table_id = ${ref.tableId}),
        cur as (
          select c.execution_id, c.attempt, c.status, c.outcome, c.error, c.started_at,
                 case when c.status in ${TERMINAL} then c.finished_at end as ended_at,
                 case when c.status = 'completed' then cellflow_group_outputs(t.schema, r.data, c.group_id) end
                   as outputs,
                 c.block_errors, c.details, c.resumed_from
            from cells c join r on r.id = c.row_id join tables t on t.id = c.table_id
           where c.row_id = ${ref.rowId} and c.group_id = ${ref.groupId}
        ),
        hist as (
          select a.* from cell_attempts a
           where a.row_id = ${ref.rowId} and a.group_id = ${ref.groupId} and exists (select 1 from r)
           order by a.id desc
           limit ${ATTEMPTS_KEPT}
        ),
        listed as (
          select ${attemptJson("cur")} as item, 0 as src, 0::bigint as id from cur
          union all
          select ${attemptJson("hist")}, 1, hist.id from hist
        )
        select exists (select 1 from r) as found,
               coalesce((select jsonb_agg(item order by src, id desc)
                           from (select * from listed order by src, id desc limit ${ATTEMPTS_KEPT}) l),
                        '[]'::jsonb) as attempts`,
  );
  return row?.found ? row.attempts : null;
}
