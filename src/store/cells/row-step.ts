/**
 * One cascade step of a row carrier in one round trip: the previous attempt's terminal
 * write (guarded like every transition), the claim of the row's next queued cell, and
 * the fresh read the carrier decides on; and the steps of many carriers (of different
 * rows) in one statement, so one round trip and one commit serve them all (see
 * engine/step-batcher.ts). Each step keeps its own guards: a step whose terminal write
 * or claim loses its race loses only that, and learns why. Invariants: this claim is the
 * only way a cell enters `running` (the attempt's number counts up here, and fences every
 * write of the attempt); it is made only under the schema version whose group order the
 * caller passed (with no order, or after a schema edit, it claims nothing and the caller
 * steps again under the fresh read's order); it is a guarded queued → running UPDATE, so
 * a Stop that committed first wins, and a cell a large Stop's scope covers is never claimed
 * (the scope lock and a fresh read, see the claim's CTE); the read is the statement's snapshot, taken before
 * both writes, so the caller applies the finished outputs to the row data itself.
 *
 * Durability: a batch commits asynchronously (no wait for the WAL flush) unless a terminal
 * write in it settles a charge (`waitsForFlush`). Only a database crash loses such a
 * commit, and then only the last few hundred milliseconds of WAL (wal_writer_delay), as a
 * suffix: WAL is flushed in order, so every synchronous commit that returned (a Stop, a
 * charge's batch, a job's completion, the sequencer that makes events visible to streams,
 * the destinations' drain before any send) made everything committed before it durable
 * first. What the lost suffix held reverts together: a claim lost leaves its cell queued
 * (re-driven like any queued cell); a terminal write lost leaves its cell `running` with
 * its attempt, its row lock gone with the crashed sessions, the very state a crash
 * mid-attempt leaves, so the re-drive hands it back to the queue and it runs again (at
 * least once, as an attempt cut off by a crash already is; a released credit reservation
 * comes back with the running cell and is released when it leaves it again). A charge
 * never rides an asynchronous commit: what a customer was billed for is on disk before
 * the carrier goes on.
 */

import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { retryOnConflict } from "@db/sqlstate";
import { type SQL, sql } from "drizzle-orm";
import type { CellStatus } from "@/domain/statuses";
import { type CascadeStep, creditsCommitted } from "../engine-reads";
import { claimableOnRow, queuedOnRow } from "../sql";
import { settleCtes } from "../usage/settle";
import type { Terminal } from "./finish";
import { type AttemptRef, cellEventData, lostOutcome, type TransitionOutcome } from "./transition";

export interface RowStepInput {
  tableId: string;
  rowId: string;
  /** The terminal write of the attempt that just ended, if any. */
  finish?: { groupId: string; ref: AttemptRef; end: Terminal };
  /** Claim the next queued cell in this group order, if the schema is still this version. */
  claim?: { schemaVersion: number; order: readonly string[]; runId: string | null };
  /**
   * The schema version whose parsed schema the caller holds: while the table is still at
   * it, the read leaves the schema out (null). A table's schema is the largest thing a
   * step reads, and it is the same at every step until the schema is edited.
   */
  knownSchemaVersion?: number;
}

export interface ClaimedCell {
  groupId: string;
  executionId: string;
  /** The claim's attempt number: the fence of this attempt's writes. */
  attempt: number;
  dispatchId: string | null;
  /** From its stamp (or its last hand-back to the queue) to this claim (the metrics' stamp → running). */
  queuedSeconds: number;
  /**
   * An earlier attempt of this execution recorded state (checkpoints, steps, a pause), or
   * the execution resumes another (its stamp made its `executions` row).
   */
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

/**
 * What a claim sets: a fresh attempt with nothing of the last one left on the cell, and
 * the task run carrying it (a Stop cancels that run). `attempt` counts up: it is the
 * new attempt's number, which fences its writes. The new attempt has reserved no credits
 * yet (whatever the last one held was released when the cell left it).
 */
function claimSet(runId: SQL): SQL {
  return sql`status = 'running', started_at = now(), attempt = attempt + 1, run_id = ${runId},
             running_block_ids = '{}', block_errors = '{}'::jsonb, outcome = null, error = null,
             credits_held = false`;
}

/** One step as the statement reads it: a record of `jsonb_to_recordset`. */
function stepItem(i: number, input: RowStepInput) {
  const f = input.finish;
  const outputs = f?.end.finish.outputs;
  return {
    i,
    table_id: input.tableId,
    row_id: input.rowId,
    fin_group: f?.groupId ?? null,
    fin_exec: f?.ref.executionId ?? null,
    fin_attempt: f?.ref.attempt ?? null,
    fin_status: f ? (f.end.kind === "complete" ? "completed" : "error") : null,
    fin_outcome: f?.end.kind === "complete" ? f.end.outcome : null,
    fin_error: f?.end.kind === "fail" ? f.end.message : null,
    fin_block_errors: f?.end.finish.blockErrors ?? null,
    fin_details: f?.end.finish.details ?? null,
    fin_charges: f?.end.kind === "complete" ? (f.end.finish.charges ?? null) : null,
    // Outputs merge into the row: a null clears its column.
    fin_outputs: outputs ?? null,
    fin_set: outputs
      ? Object.fromEntries(Object.entries(outputs).filter(([, v]) => v !== null))
      : null,
    fin_clear: outputs ? Object.keys(outputs).filter((k) => outputs[k] === null) : null,
    claim_version: input.claim?.schemaVersion ?? null,
    claim_order: input.claim ? [...input.claim.order] : null,
    run_id: input.claim?.runId ?? null,
    known_schema: input.knownSchemaVersion ?? null,
  };
}

type StepRow = Omit<CascadeStep, "data"> & {
  i: number;
  data: Record<string, unknown> | null;
  tableFound: boolean;
  finishedCount: number;
  finishCurrent: CellStatus | null;
  claimed: ClaimedCell | null;
};

export async function rowStep(db: Db, input: RowStepInput): Promise<RowStep> {
  const [step] = await rowSteps(db, [input]);
  if (!step) throw new Error("a row step returned no result");
  return step;
}

/**
 * Whether a batch's commit waits for the WAL flush: only when a terminal write in it settles
 * a charge (see the header); claims and terminal writes without one commit asynchronously.
 */
export function waitsForFlush(inputs: readonly RowStepInput[]): boolean {
  return inputs.some(
    (input) =>
      input.finish?.end.kind === "complete" && (input.finish.end.finish.charges?.length ?? 0) > 0,
  );
}

/**
 * The steps of several rows (each row at most once: a carrier holds its row's lock) in
 * one statement. Results come back in the order of `inputs`.
 */
export async function rowSteps(db: Db, inputs: readonly RowStepInput[]): Promise<RowStep[]> {
  if (inputs.length === 0) return [];
  const items = JSON.stringify(inputs.map((input, i) => stepItem(i, input)));
  // Every read and write of cells and rows also names the batch's rows as an array: the
  // generic plan cannot tell how many records the JSON holds (it guesses 100), and joined
  // on that guess alone it scanned whole tables instead of probing their keys.
  const rids = sql`${sql.param(inputs.map((input) => input.rowId))}::text[]`;
  // Status tests on a row's cells are written as text (queuedOnRow) so the generic plan
  // reads them off the primary key, never off the window's partial index.
  // One statement, so one transaction: a deadlock with a Stop (which locks the row's cells
  // in group id order, this step in dependency order) rolls it back whole; run it again.
  // The answers the terminal writes that won recorded have their reservations charged. Only
  // where a terminal write carries one: data-modifying CTEs run (and are planned) whether or
  // not anything reads them, and most batches settle nothing. Such a batch is also the
  // only one that waits for the WAL flush (see the header).
  const charged = waitsForFlush(inputs);
  const settled = charged
    ? sql`${settleCtes(
        sql`select k."chargeId" as charge_id, k.source, k.milli, u.execution_id as cell_execution_id, u.attempt
              from fin_upd u join inp on inp.i = u.i
             cross join jsonb_to_recordset(coalesce(inp.fin_charges, '[]'::jsonb)) as k("chargeId" text, source text, milli bigint)`,
        "fin",
      )},
        `
    : sql``;
  const rows = await retryOnConflict(() =>
    queryRows<StepRow>(
      db,
      sql`with inp as (
          -- A claim holds the table's scope lock (shared) from here, before it locks any cell:
          -- a large Stop recording its scope waits for it, or it waits for the Stop and then
          -- sees the scope (cellflow_covered_now below). Migration \`cancel_scope_covered\`.
          select x.*, case when x.claim_version is not null then cellflow_scope_lock_shared(x.table_id) end as scope_locked
            from jsonb_to_recordset(${items}::jsonb) as x(
            i int, table_id text, row_id text,
            fin_group text, fin_exec text, fin_attempt int, fin_status text, fin_outcome text, fin_error text,
            fin_block_errors jsonb, fin_details jsonb, fin_charges jsonb, fin_outputs jsonb, fin_set jsonb, fin_clear text[],
            claim_version int, claim_order text[], run_id text, known_schema int)),
        -- Per table of the batch, not per step: the workflows its groups name (when each
        -- draft changed, its deployed version), read once off the statement's one snapshot,
        -- so every step of the table gets the same answer its own read would have given.
        tw as materialized (
          select t.id as table_id,
                 (select jsonb_object_agg(wf.id, jsonb_build_object(
                           'updatedAt', extract(epoch from wf.updated_at)::text, 'deployed', wf.deployed_version))
                    from workflows wf
                   where wf.id in (select g->>'workflowId' from jsonb_array_elements(t.schema->'groups') g)) as workflows
            from tables t where t.id in (select inp.table_id from inp)),
        fin_upd as (
          update cells c
             set status = inp.fin_status::cell_status, outcome = inp.fin_outcome::cell_outcome,
                 error = inp.fin_error, finished_at = now(), running_block_ids = '{}',
                 block_errors = inp.fin_block_errors, details = coalesce(inp.fin_details, c.details),
                 updated_at = now()
            from inp
           where c.row_id = any(${rids}) and inp.fin_group is not null
             and c.row_id = inp.row_id and c.group_id = inp.fin_group
             and c.status::text = 'running' and c.execution_id = inp.fin_exec and c.attempt = inp.fin_attempt
          returning inp.i, inp.fin_outputs, inp.fin_set, inp.fin_clear, c.table_id, c.row_id, c.group_id,
                    c.status, c.outcome, c.execution_id, c.error, c.running_block_ids, c.block_errors, c.attempt,
                    c.details -> 'winner' as fin_step),
        fin_merged as (
          update rows r set data = (r.data || u.fin_set) - u.fin_clear, updated_at = now()
            from fin_upd u
           where r.id = any(${rids}) and r.id = u.row_id and u.fin_outputs is not null
          returning r.id),
        ${settled}-- The runs of the claims' tables that have a large Stop's scope, read once with a fresh
        -- snapshot after every claim of the batch took its table's scope lock (the array reads
        -- all of inp first). Only a cell of one of these runs pays for the per-cell fresh read
        -- below. Migration \`scoped_runs_now\`.
        scoped as materialized (
          select cellflow_scoped_runs_now(array(select distinct inp.table_id from inp where inp.scope_locked)) as runs),
        -- Materialized: inlined, its subquery ran once per reference (three times a step).
        cand as materialized (
          select inp.i, inp.row_id, inp.run_id,
                 (select c.group_id from cells c join tables t on t.id = inp.table_id
                   where t.schema_version = inp.claim_version and c.row_id = inp.row_id and ${claimableOnRow("c")}
                   order by array_position(inp.claim_order, c.group_id) nulls last, c.queued_at, c.group_id
                   limit 1) as group_id
            from inp where inp.claim_version is not null),
        clm as (
          update cells c set ${claimSet(sql`cand.run_id`)}, updated_at = now()
            from cand
           where c.row_id = any(${rids}) and cand.group_id is not null
             and c.row_id = cand.row_id and c.group_id = cand.group_id
             and ${queuedOnRow("c")}
             -- Read with a fresh snapshot, under the scope lock: a Stop that committed while
             -- this statement ran is seen, so a covered cell is never claimed.
             and (c.dispatch_id is null or c.dispatch_id <> all(coalesce((select scoped.runs from scoped), '{}'::text[]))
                  or not cellflow_covered_now(c.dispatch_id, c.row_id, c.group_id))
          returning cand.i, c.table_id, c.row_id, c.group_id, c.status, c.outcome, c.execution_id, c.error,
                    c.running_block_ids, c.block_errors, c.dispatch_id, c.attempt, c.queued_at),
        -- One insert, ordered: a row's finished cell's event before its claimed one's, so a
        -- reader of the stream never sees the row's next cell running before its last one ended.
        ev as (
          insert into events (table_id, kind, data)
          select table_id, 'cell', data
            from (select i, 1 as ord, table_id,
                         ${cellEventData} || case when fin_outputs is null then '{}'::jsonb
                                                  else jsonb_build_object('outputs', fin_outputs) end
                                          -- A waterfall's winning step, for the grid to show.
                                          || case when jsonb_typeof(fin_step) = 'number'
                                                  then jsonb_build_object('winningStep', fin_step)
                                                  else '{}'::jsonb end as data
                    from fin_upd
                  union all
                  select i, 2 as ord, table_id, ${cellEventData} as data from clm) x
           order by i, ord
          returning table_id)
        select ${charged ? sql`` : sql`set_config('synchronous_commit', 'off', true) as async,`}
               inp.i, t.id is not null as "tableFound", t.workspace_id as "workspaceId",
               ${creditsCommitted} as "creditsCommitted",
               case when t.schema_version is distinct from inp.known_schema then t.schema end as schema,
               t.schema_version as "schemaVersion", w.plan, r.data,
               coalesce((select tw.workflows from tw where tw.table_id = t.id), '{}'::jsonb) as workflows,
               coalesce(rc.queued, '[]'::jsonb) as queued, coalesce(rc.present, '{}') as present,
               (select count(*) from fin_upd u where u.i = inp.i)::int as "finishedCount",
               (select c.status from cells c where inp.fin_group is not null
                   and c.row_id = inp.row_id and c.group_id = inp.fin_group) as "finishCurrent",
               (select jsonb_build_object('groupId', group_id, 'executionId', execution_id, 'dispatchId', dispatch_id,
                                          'attempt', attempt,
                                          'queuedSeconds', extract(epoch from now() - clm.queued_at),
                                          'resumable', exists (select 1 from executions e where e.id = clm.execution_id)
                                                       or exists (select 1 from execution_steps s where s.execution_id = clm.execution_id))
                  from clm where clm.i = inp.i) as claimed
          from inp
          left join tables t on t.id = inp.table_id
          left join workspaces w on w.id = t.workspace_id
          left join rows r on r.id = any(${rids}) and r.id = inp.row_id and r.table_id = t.id
          -- The row's cells read once for both: the groups present, and the claimable ones.
          left join lateral (
            select jsonb_agg(jsonb_build_object('groupId', c.group_id, 'executionId', c.execution_id,
                                                'dispatchId', c.dispatch_id) order by c.queued_at, c.group_id)
                     filter (where ${claimableOnRow("c")}) as queued,
                   array_agg(c.group_id) as present
              from cells c where c.row_id = inp.row_id) rc on true
         order by inp.i`,
      { prepare: true },
    ),
  );
  return inputs.map((input, i) =>
    stepResult(
      input,
      rows.find((r) => r.i === i),
    ),
  );
}

function stepResult(input: RowStepInput, row: StepRow | undefined): RowStep {
  const { finish } = input;
  const finished = finish
    ? lostOutcome(row?.finishedCount ?? 0, row?.finishCurrent ?? null)
    : undefined;
  const claimed = row?.claimed ?? null;
  // Each write of the step appended its event: a finished cell, a claimed one.
  const eventsWritten = (row?.finishedCount ?? 0) > 0 || claimed !== null;
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
    creditsCommitted: row.creditsCommitted,
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
