/**
 * The one shape every single-cell transition has: a guarded UPDATE of the cell, the
 * outputs merged into the row only if that UPDATE matched, and the `cell` event, all in
 * one statement (one round trip, one commit). Zero rows matched means the caller lost a
 * race; the statement also reports what the cell is now, so the loser learns why
 * without a second query.
 */
import { type SQL, sql } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { queryRows } from "../../../db/client";
import type { CellStatus } from "../../domain/statuses";
import { jsonb, textArray } from "../sql";

export type LostReason = "cancelled" | "stale" | "gone";
export type TransitionOutcome = { ok: true } | { ok: false; reason: LostReason };

export interface TransitionSpec {
  rowId: string;
  groupId: string;
  /** Extra WHERE terms, e.g. status and execution id. */
  guard: SQL;
  /** SET terms for the cell. */
  set: SQL;
  /** Column values to merge into the row; null clears a column. */
  outputs?: Record<string, unknown>;
}

export const cellEventData = sql`jsonb_build_object(
  'rowId', row_id, 'groupId', group_id, 'status', status, 'outcome', outcome,
  'executionId', execution_id, 'error', error,
  'runningBlockIds', to_jsonb(running_block_ids), 'blockErrors', block_errors)`;

export async function transitionCell(db: Db, spec: TransitionSpec): Promise<TransitionOutcome> {
  const outputs = spec.outputs;
  const set = outputs
    ? Object.fromEntries(Object.entries(outputs).filter(([, v]) => v !== null))
    : {};
  const clear = outputs ? Object.keys(outputs).filter((k) => outputs[k] === null) : [];
  const mergeRow = outputs
    ? sql`, merged as (
        update rows set data = (rows.data || ${jsonb(set)}) - ${textArray(clear)}, updated_at = now()
          from upd where rows.id = upd.row_id
        returning rows.id)`
    : sql``;
  const eventData = outputs
    ? sql`${cellEventData} || jsonb_build_object('outputs', ${jsonb(outputs)})`
    : cellEventData;
  const [row] = await queryRows<{ updated: number; current: CellStatus | null }>(
    db,
    sql`with upd as (
          update cells set ${spec.set}, updated_at = now()
           where row_id = ${spec.rowId} and group_id = ${spec.groupId} and ${spec.guard}
          returning table_id, row_id, group_id, status, outcome, execution_id, error, running_block_ids, block_errors
        )${mergeRow},
        ev as (
          insert into events (table_id, kind, data)
          select table_id, 'cell', ${eventData} from upd
          returning table_id
        ),
        wake as (select pg_notify('cellflow_events', table_id) from ev)
        select (select count(*) from upd)::int as updated,
               (select count(*) from wake)::int as woke,
               (select status from cells where row_id = ${spec.rowId} and group_id = ${spec.groupId}) as current`,
  );
  if (row && row.updated === 1) return { ok: true };
  if (!row?.current) return { ok: false, reason: "gone" };
  return { ok: false, reason: row.current === "cancelled" ? "cancelled" : "stale" };
}
