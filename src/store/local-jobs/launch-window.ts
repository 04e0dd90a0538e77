/**
 * A run's first window handed out in the caller's transaction, with its carriers' jobs: the
 * window slides (`cellflow_advance_dispatch`, as store/dispatches/advance.ts does) and each
 * row it hands out gets its job in graphile-worker's queue (its own `add_jobs`, what its
 * `addJobs` sends; the schema must exist: the backend migrates it first) in one statement. The Run request's last stamping page calls it under the run's locked row, so
 * the stamp → running path pays one round trip for both, and the jobs exist only if the
 * page commits. Not retried here: a deadlock rolled back the caller's whole transaction,
 * which its owner runs again.
 *
 * Each row's job is `job.template` with the row's id (as JSON escapes it) where
 * `job.placeholder` stands in its JSON text: the caller builds it from the carrier's spec
 * (backends/port.ts), so the job's key and payload have one source, whatever this SQL
 * knows of them.
 */

import { type Db, queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import { type Advance, QUEUED_GRACE_MS } from "../dispatches/advance";
/** One job as `graphile_worker.job_spec` reads it. */
export interface LocalJob {
  identifier: string;
  payload: unknown;
  job_key: string;
  max_attempts: number;
  /** ISO time; absent: now. */
  run_at?: string;
}

export interface RowJob {
  template: LocalJob;
  /** Stands for the row id in the template; made of characters JSON writes as they are. */
  placeholder: string;
}

export async function advanceWithLocalJobs(
  tx: Db,
  dispatchId: string,
  job: RowJob,
): Promise<Advance> {
  const [step] = await queryRows<{ row_ids: string[] | null; completed: boolean; jobs: number }>(
    tx,
    sql`with a as materialized (
          select row_ids, completed from cellflow_advance_dispatch(${dispatchId}, null, ${QUEUED_GRACE_MS})
        ),
        j as (
          -- Not called for an empty window: add_jobs would still wake a worker for nothing.
          select count(*)::int as n
            from a cross join lateral graphile_worker.add_jobs(
              array(select json_populate_record(null::graphile_worker.job_spec,
                                                replace(${JSON.stringify(job.template)}::text, ${job.placeholder},
                                                        left(right(to_json(x.id)::text, -1), -1))::json)
                      from unnest(a.row_ids) with ordinality as x(id, ord)
                     order by x.ord),
              true) as added  -- a row's job already waiting keeps its run time
           where coalesce(cardinality(a.row_ids), 0) > 0
        )
        select a.row_ids, a.completed, (select n from j) as jobs from a`,
    { prepare: true },
  );
  return { rowIds: step?.row_ids ?? [], completed: step?.completed ?? false };
}
