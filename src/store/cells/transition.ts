/**
 * The one shape every single-cell transition has: a guarded UPDATE of the cell, the
 * outputs merged into the row only if that UPDATE matched, and the `cell` event, all in
 * one statement (one round trip, one commit). Zero rows matched means the caller lost a
 * race; the statement also reports what the cell is now, so the loser learns why
 * without a second query.
 */

import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { type SQL, sql } from "drizzle-orm";
import type { CellStatus, LostReason } from "@/domain/statuses";
import { jsonb, textArray } from "../sql";

/**
 * A cell: its row and its group. Every transition names its cell with this (and the
 * attempt or execution it is fenced on) in one object, so two ids can never trade places.
 */
export interface CellRef {
  rowId: string;
  groupId: string;
}

/**
 * One attempt of an execution. A re-drive hands a lost attempt's cell back under the
 * same execution id (its checkpoints stay valid) and the next claim counts `attempt` up,
 * so every write of a running attempt is fenced on both: a statement a dead session sent
 * before it died cannot land on the attempt that replaced it.
 */
export interface AttemptRef {
  executionId: string;
  attempt: number;
}

/** A running attempt's cell: what every write of the attempt is fenced on. */
export type CellAttemptRef = CellRef & AttemptRef;

/** The guard of a running attempt's writes. */
export function runningFence(ref: AttemptRef): SQL {
  return sql`status = 'running' and execution_id = ${ref.executionId} and attempt = ${ref.attempt}`;
}
/**
 * The attempt still holds its cell: the fence of its writes to other tables. Read from
 * the statement's snapshot, unless `settles`: a write that settles charges share-locks
 * the cell's row until it commits, so an ending transition under way (a Stop, a requeue,
 * whose release trigger takes the attempt's reservations) is waited for and seen, and the
 * write either commits first (its charges settled, which the release then leaves alone) or
 * finds the cell gone and writes nothing. Without the lock a checkpoint could record an
 * answer for a cell a Stop had just cancelled, its settle finding the reservation
 * released: an answer recorded (and reused by a resume) that was never charged. Writes
 * without charges keep the plain check: a late one records only what the block did, and
 * the lock would make every foreach item's record contend on the cell's row.
 */
export function cellHeldBy(ref: CellAttemptRef, settles = false): SQL {
  return sql`exists (select 1 from cells where row_id = ${ref.rowId} and group_id = ${ref.groupId}
                        and ${runningFence(ref)}${settles ? sql` for share` : sql``})`;
}

export type TransitionOutcome = { ok: true } | { ok: false; reason: LostReason };

export interface TransitionSpec extends CellRef {
  /** Extra WHERE terms, e.g. status and execution id. */
  guard: SQL;
  /** SET terms for the cell. */
  set: SQL;
  /** Column values to merge into the row; null clears a column. */
  outputs?: Record<string, unknown>;
}

/** A `cell` event's data, from a statement's RETURNING list (which must name these columns). */
export const cellEventData = sql`jsonb_build_object(
  'rowId', row_id, 'groupId', group_id, 'status', status, 'outcome', outcome,
  'executionId', execution_id, 'attempt', attempt, 'error', error,
  'runningBlockIds', to_jsonb(running_block_ids), 'blockErrors', block_errors)`;

/** The `cell` event's data for a transition, with the outputs it wrote if any. */
export function transitionEventData(spec: TransitionSpec): SQL {
  return spec.outputs
    ? sql`${cellEventData} || jsonb_build_object('outputs', ${jsonb(spec.outputs)})`
    : cellEventData;
}

/**
 * The CTEs of a guarded transition, `<name>_upd` and `<name>_merged`, without its event,
 * for statements that do more than one thing in a round trip and write their events in
 * one ordered insert (see `row-step.ts`).
 */
export function transitionCtes(spec: TransitionSpec, name: string): SQL {
  const outputs = spec.outputs;
  const set = outputs
    ? Object.fromEntries(Object.entries(outputs).filter(([, v]) => v !== null))
    : {};
  const clear = outputs ? Object.keys(outputs).filter((k) => outputs[k] === null) : [];
  const upd = sql.raw(`${name}_upd`);
  const mergeRow = outputs
    ? sql`, ${sql.raw(`${name}_merged`)} as (
        update rows set data = (rows.data || ${jsonb(set)}) - ${textArray(clear)}, updated_at = now()
          from ${upd} where rows.id = ${upd}.row_id
        returning rows.id)`
    : sql``;
  return sql`${upd} as (
          update cells set ${spec.set}, updated_at = now()
           where row_id = ${spec.rowId} and group_id = ${spec.groupId} and ${spec.guard}
          returning table_id, row_id, group_id, status, outcome, execution_id, error, running_block_ids,
                    block_errors, attempt
        )${mergeRow}`;
}

/** What a loser learns from the cell's current status (null: the cell is gone). */
export function lostOutcome(updated: number, current: CellStatus | null): TransitionOutcome {
  if (updated === 1) return { ok: true };
  if (!current) return { ok: false, reason: "gone" };
  return { ok: false, reason: current === "cancelled" ? "cancelled" : "stale" };
}

export async function transitionCell(db: Db, spec: TransitionSpec): Promise<TransitionOutcome> {
  const [row] = await queryRows<{ updated: number; current: CellStatus | null }>(
    db,
    sql`with ${transitionCtes(spec, "t")},
        t_ev as (
          insert into events (table_id, kind, data)
          select table_id, 'cell', ${transitionEventData(spec)} from t_upd
          returning table_id
        ),
        wake as (select pg_notify('cellflow_events', table_id) from t_ev)
        select (select count(*) from t_upd)::int as updated,
               (select count(*) from wake)::int as woke,
               (select status from cells where row_id = ${spec.rowId} and group_id = ${spec.groupId}) as current`,
    { prepare: true },
  );
  return lostOutcome(row?.updated ?? 0, row?.current ?? null);
}
