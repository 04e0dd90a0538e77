import { type SQL, sql } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { queryRows } from "../../../db/client";
import type { CellStatus } from "../../domain/statuses";
import { type LostReason, lostOutcome, transitionCtes, transitionEventData } from "./transition";

/**
 * What a claim sets: a fresh attempt with nothing of the last one left on the cell, and
 * the task run carrying it (a Stop cancels that run). `attempt` counts up: it is the
 * new attempt's number, which fences its writes.
 */
export function claimSet(runId: string | null): SQL {
  return sql`status = 'running', started_at = now(), attempt = attempt + 1, run_id = ${runId},
             running_block_ids = '{}', block_errors = '{}'::jsonb, outcome = null, error = null`;
}

export type ClaimOutcome = { ok: true; attempt: number } | { ok: false; reason: LostReason };

/** queued(e) → running, by the carrier that holds the row lock; returns the attempt's number. */
export async function claimCell(
  db: Db,
  rowId: string,
  groupId: string,
  executionId: string,
  runId: string | null = null,
): Promise<ClaimOutcome> {
  const spec = {
    rowId,
    groupId,
    guard: sql`status = 'queued' and execution_id = ${executionId}`,
    set: claimSet(runId),
  };
  const [row] = await queryRows<{
    updated: number;
    attempt: number | null;
    current: CellStatus | null;
  }>(
    db,
    sql`with ${transitionCtes(spec, "t")},
        t_ev as (
          insert into events (table_id, kind, data)
          select table_id, 'cell', ${transitionEventData(spec)} from t_upd
          returning table_id
        ),
        wake as (select pg_notify('cellflow_events', table_id) from t_ev)
        select (select count(*) from t_upd)::int as updated,
               (select attempt from t_upd) as attempt,
               (select count(*) from wake)::int as woke,
               (select status from cells where row_id = ${rowId} and group_id = ${groupId}) as current`,
  );
  const outcome = lostOutcome(row?.updated ?? 0, row?.current ?? null);
  return outcome.ok ? { ok: true, attempt: row?.attempt ?? 0 } : outcome;
}
