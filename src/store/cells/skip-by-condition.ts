/**
 * A group's run condition (`runIf`), judged for a cell the carrier's step just claimed,
 * before its attempt does anything: running(e, n) → completed / `condition_not_met` only
 * when the attempt still holds the cell (its fence) AND the compiled condition is false on
 * the row, in one guarded statement that also clears the group's output columns in the row
 * and appends the `cell` event (no NOTIFY: the carrier wakes the table's streams, as after
 * its steps). Nothing was reserved for the attempt yet (a claim holds no credits), so
 * nothing is released or charged. The condition is the run `where`'s, compiled by the same
 * compiler (`rows/where-sql.ts`), on the statement's snapshot of the row: taken after the
 * claim committed, as an attempt's inputs are read; an edit racing it re-arms the cell
 * the way it re-arms one that ran (the condition's columns are among those it reads).
 *
 * Why a statement of its own rather than a term of the claim (`row-step.ts`): the claim is
 * one prepared statement batched over many carriers' rows and tables, and which group it
 * claims is decided inside it; each group's condition is different SQL, so folding them in
 * would make the statement's text depend on every table's schema. This costs a round trip
 * only for groups that have a condition.
 */

import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { retryOnConflict } from "@db/sqlstate";
import { sql } from "drizzle-orm";
import type { CellStatus, LostReason } from "@/domain/statuses";
import type { TypedCondition } from "@/domain/where";
import { whereSql } from "../rows/where-sql";
import { jsonb, textArray } from "../sql";
import { type CellAttemptRef, cellEventData, lostOutcome, runningFence } from "./transition";

export interface ConditionCheck extends CellAttemptRef {
  /** The group's run conditions, checked (all must hold). */
  conditions: readonly TypedCondition[];
  /** The group's output columns: left blank when the condition does not hold. */
  outputColumns: readonly string[];
}

/**
 * `not_met`: the cell ended `condition_not_met` (its event written). `holds`: the condition
 * held on the row, the attempt runs (if a Stop took the cell meanwhile, the attempt's own
 * fence tells it). `lost`: the attempt no longer held its cell; nothing was written.
 */
export type ConditionOutcome =
  | { kind: "not_met" }
  | { kind: "holds" }
  | { kind: "lost"; reason: LostReason };

export async function skipByCondition(db: Db, check: ConditionCheck): Promise<ConditionOutcome> {
  const outputs = Object.fromEntries(check.outputColumns.map((c) => [c, null]));
  const met = whereSql(check.conditions);
  // One statement, so one transaction: a deadlock with a Stop or an edit (which lock the
  // row and its cells in their own order; this locks the cell, then the row) rolls it
  // back whole; run it again, as the carrier's steps do.
  const [row] = await retryOnConflict(() =>
    queryRows<{
      updated: number;
      met: boolean | null;
      current: CellStatus | null;
    }>(
      db,
      sql`with s_upd as (
          update cells c
             set status = 'completed', outcome = 'condition_not_met', error = null, finished_at = now(),
                 running_block_ids = '{}', block_errors = '{}'::jsonb, updated_at = now()
            from rows r
           where c.row_id = ${check.rowId} and c.group_id = ${check.groupId} and ${runningFence(check)}
             and r.id = c.row_id and not ${met}
          returning c.table_id, c.row_id, c.group_id, c.status, c.outcome, c.execution_id, c.error,
                    c.running_block_ids, c.block_errors, c.attempt
        ),
        s_merged as (
          update rows set data = rows.data - ${textArray([...check.outputColumns])}, updated_at = now()
            from s_upd where rows.id = s_upd.row_id
          returning rows.id
        ),
        s_ev as (
          insert into events (table_id, kind, data)
          select table_id, 'cell', ${cellEventData} || jsonb_build_object('outputs', ${jsonb(outputs)})
            from s_upd
          returning table_id
        )
        select (select count(*) from s_upd)::int as updated,
               (select count(*) from s_merged)::int as merged,
               (select count(*) from s_ev)::int as events,
               (select ${met} from rows r where r.id = ${check.rowId}) as met,
               (select status from cells where row_id = ${check.rowId} and group_id = ${check.groupId}) as current`,
    ),
  );
  if ((row?.updated ?? 0) === 1) return { kind: "not_met" };
  if (row?.met === true) return { kind: "holds" };
  const lost = lostOutcome(0, row?.current ?? null);
  return { kind: "lost", reason: lost.ok ? "stale" : lost.reason };
}
