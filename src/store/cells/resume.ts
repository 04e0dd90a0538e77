/**
 * paused(e) → queued(e): a resume. The paused block's output (the approval's data, or a
 * due wait's own output) is recorded as its checkpoint in the same statement, so the
 * next attempt of e continues after it. Guarded by status and execution id: a wrong or
 * stale id, or a cell no longer paused (cancelled by a Stop), matches nothing. Approval
 * resumes need the caller's data; a wait resumes by itself once due.
 *
 * A resumed cell leaves its run (dispatch_id becomes null): the run's window slid past
 * it while it waited, so it would neither count in the window nor be waited for, and a
 * run must not wait days for an approval either. It is carried like an edit's cell,
 * by the carrier the resume enqueues, and a Stop of the table or its row still reaches it.
 */

import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import type { CellStatus } from "@/domain/statuses";
import { jsonb } from "../sql";
import { type CellRef, cellEventData } from "./transition";

export type ResumeOutcome =
  | { ok: true }
  | { ok: false; reason: "not_found" | "not_paused" | "stale"; status?: CellStatus };

export async function resumeCell(
  db: Db,
  ref: CellRef & {
    tableId: string;
    executionId: string;
    /** An approval's data, or a wait that resumes by itself once due. */
    data: { approval: unknown } | { dueWait: true };
  },
): Promise<ResumeOutcome> {
  const { data } = ref;
  const output =
    "approval" in data
      ? sql`${jsonb(data.approval ?? null)}`
      : sql`coalesce(x.resume_data->'output', 'null'::jsonb)`;
  const due =
    "approval" in data
      ? sql`e.resume_data->>'reason' = 'approval'`
      : sql`e.resume_data->>'reason' = 'wait'
             and (e.resume_data->>'resumeAt')::bigint <= (extract(epoch from now()) * 1000)::bigint`;
  const [row] = await queryRows<{
    resumed: number;
    status: CellStatus | null;
    current: string | null;
  }>(
    db,
    sql`with x as (
          select e.id, e.pause_token, e.resume_data from executions e
            join cells c on c.execution_id = e.id and c.row_id = ${ref.rowId} and c.group_id = ${ref.groupId}
           where e.id = ${ref.executionId} and c.table_id = ${ref.tableId} and c.status = 'paused' and ${due}
        ),
        upd as (
          update cells c set status = 'queued', dispatch_id = null, queued_at = now(), updated_at = now()
            from x
           where c.row_id = ${ref.rowId} and c.group_id = ${ref.groupId}
             and c.execution_id = x.id and c.status = 'paused'
          returning c.table_id, c.row_id, c.group_id, c.status, c.outcome, c.execution_id, c.error,
                    c.running_block_ids, c.block_errors, c.dispatch_id, c.attempt
        ),
        rec as (
          update executions e
             set checkpoints = e.checkpoints || jsonb_build_object(x.pause_token,
                   jsonb_build_object('output', ${output}, 'taken', coalesce(x.resume_data->'taken', '[]'::jsonb))),
                 pause_token = null, updated_at = now()
            from x, upd
           where e.id = x.id
          returning e.id
        ),
        ev as (
          insert into events (table_id, kind, data)
          select table_id, 'cell', ${cellEventData} from upd
          returning table_id
        ),
        wake as (select pg_notify('cellflow_events', table_id) from ev)
        select (select count(*) from upd)::int as resumed,
               (select count(*) from rec)::int as rec, (select count(*) from wake)::int as woke,
               (select status from cells where row_id = ${ref.rowId} and group_id = ${ref.groupId} and table_id = ${ref.tableId}) as status,
               (select execution_id from cells where row_id = ${ref.rowId} and group_id = ${ref.groupId} and table_id = ${ref.tableId}) as current`,
  );
  if (row?.resumed === 1) return { ok: true };
  if (!row?.status) return { ok: false, reason: "not_found" };
  if (row.status !== "paused") return { ok: false, reason: "not_paused", status: row.status };
  return { ok: false, reason: "stale" };
}

/** Paused waits that are due, for the re-drive (a lost delayed carrier). */
export async function dueWaits(
  db: Db,
  limit: number,
): Promise<{ tableId: string; rowId: string; groupId: string; executionId: string }[]> {
  return queryRows(
    db,
    sql`select c.table_id as "tableId", c.row_id as "rowId", c.group_id as "groupId", c.execution_id as "executionId"
          from cells c join executions e on e.id = c.execution_id
         where c.status = 'paused' and e.resume_data->>'reason' = 'wait'
           and (e.resume_data->>'resumeAt')::bigint <= (extract(epoch from now()) * 1000)::bigint
         limit ${limit}`,
  );
}
