/**
 * running(e) → paused(e), with what resumes it recorded on the execution in the same
 * statement: the block that waits, the edges it takes when it resumes, and for a wait
 * when it is due and what it outputs. Fenced by status and execution id like every
 * attempt write.
 */

import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import { jsonb } from "../sql";
import { type CellAttemptRef, cellEventData } from "./transition";

export interface PauseRecord {
  blockId: string;
  reason: "approval" | "wait";
  taken: string[];
  resumeAt?: number;
  output?: unknown;
}

export async function pauseAttempt(
  db: Db,
  ref: CellAttemptRef & { tableId: string; pause: PauseRecord },
): Promise<boolean> {
  const { pause } = ref;
  const [row] = await queryRows<{ paused: number }>(
    db,
    sql`with upd as (
          update cells set status = 'paused', running_block_ids = '{}', updated_at = now()
           where row_id = ${ref.rowId} and group_id = ${ref.groupId}
             and execution_id = ${ref.executionId} and attempt = ${ref.attempt} and status = 'running'
          returning table_id, row_id, group_id, status, outcome, execution_id, error, running_block_ids, block_errors,
                    attempt
        ),
        rec as (
          insert into executions (id, table_id, row_id, group_id, pause_token, resume_data)
          select ${ref.executionId}, ${ref.tableId}, ${ref.rowId}, ${ref.groupId}, ${pause.blockId}, ${jsonb(pause)}
            from upd
          on conflict (id) do update
             set pause_token = excluded.pause_token, resume_data = excluded.resume_data, updated_at = now()
          returning id
        ),
        ev as (
          insert into events (table_id, kind, data)
          select table_id, 'cell', ${cellEventData} || jsonb_build_object('pause', ${jsonb({ blockId: pause.blockId, reason: pause.reason, resumeAt: pause.resumeAt ?? null })})
            from upd
          returning table_id
        ),
        wake as (select pg_notify('cellflow_events', table_id) from ev)
        select (select count(*) from upd)::int as paused, (select count(*) from rec)::int as rec,
               (select count(*) from wake)::int as woke`,
  );
  return row?.paused === 1;
}
