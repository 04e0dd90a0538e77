/**
 * A reservation: credits set aside for one charge key before its paid call. Invariants:
 * the call's attempt still holds its cell (the reservation is fenced like every attempt
 * write, and marks the cell `credits_held` so the release trigger (migration `credit_ledger_release`) gives
 * it back whenever the attempt ends without settling it); every cap that applies holds
 * for what is charged plus what is reserved plus this call — the month's credits (one
 * conditional UPDATE of the workspace row: a concurrent reservation waits for it and
 * re-checks on the row it committed), the run's `maxCredits` (its dispatch row locked
 * first, always before the workspace row, so two reservations cannot deadlock) and the
 * row's budget (`maxCreditsPerRow`: what the row's cells of the run are charged or hold
 * reserved, read by a volatile function after the run's row and the cell's are locked, so
 * it sees every reservation of the row that committed before; a cell of no run — the
 * cascade after a run's cell, a resumed cell — counts in the run of the row's newest
 * request, by `request_seq`, but never against that run's `maxCredits`); a key already charged (a retry, a re-drive
 * or a resume of an execution that was charged for it) is not reserved again, costs
 * nothing more and is not judged against the row's budget a second time. A call over the
 * row's budget is refused first (`row_budget`: its cell ends `over_budget`, the run goes
 * on), before the caps that halt the run. All in one statement.
 */

import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { retryOnConflict } from "@db/sqlstate";
import { sql } from "drizzle-orm";
import type { ChargeKey } from "@/domain/charges";
import type { HaltReason } from "@/domain/statuses";
import { type CellAttemptRef, runningFence } from "../cells/transition";
import { MONTH, milliOf } from "./amounts";

export type Reservation =
  /** `reserved` false: the key was charged before (nothing more to pay). */
  | { ok: true; reserved: boolean }
  | { ok: false; reason: HaltReason }
  /** The call would take its row past the run's per-row budget: not made, the run goes on. */
  | { ok: false; reason: "row_budget" }
  /** The attempt no longer holds its cell (a Stop, a newer attempt, a delete). */
  | { ok: false; reason: "lost" };

export async function reserveCredits(
  db: Db,
  r: {
    workspaceId: string;
    cell: CellAttemptRef & { tableId: string };
    /** The run the cell belongs to (null: none, never capped). */
    dispatchId: string | null;
    charge: ChargeKey;
    credits: number;
    /** The month's cap in credits; null: none. */
    monthlyCredits: number | null;
  },
): Promise<Reservation> {
  const { cell, charge } = r;
  const milli = milliOf(r.credits);
  const cap = r.monthlyCredits === null ? null : milliOf(r.monthlyCredits);
  // One statement, run again whole on a deadlock (a batched row step's settle can take the
  // workspace row before the release trigger of another of its cells takes a run's).
  const [row] = await retryOnConflict(() =>
    queryRows<{
      prior: boolean;
      held: boolean;
      reserved: boolean;
      overRowBudget: boolean;
      overRunCap: boolean;
    }>(
      db,
      sql`with prior as (
          select 1 from usage where execution_id = ${charge.chargeId} and source = ${charge.source}),
        -- The run the row's budget is kept in: the cell's own, or for a cell of no run (the
        -- cascade after a run's cell, a resumed cell) the run of the row's newest request.
        run_of as (
          select coalesce(${r.dispatchId}::text,
                          (select d.id from cells c
                             join dispatches d on d.table_id = c.table_id and d.seq = c.request_seq
                            where c.row_id = ${cell.rowId} and c.group_id = ${cell.groupId}
                              and c.request_seq > 0)) as id),
        run as materialized (
          select d.id, d.created_at, d.max_credits_per_row_milli as row_cap,
                 own.capped, not own.capped or d.committed_milli + ${milli} <= d.max_credits_milli as fits
            from dispatches d
           cross join lateral (select (d.id = ${r.dispatchId}::text and d.max_credits_milli is not null) is true as capped) own
           where d.id = (select id from run_of)
             and (own.capped or d.max_credits_per_row_milli is not null)
             for no key update of d),
        held as (
          update cells set credits_held = true
           where row_id = ${cell.rowId} and group_id = ${cell.groupId} and ${runningFence(cell)}
             -- Reads (so locks) the run's row first: the order a Stop takes them in.
             and (select count(*) from run) >= 0
          returning 1),
        budget as materialized (
          -- After the locks (held reads run): the function's own snapshot sees them all.
          select cellflow_row_budget_spent(run.id, ${cell.rowId}, run.created_at) + ${milli} <= run.row_cap as fits
            from run
           where run.row_cap is not null and exists (select 1 from held) and not exists (select 1 from prior)),
        upd as (
          update workspaces w set reserved_milli = w.reserved_milli + ${milli}
           where w.id = ${r.workspaceId} and exists (select 1 from held)
             and not exists (select 1 from prior) and coalesce((select fits from budget), true)
             and coalesce((select fits from run), true)
             and (${cap}::bigint is null
                  or (case when w.credits_month = ${MONTH} then w.used_milli else 0 end)
                       + w.reserved_milli + ${milli} <= ${cap}::bigint)
          returning w.id),
        counted as (
          update dispatches d set committed_milli = d.committed_milli + ${milli}
           where d.id in (select id from run where capped) and exists (select 1 from upd)
          returning 1),
        ins as (
          insert into usage (workspace_id, execution_id, source, milli, state, table_id, row_id, group_id,
                             cell_execution_id, attempt, dispatch_id)
          select ${r.workspaceId}, ${charge.chargeId}, ${charge.source}, ${milli}, 'reserved', ${cell.tableId},
                 ${cell.rowId}, ${cell.groupId}, ${cell.executionId}, ${cell.attempt}, ${r.dispatchId}::text
            from upd
          returning 1)
        select exists (select 1 from prior) as prior,
               exists (select 1 from held) as held,
               exists (select 1 from ins) as reserved,
               not coalesce((select fits from budget), true) as "overRowBudget",
               not coalesce((select fits from run), true) as "overRunCap",
               (select count(*) from counted)::int as counted`,
    ),
  );
  if (!row?.held) return { ok: false, reason: "lost" };
  if (row.prior) return { ok: true, reserved: false };
  if (row.reserved) return { ok: true, reserved: true };
  if (row.overRowBudget) return { ok: false, reason: "row_budget" };
  return { ok: false, reason: row.overRunCap ? "run_credit_cap" : "monthly_credits" };
}
