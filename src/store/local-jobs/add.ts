/**
 * Jobs added to graphile-worker's queue (the local task backend's, in the engine's own
 * database) in the caller's transaction: its own `add_jobs`, the statement its `addJobs`
 * sends, so the jobs exist only if that transaction commits, and graphile-worker's NOTIFY
 * to its runners is delivered at that commit. The schema must exist (graphile-worker
 * migrates it; the backend does that first).
 */

import { type Db, queryRows } from "@db/client";
import { sql } from "drizzle-orm";

/** One job as `graphile_worker.job_spec` reads it. */
export interface LocalJob {
  identifier: string;
  payload: unknown;
  job_key: string;
  max_attempts: number;
  /** ISO time; absent: now. */
  run_at?: string;
}

/** `preserveRunAt`: a job key already waiting keeps its run time (graphile-worker's flag). */
export async function addLocalJobs(
  tx: Db,
  jobs: readonly LocalJob[],
  preserveRunAt: boolean,
): Promise<void> {
  if (jobs.length === 0) return;
  await queryRows(
    tx,
    sql`select count(*)::int as n from graphile_worker.add_jobs(
          array(select json_populate_recordset(null::graphile_worker.job_spec, ${JSON.stringify(jobs)}::json)),
          ${preserveRunAt}::boolean)`,
  );
}
