/**
 * A sub-workflow run's end, and the sweep of the ones an attempt left running. Invariant:
 * an end is written once, over a `running` record only (a record the sweep closed stays
 * closed), and the sweep touches nothing but `running` records of the attempts it names.
 */
import type { Db } from "@db/client";
import { queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import type { ChildRunEnd, ChildRunStatus } from "@/domain/statuses";
import { jsonb } from "../sql";
import type { ChildRunRef } from "./start";

export async function finishChildRun(db: Db, ref: ChildRunRef, end: ChildRunEnd): Promise<void> {
  const status: Exclude<ChildRunStatus, "running"> = end.status;
  await queryRows(
    db,
    sql`update child_runs
           set status = ${status}, ended_at = now(),
               output = ${end.status === "completed" ? jsonb(end.output ?? null) : sql`null`},
               error = ${end.status === "error" ? end.error : null}
         where id = ${ref.id} and attempt = ${ref.attempt} and execution_id = ${ref.executionId}
           and status = 'running'`,
  );
}

/**
 * Children still `running` under an execution's attempt(s) that can no longer end them:
 * `attempt` itself once it ended (a Stop, a halt, a lost cell), or `before` it, when a
 * new attempt starts (the earlier one's worker died). They end `cancelled`.
 */
export async function sweepChildRuns(
  db: Db,
  q: { executionId: string; attempt: number; scope: "this" | "before" },
): Promise<number> {
  const which = q.scope === "this" ? sql`attempt = ${q.attempt}` : sql`attempt < ${q.attempt}`;
  const rows = await queryRows<{ one: number }>(
    db,
    sql`update child_runs set status = 'cancelled', ended_at = now()
         where execution_id = ${q.executionId} and ${which} and status = 'running'
        returning 1 as one`,
  );
  return rows.length;
}
