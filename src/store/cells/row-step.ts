/**
 * One cascade step of a row carrier in one round trip: the previous attempt's terminal
 * write (guarded like every transition), the claim of the row's next queued cell, and
 * the fresh read the carrier decides on. Invariants: the claim is made only under the
 * schema version whose group order the caller passed (a schema edit in between makes it
 * claim nothing, and the caller decides on the fresh read instead); the claim is the
 * same guarded queued → running UPDATE as `claim.ts`, so a Stop that committed first
 * wins; the read is the statement's snapshot, taken before both writes, so the caller
 * applies the finished outputs to the row data itself.
 *
 * A step that only claims commits asynchronously (no wait for the WAL flush): a claim
 * lost in a crash leaves the cell queued instead of running, and both are re-driven the
 * same way; WAL is flushed in order, so the attempt's terminal write, which is
 * synchronous, makes the claim durable first. A step with a terminal write waits.
 */
import { sql } from "drizzle-orm";
import type { Db } from "../../../db/client";
import { queryRows } from "../../../db/client";
import { retryOnConflict } from "../../../db/sqlstate";
import type { CellStatus } from "../../domain/statuses";
import { type CascadeStep, creditsUsedThisMonth } from "../engine-reads";
import { queuedOnRow, textArray } from "../sql";
import { claimSet } from "./claim";
import { type Terminal, terminalSpec } from "./finish";
import {
  type AttemptRef,
  cellEventData,
  lostOutcome,
  type TransitionOutcome,
  transitionCtes,
  transitionEventData,
} from "./transition";

export interface RowStepInput {
  tableId: string;
  rowId: string;
  /** The terminal write of the attempt that just ended, if any. */
  finish?: { groupId: string; ref: AttemptRef; end: Terminal };
  /** Claim the next queued cell in this group order, if the schema is still this version. */
  claim?: { schemaVersion: number; order: readonly string[]; runId: string | null };
}

export interface ClaimedCell {
  groupId: string;
  executionId: string;
  /** The claim's attempt number: the fence of this attempt's writes. */
  attempt: number;
  dispatchId: string | null;
  /** An earlier attempt of this execution recorded state (checkpoints, a pause). */
  resumable: boolean;
}

export interface RowStep {
  /** null when the table is gone. */
  step: CascadeStep | null;
  finished?: TransitionOutcome;
  claimed: ClaimedCell | null;
  /**
   * It wrote `cell` events. The statement sends no NOTIFY (see `events/waker.ts`): the
   * caller wakes the table's streams once it returned.
   */
  eventsWritten: boolean;
}

export async function rowStep(db: Db, input: RowStepInput): Promise<RowStep> {
  const { tableId, rowId, finish, claim } = input;
  const spec = finish ? terminalSpec(rowId, finish.groupId, finish.ref, finish.end) : undefined;
  const fin = spec ? sql`${transitionCtes(spec, "fin")},` : sql``;
  // One insert, ordered: the finished cell's event before the claimed one's, so a reader
  // of the stream never sees the row's next cell running before its last one ended.
  const finEvent = spec
    ? sql`select 1 as ord, table_id, ${transitionEventData(spec)} as data from fin_upd union all`
    : sql``;
  const candidate = claim
    ? sql`select c.group_id from cells c join tables t on t.id = ${tableId}
           where t.schema_version = ${claim.schemaVersion} and c.row_id = ${rowId} and ${queuedOnRow("c")}
           order by array_position(${textArray(claim.order)}, c.group_id) nulls last, c.queued_at, c.group_id
           limit 1`
    : sql`select null::text as group_id where false`;
  // One statement, so one transaction: a deadlock with a Stop (which locks the row's cells
  // in group id order, this step in dependency order) rolls it back whole; run it again.
  const [row] = await retryOnConflict(() =>
    queryRows<
      Omit<CascadeStep, "data"> & {
        data: Record<string, unknown> | null;
        tableFound: boolean;
        finishedCount: number;
        finishCurrent: CellStatus | null;
        claimed: ClaimedCell | null;
        eventsWritten: number;
      }
    >(
      db,
      sql`with ${fin}
        cand as (${candidate}),
        clm as (
          update cells c set ${claimSet(claim?.runId ?? null)}, updated_at = now()
            from cand
           where c.row_id = ${rowId} and c.group_id = cand.group_id and ${queuedOnRow("c")}
          returning c.table_id, c.row_id, c.group_id, c.status, c.outcome, c.execution_id, c.error,
                    c.running_block_ids, c.block_errors, c.dispatch_id, c.attempt),
        ev as (
          insert into events (table_id, kind, data)
          select table_id, 'cell', data
            from (${finEvent} select 2 as ord, table_id, ${cellEventData} as data from clm) x
           order by ord
          returning table_id)
        select ${finish ? sql`` : sql`set_config('synchronous_commit', 'off', true) as async,`}
               t.id is not null as "tableFound", t.workspace_id as "workspaceId",
               ${creditsUsedThisMonth} as "creditsUsed", t.schema, t.schema_version as "schemaVersion", w.plan, r.data,
               coalesce((select jsonb_object_agg(wf.id, jsonb_build_object(
                          'updatedAt', extract(epoch from wf.updated_at)::text, 'deployed', wf.deployed_version))
                           from workflows wf
                          where wf.id in (select g->>'workflowId' from jsonb_array_elements(t.schema->'groups') g)),
                        '{}'::jsonb) as workflows,
               coalesce((select jsonb_agg(jsonb_build_object('groupId', c.group_id, 'executionId', c.execution_id,
                                                             'dispatchId', c.dispatch_id) order by c.queued_at, c.group_id)
                           from cells c where c.row_id = ${rowId} and ${queuedOnRow("c")}), '[]'::jsonb) as queued,
               coalesce((select array_agg(c.group_id) from cells c where c.row_id = ${rowId}), '{}') as present,
               ${finish ? sql`(select count(*) from fin_upd)::int` : sql`0`} as "finishedCount",
               ${finish ? sql`(select status from cells where row_id = ${rowId} and group_id = ${finish.groupId})` : sql`null::text`} as "finishCurrent",
               (select jsonb_build_object('groupId', group_id, 'executionId', execution_id, 'dispatchId', dispatch_id,
                                          'attempt', attempt,
                                          'resumable', exists (select 1 from executions e where e.id = clm.execution_id))
                  from clm) as claimed,
               (select count(*) from ev)::int as "eventsWritten"
          from (select 1) one
          left join tables t on t.id = ${tableId}
          left join workspaces w on w.id = t.workspace_id
          left join rows r on r.id = ${rowId} and r.table_id = t.id`,
      { prepare: true },
    ),
  );
  const finished = finish
    ? lostOutcome(row?.finishedCount ?? 0, row?.finishCurrent ?? null)
    : undefined;
  const claimed = row?.claimed ?? null;
  const eventsWritten = (row?.eventsWritten ?? 0) > 0;
  if (!row?.tableFound) return { step: null, finished, claimed, eventsWritten };
  let data = row.data;
  // The read predates this statement's own writes: apply the outputs it just merged.
  const outputs = finish?.end.finish.outputs;
  if (data && outputs && finished?.ok) {
    data = { ...data };
    for (const [k, v] of Object.entries(outputs)) {
      if (v === null) delete data[k];
      else data[k] = v;
    }
  }
  const step: CascadeStep = {
    workspaceId: row.workspaceId,
    creditsUsed: row.creditsUsed,
    schema: row.schema,
    schemaVersion: row.schemaVersion,
    workflows: row.workflows,
    plan: row.plan,
    data,
    queued: row.queued.filter((c) => c.groupId !== claimed?.groupId),
    present: row.present,
  };
  return { step, finished, claimed, eventsWritten };
}
